package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
)

// memPublisher is an in-memory publisher: every message, in order.
type memPublisher struct {
	mu   sync.Mutex
	msgs []memMsg
}

type memMsg struct {
	camera string
	kind   wire.Kind
	id     string
	data   []byte
}

func (m *memPublisher) publish(_ context.Context, msg wire.Message) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.msgs = append(m.msgs, memMsg{msg.Key(), msg.Kind(), msg.ID(), b})
	m.mu.Unlock()
	return nil
}

// of returns the messages of one kind.
func (m *memPublisher) of(kind wire.Kind) []memMsg {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []memMsg
	for _, x := range m.msgs {
		if x.kind == kind {
			out = append(out, x)
		}
	}
	return out
}

type noObserver struct{}

func (noObserver) Observe(float64) {}

// The camera's pipeline — source, windows, learning and certificate,
// reporting — runs against an in-memory publisher, without NATS: the
// default synthetic pendulum, rendered as fast as it can be (so that the
// learner falls behind and windows are skipped), publishes certified
// estimates within the accuracy bar, a diagnostic for every window it
// estimated or skipped (reported by the reporting stage, not from the
// frame path), and its status when it stops.
func TestPipelineInMemoryPublisher(t *testing.T) {
	cfg := testConfig()
	cc := cfg.Cameras[0]
	cc.Source.Synthetic.Realtime = false
	p, err := estimator.LookupPreset(cfg.Estimator.Preset)
	if err != nil {
		t.Fatal(err)
	}
	src, err := newSource(cc, cameraPre(cc, p, &stream.Thumbnailer{}), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	mem := &memPublisher{}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s := lineSpecOf(cfg, cc, p, src, t.TempDir(), nil)
	s.log = log
	l := newLine(s, shared{bus: mem, trainTime: noObserver{}}, nil)
	c := newCamera(cc, src, log, nil, &l.count, &l.work, nil)
	l.attachTo(c)
	l.feed = c.attach(l.key())
	ctx, cancel := context.WithCancel(context.Background())
	l.start(ctx)
	c.start(ctx)
	deadline := time.Now().Add(60 * time.Second)
	for len(mem.of(wire.KindEstimate)) < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer stopCancel()
	c.stop(stopCtx)
	l.stop(stopCtx)

	ests := mem.of(wire.KindEstimate)
	if len(ests) < 3 {
		t.Fatalf("%d certified estimates in 60 s, want 3", len(ests))
	}
	g1, g0 := sim.GroundTruth(sim.Regime(cc.Source.Synthetic.Regime))
	false0 := 0
	for _, m := range ests {
		var e wire.Estimate
		if err := json.Unmarshal(m.data, &e); err != nil {
			t.Fatal(err)
		}
		if !e.Certified || m.camera != cc.Name {
			t.Errorf("estimate %s: certified %v, camera %q", m.id, e.Certified, m.camera)
		}
		// The ids camera.go built before wire: JetStream deduplicates by them.
		if want := wire.MsgID("", cc.Name, "estimate", e.WindowStart, e.WindowEnd); m.id != want {
			t.Errorf("estimate id %s, want %s", m.id, want)
		}
		if err := preciseEnough(&e); err != nil {
			t.Errorf("estimate %s: %v", m.id, err)
		}
		if math.Abs(e.Gamma0-g0) > 0.02*g0 || math.Abs(e.Gamma1-g1) > 0.02 {
			false0++
			t.Errorf("false certificate %s: γ0 %.4f γ1 %.4f, truth %.4f %.4f", m.id, e.Gamma0, e.Gamma1, g0, g1)
		}
	}
	var estimated, skipped int
	for _, m := range mem.of(wire.KindDiagnostic) {
		var d wire.Diagnostic
		if err := json.Unmarshal(m.data, &d); err != nil {
			t.Fatal(err)
		}
		if want := wire.MsgID("", cc.Name, "diag-window", d.WindowStart, d.WindowEnd); m.id != want {
			t.Errorf("diagnostic id %s, want %s", m.id, want)
		}
		if d.Verdict == "skipped" {
			skipped++
		} else {
			estimated++
		}
	}
	t.Logf("%d estimates (%d false certificates), %d windows estimated, %d skipped, %d status messages",
		len(ests), false0, estimated, skipped, len(mem.of(wire.KindStatus)))
	if estimated < len(ests) || skipped == 0 || int64(skipped) > l.count.skipped.Load() {
		t.Errorf("diagnostics: %d estimated, %d skipped reported of %d skipped; want one per estimated window and the skipped ones reported",
			estimated, skipped, l.count.skipped.Load())
	}
	if len(mem.of(wire.KindStatus)) == 0 {
		t.Error("no status message at stop")
	}
	for _, m := range mem.of(wire.KindStatus) {
		var st wire.Status
		if err := json.Unmarshal(m.data, &st); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("%s.status.%d", cc.Name, st.Time.UnixNano()); m.id != want {
			t.Errorf("status id %s, want %s", m.id, want)
		}
	}
}

// The daemon's default certificate is the certificate's own: the config's
// zero limits reach window.Thresholds as zeros, which it resolves.
func TestCertifyDefaultsAreTheCertificates(t *testing.T) {
	if got, want := thresholds(config.Default().Certify).Resolved(), (window.Thresholds{}).Resolved(); got != want {
		t.Errorf("daemon thresholds %+v, certificate's defaults %+v", got, want)
	}
}
