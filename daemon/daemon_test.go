package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/physd/physd/config"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/wire"
)

// testConfig is the default configuration on a random loopback port.
func testConfig() *config.Config {
	cfg := config.Default()
	cfg.NATS.Embedded.Listen = "127.0.0.1:0"
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.NATS.Heartbeat = time.Second
	return cfg
}

// running is a daemon started by a test, stopped by the test.
type running struct {
	d      *Daemon
	cancel context.CancelFunc
	done   chan error
}

func start(t *testing.T, cfg *config.Config, dir string) *running {
	t.Helper()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	d, err := New(cfg, Options{StateDir: dir, Logger: log, ShutdownTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{d: d, cancel: cancel, done: make(chan error, 1)}
	ready := make(chan struct{})
	go func() { r.done <- d.Run(ctx, func() { close(ready) }) }()
	select {
	case <-ready:
	case err := <-r.done:
		t.Fatalf("daemon exited at start: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("daemon did not become ready in 30 s")
	}
	t.Cleanup(r.stop)
	return r
}

func (r *running) stop() {
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// collector subscribes to everything under physd.> and keeps the messages.
type collector struct {
	mu   sync.Mutex
	msgs []*nats.Msg
	nc   *nats.Conn
}

// collect subscribes to everything d publishes, as a local subscriber:
// with the embedded server's read-only credentials.
func collect(t *testing.T, d *Daemon) *collector {
	t.Helper()
	auth, err := d.SubscriberOptions()
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(d.NATSURL(), append(auth, nats.Timeout(5*time.Second))...)
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{nc: nc}
	if _, err := nc.Subscribe("physd.>", func(m *nats.Msg) {
		c.mu.Lock()
		c.msgs = append(c.msgs, m)
		c.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return c
}

func (c *collector) kind(kind wire.Kind) []*nats.Msg {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*nats.Msg
	for _, m := range c.msgs {
		if _, _, k, err := wire.ParseSubject("physd", m.Subject); err == nil && k == kind {
			out = append(out, m)
		}
	}
	return out
}

// waitFor polls until cond holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// preciseEnough reports a published estimate that the paper's conditions
// do not identify or whose σ is beyond the precision limits its
// certificate names: none may be published.
func preciseEnough(e *wire.Estimate) error {
	pr := e.Certificate.Precision
	switch {
	case !e.Certificate.Identified || !pr.Holds:
		return fmt.Errorf("published without identification (%v) or precision (%+v)", e.Certificate.Identified, pr)
	case !(pr.LimitFn > 0) || !(e.FnSigma <= pr.LimitFn*e.Fn*(1+1e-9)) || !(e.ZetaSigma <= pr.LimitZeta*(1+1e-9)):
		return fmt.Errorf("published with σ(f_n) %.3g of f_n %.4g Hz and σ(ζ) %.3g beyond the limits %+v", e.FnSigma, e.Fn, e.ZetaSigma, pr)
	}
	return nil
}

func estimates(t *testing.T, c *collector) []*wire.Estimate {
	var out []*wire.Estimate
	for _, m := range c.kind(wire.KindEstimate) {
		e, err := wire.DecodeEstimate(m.Data)
		if err != nil {
			t.Fatalf("%s: %v", m.Subject, err)
		}
		if m.Header.Get(nats.MsgIdHdr) == "" {
			t.Errorf("%s: no Nats-Msg-Id", m.Subject)
		}
		if err := preciseEnough(e); err != nil {
			t.Errorf("%s: %v", m.Subject, err)
		}
		out = append(out, e)
	}
	return out
}

// TestSyntheticCameraEndToEnd runs the default configuration (embedded
// NATS, synthetic underdamped pendulum in real time), checks that a
// subscriber receives certified estimates within the estimator's accuracy
// with their diagnostics and heartbeats, then restarts the daemon on the
// same state directory: the restored encoder certifies without a cold
// start.
func TestSyntheticCameraEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon for tens of seconds")
	}
	dir := t.TempDir()
	cfg := testConfig()
	r := start(t, cfg, dir)
	c := collect(t, r.d)
	waitFor(t, 90*time.Second, "two certified estimates", func() bool { return len(c.kind(wire.KindEstimate)) >= 2 })
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	for _, e := range estimates(t, c) {
		t.Logf("estimate %s–%s γ0 %.5f ± %.5f γ1 %.5f ± %.5f f_n %.4f ζ %.4f encoder %+v", e.WindowStart.Format(time.StampMilli), e.WindowEnd.Format(time.StampMilli),
			e.Gamma0, e.Gamma0Sigma, e.Gamma1, e.Gamma1Sigma, e.Fn, e.Zeta, e.Encoder)
		if !e.Certified || e.Certificate.Status != "certified" || math.Abs(e.Gamma0-g0) > 0.005*g0 || math.Abs(e.Gamma1-g1) > 0.004 {
			t.Errorf("estimate γ0 %.5f γ1 %.5f certified %v: want (%.4f, %.4f)", e.Gamma0, e.Gamma1, e.Certified, g0, g1)
		}
		// 95 camera frames a window, binned by 2 (windows.bin: auto) after
		// the first certificate.
		if e.Camera != "pendulum" || !e.WindowEnd.After(e.WindowStart) || e.Frames*max(e.Bin, 1) < 90 || math.Abs(e.Fn-math.Sqrt(e.Gamma0)/(2*math.Pi)) > 1e-9 {
			t.Errorf("estimate fields: %+v", e)
		}
	}
	waitFor(t, 10*time.Second, "a status heartbeat", func() bool { return len(c.kind(wire.KindStatus)) > 0 })
	diags := c.kind(wire.KindDiagnostic)
	if len(diags) < 2 {
		t.Errorf("%d diagnostics", len(diags))
	}
	var st wire.Status
	if err := json.Unmarshal(c.kind(wire.KindStatus)[0].Data, &st); err != nil || st.Schema != wire.SchemaStatus || st.Frames == 0 {
		t.Errorf("status %+v: %v", st, err)
	}
	r.stop()
	ckpt := filepath.Join(dir, "cameras", "pendulum", "encoder.ckpt")
	if _, err := os.Stat(ckpt); err != nil {
		t.Fatalf("no checkpoint after shutdown: %v", err)
	}

	r2 := start(t, cfg, dir)
	c2 := collect(t, r2.d)
	waitFor(t, 90*time.Second, "a certified estimate after restart", func() bool { return len(c2.kind(wire.KindEstimate)) >= 1 })
	e := estimates(t, c2)[0]
	t.Logf("after restart: encoder %+v", e.Encoder)
	if e.Encoder.Cold || e.Encoder.Version != 1 {
		t.Errorf("after restart the encoder started cold: %+v", e.Encoder)
	}
}

// TestEventsMode streams an overdamped pendulum knocked three times with
// distinct velocities: the multi-trajectory mode certifies the three
// events together, and no single event is ever certified.
func TestEventsMode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon for tens of seconds")
	}
	cfg := testConfig()
	cam := &cfg.Cameras[0]
	cam.Name = "spring"
	cam.Mode = config.ModeEvents
	y := &cam.Source.Synthetic
	y.Regime, y.Z0, y.V0, y.EventEvery = string(sim.RegimeOverdamped), 70, []float64{-200, -600, -1000}, 8*time.Second
	r := start(t, cfg, t.TempDir())
	c := collect(t, r.d)
	defer func() {
		for _, m := range c.kind(wire.KindDiagnostic) {
			t.Logf("%s", m.Data[:min(len(m.Data), 400)])
		}
	}()
	waitFor(t, 90*time.Second, "a certified multi-trajectory estimate", func() bool { return len(c.kind(wire.KindEstimate)) >= 1 })
	g1, g0 := sim.GroundTruth(sim.RegimeOverdamped)
	for _, e := range estimates(t, c) {
		t.Logf("estimate: %d events, γ0 %.4f γ1 %.4f", e.Events, e.Gamma0, e.Gamma1)
		if e.Events < 3 {
			t.Errorf("certified estimate from %d event(s)", e.Events)
		}
		if math.Abs(e.Gamma0-g0) > 0.005*g0 || math.Abs(e.Gamma1-g1) > 0.02*g1 {
			t.Errorf("γ0 %.4f γ1 %.4f, want (%g, %g)", e.Gamma0, e.Gamma1, g0, g1)
		}
	}
	singles := 0
	for _, m := range c.kind(wire.KindDiagnostic) {
		var d wire.Diagnostic
		if err := json.Unmarshal(m.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.Events == 1 && d.Verdict != "skipped" {
			singles++
			if d.Certified {
				t.Errorf("a single event was certified: %+v", d)
			}
		}
	}
	if singles == 0 {
		t.Error("no single-event diagnostics")
	}
}

// TestReloadAndBadCamera reloads the configuration with an extra synthetic
// camera and an unreachable RTSP camera: the new ones start, the running
// camera is not restarted, the broken one reports offline with its error,
// and the others keep receiving frames.
func TestReloadAndBadCamera(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon")
	}
	cfg := testConfig()
	r := start(t, cfg, t.TempDir())
	r.d.mu.Lock()
	before := r.d.cameras["pendulum"]
	r.d.mu.Unlock()

	next := testConfig()
	second := config.DefaultCamera()
	second.Name = "second"
	broken := config.DefaultCamera()
	broken.Name = "broken"
	broken.Source.Kind = config.KindRTSP
	broken.Source.URL = config.NewSecret("rtsp://user:hunter2@127.0.0.1:1/cam")
	broken.Source.Timeout = time.Second
	next.Cameras = append(next.Cameras, second, broken)
	r.d.Reload(next)

	r.d.mu.Lock()
	after := r.d.cameras["pendulum"]
	n := len(r.d.cameras)
	r.d.mu.Unlock()
	if after != before || n != 3 {
		t.Fatalf("after reload: pendulum restarted %v, %d cameras", after != before, n)
	}
	waitFor(t, 30*time.Second, "the broken camera offline and the others streaming", func() bool {
		st := r.d.Statuses()
		return st["broken"].State == "offline" && st["second"].Frames > 20 && st["pendulum"].Frames > 40
	})
	st := r.d.Statuses()["broken"]
	t.Logf("broken camera: %s: %s (source %s)", st.State, st.Error, st.Source)
	if strings.Contains(st.Error, "hunter2") || strings.Contains(st.Source, "hunter2") {
		t.Errorf("credentials leaked into the status: %+v", st)
	}
	// Removing a camera stops it and leaves the others.
	r.d.Reload(testConfig())
	if got := r.d.Statuses(); len(got) != 1 || got["pendulum"].Frames == 0 {
		t.Errorf("after removing: %v", got)
	}
	r.d.mu.Lock()
	still := r.d.cameras["pendulum"]
	r.d.mu.Unlock()
	if still != before {
		t.Error("removing other cameras restarted pendulum")
	}
}
