package estimator

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// cut splits z into runs [lo, hi) (frames of z), as an object hidden
// between them would leave it.
func cut(z []float64, spans ...[2]int) ([][]float64, Runs) {
	var lat [][]float64
	var runs Runs
	for _, s := range spans {
		lat = append(lat, z[s[0]:s[1]])
		runs.Clip = append(runs.Clip, 0)
		runs.First = append(runs.First, s[0])
	}
	return lat, runs
}

// Runs of one free response, fitted as one, give back its coefficients
// and its initial state at the first run's start; the solution through
// the gaps and Motion are the free response's.
func TestFitTrajectoryRunsRecoversOneResponse(t *testing.T) {
	const dt, g1, g0 = 0.05, 0.08, 4.0016
	z := freeResponse(t, g1, g0, dt, 1, 0, 0.3, 94)
	lat, runs := cut(z, [2]int{5, 30}, [2]int{41, 60}, [2]int{75, 94})
	f, err := FitTrajectoryRuns(lat, &runs, dt, 1.1*g1+0.05, 1.15*g0, SharedOffset)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.Gamma1-g1) > 1e-7 || math.Abs(f.Gamma0-g0) > 1e-7 || f.RelResidual() > 1e-7 {
		t.Fatalf("got (%.10f, %.10f), residual %g; want (%g, %g), 0", f.Gamma1, f.Gamma0, f.RelResidual(), g1, g0)
	}
	if len(f.X0) != 1 || math.Abs(f.X0[0][0]+0.3-z[5]) > 1e-6 {
		t.Errorf("initial states %v: want one, at frame 5 (z %g)", f.X0, z[5]-0.3)
	}
	sol, err := f.Solution(0, -5, 94, dt)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range sol {
		if math.Abs(v-z[k]) > 1e-6 {
			t.Fatalf("solution at frame %d: %g, want %g (through the gaps and before the first run)", k, v, z[k])
		}
	}
	mo, err := f.Motion(dt)
	if err != nil {
		t.Fatal(err)
	}
	for m, s := range mo {
		for i, x := range s {
			if want := lat[m][i] - 0.3; math.Abs(x[0]-want) > 1e-6 {
				t.Fatalf("motion of run %d sample %d: %g, want %g", m, i, x[0], want)
			}
		}
	}
}

// A run that is not the same response — another object taken for the
// first after a gap, or its position pulled a pixel aside — cannot hide
// in a start of its own: fitted as one response the runs leave a
// residual, fitted as separate clips they would not.
func TestFitTrajectoryRunsExposesAStrayRun(t *testing.T) {
	const dt, g1, g0 = 0.05, 0.08, 4.0016
	z := freeResponse(t, g1, g0, dt, 1, 0, 0, 94)
	// A look-alike swinging at the same frequency, out of phase.
	other := freeResponse(t, g1, g0, dt, 0.3, 1.5, 0, 94)
	copy(z[60:], other[60:])
	lat, runs := cut(z, [2]int{0, 40}, [2]int{60, 94})
	sep, err := FitTrajectory(lat, dt, g1, g0, SharedOffset)
	if err != nil {
		t.Fatal(err)
	}
	one, err := FitTrajectoryRuns(lat, &runs, dt, g1, g0, SharedOffset)
	if err != nil {
		t.Fatal(err)
	}
	if !(one.RelResidual() > 0.1) || !(one.RelResidual() > 20*sep.RelResidual()) {
		t.Errorf("stray run: residual %.3g as one response, %.3g as separate clips; want the first > 0.1 and ≫ the second", one.RelResidual(), sep.RelResidual())
	}
}

func TestRunsRejectsBadPlacement(t *testing.T) {
	z := make([]float64, 40)
	for i := range z {
		z[i] = math.Sin(0.3 * float64(i))
	}
	cases := map[string]Runs{
		"length":     {Clip: []int{0}, First: []int{0, 20}},
		"overlap":    {Clip: []int{0, 0}, First: []int{0, 10}},
		"negative":   {Clip: []int{0, 0}, First: []int{-1, 30}},
		"clip order": {Clip: []int{1, 0}, First: []int{0, 30}},
	}
	lat := [][]float64{z[:20], z[20:]}
	for name, r := range cases {
		if _, err := FitTrajectoryRuns(lat, &r, 0.05, 0, 0.09/0.0025, SharedOffset); !errors.Is(err, ErrInvalidClip) {
			t.Errorf("%s: err %v, want ErrInvalidClip", name, err)
		}
		if _, err := FitRuns(context.Background(), "x", lat, r, 0.05, Preset{Exact: true}); err == nil {
			t.Errorf("%s: FitRuns accepted %+v", name, r)
		}
	}
}

func TestClipOfAndClipCount(t *testing.T) {
	r := &Result{Latents: make([][]float64, 3)}
	if r.ClipCount() != 3 || r.ClipOf(2) != 2 {
		t.Errorf("without Clips: count %d, clip of 2 %d; want 3, 2", r.ClipCount(), r.ClipOf(2))
	}
	r.Clips = []int{0, 0, 1}
	if r.ClipCount() != 2 || r.ClipOf(1) != 0 || r.ClipOf(2) != 1 {
		t.Errorf("runs 0,0,1: count %d, clips %d %d; want 2, 0, 1", r.ClipCount(), r.ClipOf(1), r.ClipOf(2))
	}
}

// A clip seen in runs that hold less than a period between them shows
// its three slopes only across a gap, where nothing checks that the runs
// were read alike: with the first run's troughs pulled by 12 % (camera
// shake left in a tracked position) γ1 is far off, and the bootstrap,
// resampling within runs, would call it precise. Its σ adds the runs
// jackknife's, which leaves each stretch out in turn and covers the
// error; runs that hold a period keep the bootstrap's.
func TestRunsShorterThanAPeriodAreJackknifed(t *testing.T) {
	const dt, g1, g0 = 0.05, 0.08, 4.0016 // a period is 63 frames
	p := Preset{Exact: true, Loss: LossConfig{Offset: SharedOffset}}
	for _, tc := range []struct {
		name   string
		spans  [][2]int
		source string
	}{
		{"34 frames in two runs", [][2]int{{20, 44}, {84, 94}}, "bootstrap+runs-jackknife"},
		{"84 frames in two runs", [][2]int{{20, 44}, {54, 114}}, "bootstrap"},
		{"34 frames seen whole", [][2]int{{20, 54}}, "bootstrap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := freeResponse(t, g1, g0, dt, 8, 0, 0, 120)
			rng := rand.New(rand.NewPCG(12, 44))
			for i := range z {
				if i < 44 && z[i] < 0 {
					z[i] *= 0.88
				}
				z[i] += 0.03 * rng.NormFloat64()
			}
			lat, runs := cut(z, tc.spans...)
			r, err := FitRuns(context.Background(), "runs", lat, runs, dt, p)
			if err != nil {
				t.Fatal(err)
			}
			u := r.Uncertainty
			t.Logf("γ1 %.4f ± %.4f, γ0 %.4f ± %.4f: %s (%s)", r.Gamma1, r.Sigma1, r.Gamma0, r.Sigma0, u.Source, u.Note)
			if u.Source != tc.source {
				t.Fatalf("σ from %s (%s); want %s", u.Source, u.Note, tc.source)
			}
			if tc.source == "bootstrap" {
				return
			}
			if !strings.Contains(u.Note, "less than a period") || u.Jackknife == nil {
				t.Errorf("note %q does not say why, or no jackknife (%v)", u.Note, u.Jackknife)
			}
			if e := math.Abs(r.Gamma1 - g1); e > 2*r.Sigma1 {
				t.Errorf("γ1 off by %.4f = %.1fσ", e, e/r.Sigma1)
			}
		})
	}
}

// A bob seen for 58 of its 63-frame period in two runs either side of a
// square of clutter: read cleanly, the runs jackknife leaves σ small
// enough to certify and the truth within it; with the four frames before
// the bob went behind the square dragged towards it (a match pulled by
// its neighbour), the estimate moves and σ grows at least fivefold to
// cover it.
func TestRunsJackknifeSeesAPulledStretch(t *testing.T) {
	const dt, g1, g0 = 0.05, 0.08, 4.0016
	p := Preset{Exact: true, Loss: LossConfig{Offset: SharedOffset}}
	var clean float64
	for _, pull := range []float64{0, 0.6} {
		for seed := uint64(1); seed <= 3; seed++ {
			z := freeResponse(t, g1, g0, dt, 2, 0, 0, 94)
			rng := rand.New(rand.NewPCG(seed, 44))
			for i := range z {
				if i >= 14 && i < 18 {
					z[i] += pull * float64(i-13) / 4
				}
				z[i] += 0.02 * rng.NormFloat64()
			}
			lat, runs := cut(z, [2]int{0, 18}, [2]int{44, 84})
			r, err := FitRuns(context.Background(), "runs", lat, runs, dt, p)
			if err != nil {
				t.Fatal(err)
			}
			u := r.Uncertainty
			t.Logf("pull %.1f seed %d: γ1 %.4f ± %.4f, γ0 %.4f ± %.4f (%s)", pull, seed, r.Gamma1, r.Sigma1, r.Gamma0, r.Sigma0, u.Source)
			if u.Source != "bootstrap+runs-jackknife" {
				t.Fatalf("σ from %s (%s)", u.Source, u.Note)
			}
			if e1, e0 := math.Abs(r.Gamma1-g1), math.Abs(r.Gamma0-g0); e1 > 2*r.Sigma1 || e0 > 2*r.Sigma0 {
				t.Errorf("pull %.1f seed %d: off by %.4f = %.1fσ in γ1, %.4f = %.1fσ in γ0", pull, seed, e1, e1/r.Sigma1, e0, e0/r.Sigma0)
			}
			switch {
			case pull == 0:
				clean = max(clean, r.Sigma1)
				if r.Sigma0 > 0.01*g0 {
					t.Errorf("clean runs: σ0 %.4f, more than 1 %% of γ0", r.Sigma0)
				}
			case r.Sigma1 < 5*clean:
				t.Errorf("pulled stretch: σ1 %.4f, less than 5× the clean runs' largest %.4f", r.Sigma1, clean)
			}
		}
	}
}

// Two short runs far apart can hold another number of cycles between
// them: the fit started a cycle away finds a minimum the data do not
// reject, and σ is not measured. Runs that each hold a period are told
// apart from their aliases and keep the bootstrap.
func TestAliasAcrossGaps(t *testing.T) {
	const dt, g1, g0 = 0.05, 0.08, 4.0016
	p := Preset{Exact: true, Loss: LossConfig{Offset: SharedOffset}}
	for _, tc := range []struct {
		name  string
		spans [][2]int
		alias bool
		n     int
	}{
		{"two 10-frame runs 2.4 s apart", [][2]int{{0, 10}, {57, 69}}, true, 70},
		{"two 70-frame runs 4 s apart", [][2]int{{0, 70}, {150, 220}}, false, 220},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := freeResponse(t, g1, g0, dt, 8, 0, 0, tc.n)
			rng := rand.New(rand.NewPCG(15, 3))
			for i := range z {
				z[i] += 0.1 * rng.NormFloat64()
			}
			lat, runs := cut(z, tc.spans...)
			r, err := FitRuns(context.Background(), "runs", lat, runs, dt, p)
			if err != nil {
				t.Fatal(err)
			}
			err = r.aliasAcrossGaps(SharedOffset)
			t.Logf("γ0 %.4f ± %.4f: %v", r.Gamma0, r.Sigma0, err)
			if (err != nil) != tc.alias {
				t.Fatalf("alias %v, want %v", err, tc.alias)
			}
			if tc.alias && (r.Uncertainty.Source != "stencil" || !strings.Contains(r.Uncertainty.Note, "cycles")) {
				t.Errorf("σ from %s (%s): want the stencil's, and why", r.Uncertainty.Source, r.Uncertainty.Note)
			}
		})
	}
}
