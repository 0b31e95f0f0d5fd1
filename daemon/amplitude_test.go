package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/flow"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
)

// amplitudeOf carries a window's amplitude into its messages: the pixels
// as measured, millimetres only with a scale, nothing when none was
// measured or it is not a number.
func TestAmplitudeOf(t *testing.T) {
	a := &flow.Amplitude{Px: 2, NoisePx: 0.05, Readout: "flow"}
	if got := amplitudeOf(nil, 1.5); got != nil {
		t.Errorf("no amplitude: %+v", got)
	}
	if got := amplitudeOf(a, 0); got == nil || got.Px != 2 || got.NoisePx != 0.05 || got.Readout != "flow" || got.MM != nil {
		t.Errorf("without a scale: %+v", got)
	}
	got := amplitudeOf(a, 1.5)
	if got == nil || got.MM == nil || *got.MM != 3 || got.NoiseMM == nil || math.Abs(*got.NoiseMM-0.075) > 1e-15 || *got.MMPerPx != 1.5 {
		t.Errorf("with 1.5 mm/px: %+v", got)
	}
	if got := amplitudeOf(&flow.Amplitude{Px: math.NaN(), NoisePx: 0.1}, 1); got != nil {
		t.Errorf("a NaN amplitude would make the message unpublishable: %+v", got)
	}
}

// A certified window with an amplitude is published, estimate and
// diagnostic, with its pixels and, at the line's scale, millimetres; the
// dashboard's card shows it. A window without one carries none, and a
// scale set meanwhile (a reload) reaches the next window.
func TestReportAmplitude(t *testing.T) {
	cfg := testConfig()
	cc := cfg.Cameras[0]
	cc.Scale = config.Scale{Points: [][]float64{{0, 0}, {30, 40}}, DistanceMM: 25} // 0.5 mm/px
	p, err := estimator.LookupPreset(cfg.Estimator.Preset)
	if err != nil {
		t.Fatal(err)
	}
	s := lineSpecOf(cfg, cc, p, nil, t.TempDir(), newCamDash(nil, &stream.Thumbnailer{}, cfg))
	s.log = slog.New(slog.DiscardHandler)
	mem := &memPublisher{}
	l := newLine(s, shared{bus: mem, trainTime: noObserver{}}, nil)
	rp := l.reporter()
	in := make(chan outcome, 2)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := &estimator.Result{Gamma0: 4, Gamma1: 0.08, Sigma0: 0.01, Sigma1: 0.002, Dt: 0.05}
	r.Physics = estimator.Derive(r.Gamma1, r.Gamma0, [2][2]float64{{1e-4, 0}, {0, 4e-6}})
	certified := window.Verdict{Status: window.Certified, Certified: true}
	in <- outcome{job: job{start: now.Add(-5 * time.Second), end: now, frames: 100, clips: make([]estimator.Clip, 1)}, res: r, verdict: certified,
		amp: &flow.Amplitude{Px: 4, NoisePx: 0.1, Readout: "flow"}}
	in <- outcome{job: job{start: now.Add(-4 * time.Second), end: now.Add(time.Second), frames: 100, clips: make([]estimator.Clip, 1)}, res: r, verdict: certified}
	close(in)
	rp.run(context.Background(), in)

	ests, diags := mem.of(wire.KindEstimate), mem.of(wire.KindDiagnostic)
	if len(ests) != 2 || len(diags) != 2 {
		t.Fatalf("%d estimates and %d diagnostics, want 2 and 2", len(ests), len(diags))
	}
	e, err := wire.DecodeEstimate(ests[0].data)
	if err != nil {
		t.Fatal(err)
	}
	want := wire.NewAmplitude(4, 0.1, "flow", 0.5)
	if a := e.Amplitude; a == nil || a.Px != 4 || a.NoisePx != 0.1 || a.MM == nil || *a.MM != 2 || *a.NoiseMM != 0.05 || *a.MMPerPx != 0.5 {
		t.Errorf("estimate amplitude %+v, want %+v: %s", a, want, ests[0].data)
	}
	var d wire.Diagnostic
	if err := json.Unmarshal(diags[0].data, &d); err != nil {
		t.Fatal(err)
	}
	if a := d.Amplitude; a == nil || *a.MM != 2 {
		t.Errorf("diagnostic amplitude %+v, want %+v", a, want)
	}
	if e2, _ := wire.DecodeEstimate(ests[1].data); e2 == nil || e2.Amplitude != nil {
		t.Errorf("a window without an amplitude: %s", ests[1].data)
	}
	card := l.card()
	if card.Amplitude != nil || card.Estimate == nil || card.Estimate.Amplitude != nil {
		t.Errorf("the card after a window without an amplitude: %+v, estimate %+v", card.Amplitude, card.Estimate)
	}

	// A reload's scale reaches the next window, of a line that keeps
	// running; the card shows it.
	d0 := &Daemon{log: slog.New(slog.DiscardHandler), lines: map[string]*line{l.key(): l}}
	next := testConfig()
	next.Cameras[0].Scale = config.Scale{DistanceM: 10, FocalMM: 8, PixelUM: 2.9} // 3.625 mm/px
	d0.applyScales(next)
	in = make(chan outcome, 1)
	in <- outcome{job: job{start: now.Add(-3 * time.Second), end: now.Add(2 * time.Second), frames: 100, clips: make([]estimator.Clip, 1)}, res: r,
		verdict: window.Verdict{Status: window.NotCertified, Reasons: []string{"too little motion"}}, amp: &flow.Amplitude{Px: 0.2, NoisePx: 0.1, Readout: "flow"}}
	close(in)
	rp.run(context.Background(), in)
	diags = mem.of(wire.KindDiagnostic)
	if err := json.Unmarshal(diags[2].data, &d); err != nil {
		t.Fatal(err)
	}
	if a := d.Amplitude; a == nil || a.MMPerPx == nil || *a.MMPerPx != 3.625 || math.Abs(*a.MM-0.725) > 1e-12 {
		t.Errorf("after the reload: %+v, want 0.2 px at 3.625 mm/px", a)
	}
	if a := l.card().Amplitude; a == nil || a.Px != 0.2 || a.MMPerPx == nil {
		t.Errorf("the card shows %+v, want the uncertified window's amplitude", a)
	}
	if b, err := json.Marshal(l.card()); err != nil || !json.Valid(b) {
		t.Errorf("card JSON: %v", err)
	}
}

// A reload that changes only scales, a camera's and a zone's, restarts
// nothing and sets the running lines' scales.
func TestReloadScaleRestartsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon")
	}
	cfg := testConfig()
	plain := cfg.Cameras[0]
	zoned := config.DefaultCamera()
	zoned.Name = "zoned"
	zoned.Zones = []config.Zone{{Name: "a", ROI: config.ROI{W: 32, H: 32}}, {Name: "b", ROI: config.ROI{X: 32, W: 32, H: 32}}}
	cfg.Cameras = []config.Camera{plain, zoned}
	r := start(t, cfg, t.TempDir())
	lines := func() map[string]*line {
		r.d.mu.Lock()
		defer r.d.mu.Unlock()
		out := map[string]*line{}
		for k, l := range r.d.lines {
			out[k] = l
		}
		return out
	}
	before := lines()
	if len(before) != 4 {
		t.Fatalf("lines %v, want pendulum, zoned, zoned.a, zoned.b", before)
	}
	for k, l := range before {
		if l.scale.get() != 0 {
			t.Errorf("%s: scale %v before any is set", k, l.scale.get())
		}
	}

	next := testConfig()
	p2, z2 := plain, zoned
	p2.Scale = config.Scale{Points: [][]float64{{0, 0}, {3, 4}}, DistanceMM: 10} // 2 mm/px
	z2.Scale = config.Scale{DistanceM: 10, FocalMM: 8, PixelUM: 2.9}             // 3.625 mm/px
	z2.Zones = []config.Zone{zoned.Zones[0], zoned.Zones[1]}
	z2.Zones[1].Scale = config.Scale{Points: [][]float64{{0, 0}, {0, 10}}, DistanceMM: 5} // 0.5 mm/px
	next.Cameras = []config.Camera{p2, z2}
	r.d.Reload(next)
	after := lines()
	for k, l := range before {
		if after[k] != l {
			t.Errorf("%s restarted by a scale change", k)
		}
	}
	for k, want := range map[string]float64{"pendulum": 2, "zoned.a": 3.625, "zoned.b": 0.5} {
		if got := after[k].scale.get(); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: scale %v mm/px after the reload, want %v", k, got, want)
		}
	}
}
