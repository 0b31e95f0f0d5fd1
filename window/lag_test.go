package window

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/physd/physd/estimator"
)

// phaseLag finds a sub-frame shift between two readouts of one swing and
// none between a swing and a decreasing, nonlinear map of it.
func TestPhaseLag(t *testing.T) {
	const n, w = 200, 0.1 // frames; rad per frame: a period of 62.8 frames
	wave := func(shift float64) []float64 {
		z := make([]float64, n)
		for k := range z {
			z[k] = math.Exp(-0.004*float64(k)) * math.Cos(w*(float64(k)-shift))
		}
		return z
	}
	a := wave(0)[60:100] // a run of 40 frames starting at frame 60
	for _, shift := range []float64{-7.5, -2, 0, 3.3, 9} {
		lag, corr, ok := phaseLag([]run{{60, a}}, wave(shift), 0, 16, 31)
		if !ok || math.Abs(lag-shift) > 0.3 || corr < 0.99 {
			t.Errorf("shift %.1f: lag %.2f, corr %.3f, ok %v", shift, lag, corr, ok)
		}
	}
	b := wave(0)
	for k := range b {
		b[k] = -math.Tanh(2 * b[k])
	}
	// The map bends the waveform, which biases a correlation's peak a
	// little: well inside lagging's tolerance (a twentieth of a period).
	if lag, corr, ok := phaseLag([]run{{60, a}}, b, 0, 16, 31); !ok || math.Abs(lag) > 0.5 || corr < 0.95 {
		t.Errorf("decreasing map: lag %.2f, corr %.3f, ok %v", lag, corr, ok)
	}
	// Too few frames left at every shift.
	if _, _, ok := phaseLag([]run{{60, a[:20]}}, wave(0), 0, 16, 31); ok {
		t.Error("a 20-frame run judged against a half period of 31")
	}
}

// A learned latent that swings with a followed object but a sixth of a
// period out of phase is refused; in phase, or read through a decreasing
// map, it is certified.
func TestChooseRefusesLaggingLatent(t *testing.T) {
	z, dt := swing(0.1, 4, 1) // period 2π/2 s = 62.8 frames at 20 fps
	const shift = 10          // frames, 57°
	enc := resultOf(t, z[shift:], dt, tight)
	enc.Readout = "encoder"
	if v := Certify(enc, Thresholds{}, nil); !v.Certified {
		t.Fatalf("the latent should certify alone: %v", v.Reasons)
	}
	run := func(lo, hi int, f func(float64) float64) *estimator.Result {
		zr := make([]float64, hi-lo)
		for k := range zr {
			zr[k] = f(z[lo+k])
		}
		r := resultOf(t, zr, dt, tight)
		r.Readout, r.First = "tracked object", []int{lo - shift}
		return r
	}
	same := func(x float64) float64 { return x }
	_, v := Choose([]*estimator.Result{enc, run(100+shift, 140+shift, same)}, Thresholds{}, nil)
	if !v.Certified {
		t.Errorf("in phase: refused: %v", v.Reasons)
	}
	_, v = Choose([]*estimator.Result{enc, run(100+shift, 140+shift, func(x float64) float64 { return -math.Sinh(x) })}, Thresholds{}, nil)
	if !v.Certified {
		t.Errorf("in phase, decreasing map: refused: %v", v.Reasons)
	}
	// The object runs 10 frames later than the latent.
	lagged := run(100, 140, same)
	lagged.First = []int{100}
	_, v = Choose([]*estimator.Result{enc, lagged}, Thresholds{}, nil)
	if v.Certified || !strings.Contains(strings.Join(v.Reasons, "; "), "out of phase") {
		t.Errorf("10 frames out of phase: certified %v, reasons %v", v.Certified, v.Reasons)
	}
	// Another oscillator, 30 % faster: no constraint from its phase.
	zf, _ := swing(0.1, 4*1.69, 2)
	fast := resultOf(t, zf[100:140], dt, tight)
	fast.Readout, fast.First = "tracked other", []int{100}
	if d := lagging(enc, fast); d != "" {
		t.Errorf("another frequency judged: %s", d)
	}
}

// An object seen in runs too short each for a half period, hidden
// between them, still holds a lagging latent to its phase: its runs'
// joint fit (one free response across the gap) stands for it there.
func TestLaggingAcrossRuns(t *testing.T) {
	z, dt := swing(0.1, 4, 1) // period 62.8 frames
	enc := resultOf(t, z[:94], dt, tight)
	enc.Readout = "encoder"
	p, _ := estimator.LookupPreset(estimator.DefaultPreset)
	runsAt := func(shift int) *estimator.Result {
		// Runs 0–15 and 26–44 of the object, shift frames behind.
		lat := [][]float64{z[shift : shift+16], z[shift+26 : shift+45]}
		r, err := estimator.FitRuns(context.Background(), "tracked object", lat, estimator.Runs{Clip: []int{0, 0}, First: []int{0, 26}}, dt, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if d := lagging(enc, runsAt(0)); d != "" {
		t.Errorf("in phase, in runs: %s", d)
	}
	if d := lagging(enc, runsAt(7)); !strings.Contains(d, "out of phase") {
		t.Errorf("7 frames (40°) out of phase, in runs: %q", d)
	}
	// Without the fit across the gap only the 19 frames of the second
	// run could be compared: too few for a half period.
	raw := runsAt(7)
	raw.Trajectory = nil
	if d := lagging(enc, raw); d != "" {
		t.Errorf("runs without a joint fit judged: %s", d)
	}
}
