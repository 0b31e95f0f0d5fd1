package modes

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/window"
)

// readout is a structure's free response over dur seconds at 30 fps, as
// sim renders its displacement, read with white noise of noisePx rms; the
// modes' phases are drawn from the seed.
func readout(t *testing.T, modes []sim.Mode, dur, noisePx float64, seed uint64) ([]float64, float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := range modes {
		modes[i].Phase = 2 * math.Pi * rng.Float64()
	}
	s := sim.Structure{Seed: int64(seed), FPS: 30, Duration: dur, W: 64, H: 64, Modes: modes}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	d := s.Displacement(s.Times())
	for i := range d {
		d[i] += noisePx * rng.NormFloat64()
	}
	return d, 1 / s.FPS
}

func options(t *testing.T) Options {
	t.Helper()
	p, err := estimator.LookupPreset("edge")
	if err != nil {
		t.Fatal(err)
	}
	return Options{Preset: p}
}

// inBar: γ0 within 1 % and ζ within 25 % of the mode's truth.
func inBar(r *estimator.Result, m sim.Mode) bool {
	g1, g0 := m.Gammas()
	zeta := g1 / (2 * math.Sqrt(g0))
	return math.Abs(r.Gamma0/g0-1) <= 0.01 && math.Abs(r.Zeta/zeta-1) <= 0.25
}

// Two modes released together, 3:1 and 1:3 in amplitude, 10 seeds each:
// both are found, each certified on its own within the bar, and nothing
// else is certified.
func TestSeparateTwoModes(t *testing.T) {
	for _, amps := range [][2]float64{{3, 1}, {1, 3}} {
		var ok [2]int
		for seed := uint64(1); seed <= 10; seed++ {
			truth := []sim.Mode{{Fn: 1.0, Zeta: 0.01, AmplitudePx: amps[0]}, {Fn: 2.7, Zeta: 0.02, AmplitudePx: amps[1]}}
			x, dt := readout(t, truth, 20, 0.05, seed)
			ms, err := Separate(context.Background(), "test", x, dt, options(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) != 2 {
				t.Errorf("amplitudes %v seed %d: %d modes, want 2", amps, seed, len(ms))
				continue
			}
			for i, m := range ms {
				r := m.Result
				bar := inBar(r, truth[i])
				t.Logf("amplitudes %v seed %d mode %d: %.4f Hz ζ %.4f ± %.4f (joint %.4f Hz ζ %.4f, %d samples): %s, in the bar %v %v",
					amps, seed, m.Index, r.FreqN, r.Zeta, r.SigmaZ, m.Term.Hz(), m.Term.Zeta(), m.Span, m.Verdict.Status, bar, m.Verdict.Reasons)
				if m.Verdict.Certified && !bar {
					t.Errorf("amplitudes %v seed %d mode %d: certified outside the bar: %.4f Hz ζ %.4f", amps, seed, m.Index, r.FreqN, r.Zeta)
				}
				if m.Verdict.Certified && bar {
					ok[i]++
				}
			}
		}
		t.Logf("amplitudes %v: certified in the bar %d/10 (1 Hz), %d/10 (2.7 Hz)", amps, ok[0], ok[1])
		if ok[0] < 10 || ok[1] < 10 {
			t.Errorf("amplitudes %v: certified in the bar %d/10 and %d/10, want 10/10 each", amps, ok[0], ok[1])
		}
	}
}

// A cable's first three harmonics (f, 2f, 3f at amplitudes 3, 2, 1
// px): all three certified, their frequency ratios within 0.5 % of 2
// and 3.
func TestSeparateCableHarmonics(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		const f = 1.3
		truth := []sim.Mode{{Fn: f, Zeta: 0.01, AmplitudePx: 3}, {Fn: 2 * f, Zeta: 0.01, AmplitudePx: 2}, {Fn: 3 * f, Zeta: 0.01, AmplitudePx: 1}}
		x, dt := readout(t, truth, 20, 0.05, seed)
		ms, err := Separate(context.Background(), "cable", x, dt, options(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 3 {
			t.Fatalf("seed %d: %d modes, want 3", seed, len(ms))
		}
		for i, m := range ms {
			t.Logf("seed %d mode %d: %.4f Hz ζ %.4f: %s %v", seed, m.Index, m.Result.FreqN, m.Result.Zeta, m.Verdict.Status, m.Verdict.Reasons)
			if !m.Verdict.Certified || !inBar(m.Result, truth[i]) {
				t.Errorf("seed %d mode %d: %s at %.4f Hz ζ %.4f, want certified in the bar", seed, m.Index, m.Verdict.Status, m.Result.FreqN, m.Result.Zeta)
			}
		}
		r2, r3 := ms[1].Result.FreqN/ms[0].Result.FreqN, ms[2].Result.FreqN/ms[0].Result.FreqN
		t.Logf("seed %d: ratios %.4f, %.4f", seed, r2, r3)
		if math.Abs(r2/2-1) > 0.005 || math.Abs(r3/3-1) > 0.005 {
			t.Errorf("seed %d: ratios %.4f and %.4f, want within 0.5 %% of 2 and 3", seed, r2, r3)
		}
	}
}

// Single modes (0.5–4 Hz, ζ 0.5–3 %, 0.3–5 px, 50 clips) give no mode
// certified beside the one there is.
func TestSeparateNoSpuriousModes(t *testing.T) {
	rng := rand.New(rand.NewPCG(50, 1))
	var spurious, split int
	for seed := uint64(1); seed <= 50; seed++ {
		m := sim.Mode{Fn: 0.5 + 3.5*rng.Float64(), Zeta: 0.005 + 0.025*rng.Float64(), AmplitudePx: 0.3 + 4.7*rng.Float64()}
		x, dt := readout(t, []sim.Mode{m}, 20, 0.05, seed)
		ms, err := Separate(context.Background(), "one", x, dt, options(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) > 0 {
			split++
		}
		for _, got := range ms {
			if got.Verdict.Certified && !inBar(got.Result, m) {
				spurious++
				t.Errorf("seed %d (%.3g Hz ζ %.3g, %.2g px): mode %d certified at %.4g Hz ζ %.3g", seed, m.Fn, m.Zeta, m.AmplitudePx, got.Index, got.Result.FreqN, got.Result.Zeta)
			}
		}
	}
	t.Logf("50 single modes: %d read as several lines, %d spurious modes certified", split, spurious)
}

// Two modes closer than CloseBandwidths half-power bandwidths, found as
// two lines, are each refused with CheckSeparated.
func TestSeparateRefusesCloseModes(t *testing.T) {
	terms := []Term{{Sigma: 0.02 * 2 * math.Pi, Omega: 2 * math.Pi}, {Sigma: 0.02 * 2 * math.Pi * 1.1, Omega: 2 * math.Pi * 1.1}}
	for i := range terms {
		if why := CloseReason(terms, i); why == "" {
			t.Errorf("modes at 1 and 1.1 Hz, ζ 2 %% (2.3 bandwidths apart): mode %d not refused", i+1)
		} else {
			t.Log(why)
		}
	}
	terms[1].Omega, terms[1].Sigma = 2*math.Pi*1.2, 0.02*2*math.Pi*1.2
	for i := range terms {
		if why := CloseReason(terms, i); why != "" {
			t.Errorf("modes at 1 and 1.2 Hz, ζ 2 %% (4.2 bandwidths apart): mode %d refused: %s", i+1, why)
		}
	}
	var _ = window.CheckSeparated
}

// An event window — three releases of a structure ringing in two modes
// (1.0 Hz ζ 1 %, 2.7 Hz ζ 2 %), each 8 s, the modes' shares differing
// from release to release — has each mode fitted over the releases that
// carry it and certified as a window of them: every certified mode in
// the bar, both modes certified on most seeds.
func TestSeparateClipsEventWindow(t *testing.T) {
	opt := options(t)
	amps := [][2]float64{{3, 1}, {1.5, 2}, {0.8, 3}}
	certified, of := 0, 0
	for seed := uint64(1); seed <= 5; seed++ {
		var xs [][]float64
		var dt float64
		modes := []sim.Mode{{Fn: 1, Zeta: 0.01}, {Fn: 2.7, Zeta: 0.02}}
		for k, a := range amps {
			ms := []sim.Mode{modes[0], modes[1]}
			ms[0].AmplitudePx, ms[1].AmplitudePx = a[0], a[1]
			x, d := readout(t, ms, 8, 0.05, 10*seed+uint64(k))
			xs, dt = append(xs, x), d
		}
		got, err := SeparateClips(context.Background(), "events", xs, dt, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("seed %d: %d modes, want 2", seed, len(got))
		}
		for i, m := range got {
			in := inBar(m.Result, modes[i])
			t.Logf("seed %d mode %d: %.4f Hz ζ %.4f over %d clips: %v %v (in the bar %v)", seed, m.Index, m.Term.Hz(), m.Result.Zeta, len(m.Result.Latents), m.Verdict.Certified, m.Verdict.Reasons, in)
			of++
			if m.Verdict.Certified {
				certified++
				if !in {
					t.Errorf("seed %d mode %d: certified outside the bar", seed, m.Index)
				}
			}
		}
	}
	if certified < 8 {
		t.Errorf("certified %d of %d modes, want ≥ 8", certified, of)
	}
}
