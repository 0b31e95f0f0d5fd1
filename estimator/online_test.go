package estimator

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/physd/physd/sim"
)

// pendulumClip renders the underdamped pendulum from t0 for dur seconds.
func pendulumClip(t *testing.T, z0, dur float64) Clip {
	t.Helper()
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	fs, _, err := sim.Render(context.Background(), sim.Scene{System: sim.SystemPendulum, Gamma1: g1, Gamma0: g0, Z0: z0, Duration: dur, FPS: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := Clip{W: fs[0].Rect.Dx(), H: fs[0].Rect.Dy(), Dt: 1.0 / 20}
	for _, f := range fs {
		px := make([]float64, len(f.Pix))
		for j, v := range f.Pix {
			px[j] = float64(v) / 255
		}
		c.Frames = append(c.Frames, px)
	}
	return c
}

func paramsOf(e Encoder) [][]float64 {
	var out [][]float64
	for _, p := range e.Params() {
		out = append(out, slices.Clone(data(p)))
	}
	return out
}

func sameParams(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestLearnerRollsBackRejectedAndDivergedWindows trains a learner on a
// good window, then warm-trains it on windows whose estimate is rejected
// or whose training diverges (a learning rate of 1e200 sends the loss to
// Inf or NaN). Both are reported as rolled back and leave the encoder
// bit for bit as the accepted window left it; the next good window is
// still estimated within the accuracy bar (warm, unless the learning rate
// makes it diverge again).
func TestLearnerRollsBackRejectedAndDivergedWindows(t *testing.T) {
	ctx := context.Background()
	good := pendulumClip(t, 50, 1.5*math.Pi)
	other := pendulumClip(t, 30, 1.5*math.Pi)
	accurate := func(r *Result) bool { return math.Abs(r.Gamma0-4.0016) < 0.02 && math.Abs(r.Gamma1-0.08) < 0.004 }
	// reject lists the calls of accept that say no (the first window, with
	// no encoder yet, is kept without asking): the second window's warm
	// estimate (unless training diverged) and its cold restart, so that the
	// learner must fall back on the encoder it had.
	for _, tc := range []struct {
		name     string
		lr       float64
		reject   map[int]bool
		diverged bool
	}{
		{"rejected", 0, map[int]bool{1: true, 2: true}, false},
		{"diverged", 1e200, map[int]bool{1: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			accept := func(r *Result) bool {
				calls++
				return !tc.reject[calls] && accurate(r)
			}
			p, err := LookupPreset(DefaultPreset)
			if err != nil {
				t.Fatal(err)
			}
			if tc.lr > 0 {
				p.LREncoder = tc.lr
			}
			p.Steps = 0 // the cold start is the closed form alone
			l, err := NewLearner(LearnerOptions{Preset: p, Steps: 30, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if o, err := l.Window(ctx, []Clip{good}, accept); err != nil || !o.Cold {
				t.Fatalf("first window: %v", err)
			}
			before := paramsOf(l.enc)
			o, err := l.Window(ctx, []Clip{other}, accept)
			if err != nil && !tc.diverged {
				t.Fatal(err)
			}
			if err == nil && (!o.RolledBack || o.Diverged != tc.diverged) {
				t.Errorf("rolled back %v, diverged %v; want true, %v", o.RolledBack, o.Diverged, tc.diverged)
			}
			if !sameParams(before, paramsOf(l.enc)) {
				t.Fatal("the encoder changed after a window that was not accepted")
			}
			o, err = l.Window(ctx, []Clip{good}, accept)
			if err != nil {
				t.Fatal(err)
			}
			// With the learning rate still at 1e200, warm training diverges
			// again and the estimate comes from a cold restart.
			if o.Cold != tc.diverged || !accurate(o.Result) {
				t.Errorf("after the rollback: cold %v, γ0 %v γ1 %v", o.Cold, o.Result.Gamma0, o.Result.Gamma1)
			}
		})
	}
}

// A train-only fit reads the same estimate as a full one and skips the
// σ measurements, which the learner's warm training never reports.
func TestFitTrainOnly(t *testing.T) {
	ctx := context.Background()
	clip := pendulumClip(t, 50, 1.5*math.Pi)
	p, err := LookupPreset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	full, err := Fit(ctx, []Clip{clip}, Options{Preset: p, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	train, err := Fit(ctx, []Clip{clip}, Options{Preset: p, Seed: 1, TrainOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if train.Gamma0 != full.Gamma0 || train.Gamma1 != full.Gamma1 || train.Steps != full.Steps {
		t.Errorf("train-only γ0 %v γ1 %v (%d steps), full %v %v (%d)", train.Gamma0, train.Gamma1, train.Steps, full.Gamma0, full.Gamma1, full.Steps)
	}
	if full.Uncertainty == nil || full.Uncertainty.Bootstrap == nil {
		t.Fatalf("full fit: uncertainty %+v", full.Uncertainty)
	}
	if u := train.Uncertainty; u == nil || u.Source != "stencil" || u.Bootstrap != nil || u.Jackknife != nil {
		t.Errorf("train-only fit measured σ: %+v", u)
	}
}

// A screen sees the fit's estimate before σ is measured; a fit it refuses
// keeps the stencil's σ and the same estimate, one it passes is measured.
func TestFitScreen(t *testing.T) {
	ctx := context.Background()
	clip := pendulumClip(t, 50, 1.5*math.Pi)
	p, err := LookupPreset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	var seen []float64
	screen := func(pass bool) func(*Result) bool {
		return func(r *Result) bool { seen = append(seen, r.Gamma0, r.Physics.OmegaN); return pass }
	}
	passed, err := Fit(ctx, []Clip{clip}, Options{Preset: p, Seed: 1, Screen: screen(true)})
	if err != nil {
		t.Fatal(err)
	}
	refused, err := Fit(ctx, []Clip{clip}, Options{Preset: p, Seed: 1, Screen: screen(false)})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 4 || seen[0] != passed.Gamma0 || seen[1] == 0 {
		t.Fatalf("the screen saw %v, want γ0 %v and its ω_n, twice", seen, passed.Gamma0)
	}
	if u := passed.Uncertainty; u == nil || u.Source != "bootstrap+jackknife" {
		t.Errorf("passed: uncertainty %+v", u)
	}
	if u := refused.Uncertainty; u == nil || u.Source != "stencil" || u.Bootstrap != nil {
		t.Errorf("refused: σ measured: %+v", u)
	}
	if refused.Gamma0 != passed.Gamma0 || refused.Gamma1 != passed.Gamma1 {
		t.Errorf("refused estimate %v/%v, passed %v/%v", refused.Gamma0, refused.Gamma1, passed.Gamma0, passed.Gamma1)
	}
}

// A lazy learner whose warm encoder keeps being accepted fits the next
// windows as it stands — no training steps, the encoder bit for bit
// unchanged — and trains again on the trainEvery-th window; its fit-only
// estimates meet the same accuracy bar.
func TestLazyLearnerSkipsTrainingWhileAccepted(t *testing.T) {
	ctx := context.Background()
	good := pendulumClip(t, 50, 1.5*math.Pi)
	accurate := func(r *Result) bool { return math.Abs(r.Gamma0-4.0016) < 0.02 && math.Abs(r.Gamma1-0.08) < 0.004 }
	p, err := LookupPreset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	p.Steps = 0 // the cold start is the closed form alone
	l, err := NewLearner(LearnerOptions{Preset: p, Steps: 10, Seed: 1, Lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	if o, err := l.Window(ctx, []Clip{good}, accurate); err != nil || !o.Cold {
		t.Fatalf("first window: %v", err)
	}
	var fitOnly []bool
	for w := range 2 * trainEvery {
		before := paramsOf(l.enc)
		o, err := l.Window(ctx, []Clip{good}, accurate)
		if err != nil {
			t.Fatal(err)
		}
		if !accurate(o.Result) || o.RolledBack {
			t.Fatalf("window %d: γ0 %v γ1 %v, rolled back %v", w+2, o.Gamma0, o.Gamma1, o.RolledBack)
		}
		if o.FitOnly && (o.TrainSteps != 0 || !sameParams(before, paramsOf(l.enc))) {
			t.Fatalf("window %d: fit only, yet %d steps or a changed encoder", w+2, o.TrainSteps)
		}
		fitOnly = append(fitOnly, o.FitOnly)
	}
	// After the cold start: trained, then trainEvery-1 fit only, trained, …
	want := []bool{false, true, true, true, false, true, true, true}
	if !slices.Equal(fitOnly, want) {
		t.Errorf("fit-only windows %v, want %v", fitOnly, want)
	}
}

// A window at another time step (the camera's rate changed, or its frames
// are binned anew) is warm-trained on its own, without the replayed
// windows of the old step that the training's fit would refuse beside
// it: the warm encoder is trained and accepted, not rolled back for a
// cold start.
func TestLearnerReplaysOnlyItsOwnStep(t *testing.T) {
	ctx := context.Background()
	good := pendulumClip(t, 50, 1.5*math.Pi)
	// The same motion at 10 fps, each pair of frames averaged (a free
	// response of the same ODE).
	binned := Clip{W: good.W, H: good.H, Dt: 2 * good.Dt}
	for k := 0; k+1 < len(good.Frames); k += 2 {
		f := make([]float64, len(good.Frames[k]))
		for j := range f {
			f[j] = (good.Frames[k][j] + good.Frames[k+1][j]) / 2
		}
		binned.Frames = append(binned.Frames, f)
	}
	accurate := func(r *Result) bool { return math.Abs(r.Gamma0-4.0016) < 0.02 && math.Abs(r.Gamma1-0.08) < 0.004 }
	p, err := LookupPreset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLearner(LearnerOptions{Preset: p, Steps: 10, Replay: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if o, err := l.Window(ctx, []Clip{good}, accurate); err != nil || !o.Cold || !accurate(o.Result) {
		t.Fatalf("first window: %v", err)
	}
	o, err := l.Window(ctx, []Clip{binned}, accurate)
	if err != nil {
		t.Fatal(err)
	}
	if o.Cold || o.ColdTried || o.RolledBack || o.TrainSteps == 0 || !accurate(o.Result) {
		t.Errorf("binned window: cold %v (tried %v), rolled back %v, %d steps, γ0 %.4f γ1 %.4f; want warm-trained and accurate",
			o.Cold, o.ColdTried, o.RolledBack, o.TrainSteps, o.Result.Gamma0, o.Result.Gamma1)
	}
}
