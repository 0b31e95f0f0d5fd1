package daemon

import (
	"context"
	"encoding/json"
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
)

// memPublisher is an in-memory publisher: every message, in order.
type memPublisher struct {
	mu   sync.Mutex
	msgs []memMsg
}

type memMsg struct {
	camera, kind, id string
	data             []byte
}

func (m *memPublisher) publish(_ context.Context, camera, kind, id string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.msgs = append(m.msgs, memMsg{camera, kind, id, b})
	m.mu.Unlock()
	return nil
}

// of returns the messages of one kind.
func (m *memPublisher) of(kind string) []memMsg {
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
	src, err := newSource(cc, cameraPre(cc, p, &stream.Thumbnailer{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	mem := &memPublisher{}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c := &camera{cfg: cc, all: cfg, src: src, log: log, bus: mem, preset: p, trainTime: noObserver{},
		dir: t.TempDir(), rec: newRecord()}
	c.alerts = newAlerter(cc.Name, cfg.Alerts, nil)
	ctx, cancel := context.WithCancel(context.Background())
	c.start(ctx)
	deadline := time.Now().Add(60 * time.Second)
	for len(mem.of(KindEstimate)) < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	stopCtx, stopCancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer stopCancel()
	c.stop(stopCtx)

	ests := mem.of(KindEstimate)
	if len(ests) < 3 {
		t.Fatalf("%d certified estimates in 60 s, want 3", len(ests))
	}
	g1, g0 := sim.GroundTruth(sim.Regime(cc.Source.Synthetic.Regime))
	false0 := 0
	for _, m := range ests {
		var e Estimate
		if err := json.Unmarshal(m.data, &e); err != nil {
			t.Fatal(err)
		}
		if !e.Certified || m.camera != cc.Name {
			t.Errorf("estimate %s: certified %v, camera %q", m.id, e.Certified, m.camera)
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
	for _, m := range mem.of(KindDiagnostic) {
		var d Diagnostic
		if err := json.Unmarshal(m.data, &d); err != nil {
			t.Fatal(err)
		}
		if d.Verdict == "skipped" {
			skipped++
		} else {
			estimated++
		}
	}
	t.Logf("%d estimates (%d false certificates), %d windows estimated, %d skipped, %d status messages",
		len(ests), false0, estimated, skipped, len(mem.of(KindStatus)))
	if estimated < len(ests) || skipped == 0 || int64(skipped) > c.skipped.Load() {
		t.Errorf("diagnostics: %d estimated, %d skipped reported of %d skipped; want one per estimated window and the skipped ones reported",
			estimated, skipped, c.skipped.Load())
	}
	if len(mem.of(KindStatus)) == 0 {
		t.Error("no status message at stop")
	}
}

// The daemon's default certificate is the certificate's own: the config's
// zero limits reach window.Thresholds as zeros, which it resolves.
func TestCertifyDefaultsAreTheCertificates(t *testing.T) {
	if got, want := thresholds(config.Default().Certify).Resolved(), (window.Thresholds{}).Resolved(); got != want {
		t.Errorf("daemon thresholds %+v, certificate's defaults %+v", got, want)
	}
}
