package modes

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/physd/physd/sim"
)

// Three releases of two modes half a bandwidth apart (1.00 and 1.02 Hz,
// ζ 2 %), their shares differing from release to release, ring at
// frequencies between the modes' that differ from release to release:
// Agree reads them apart on every seed. Three releases of one mode at
// different amplitudes — and of the same pair with equal shares in each
// — ring at one frequency and are never read apart. One release of the
// pair alone cannot tell it (pair_test's one free decay shows only an
// envelope, which friction shows too).
func TestAgreeTellsAPairAcrossReleases(t *testing.T) {
	const fn, dur, noise = 1.0, 10.0, 0.005
	pair := func(a1, a2 float64) []sim.Mode {
		return []sim.Mode{{Fn: fn, Zeta: 0.02, AmplitudePx: a1}, {Fn: 1.02 * fn, Zeta: 0.02, AmplitudePx: a2}}
	}
	for _, c := range []struct {
		name     string
		releases [][]sim.Mode
		apart    bool
	}{
		{"pair, shares 3:1 1:1 1:3", [][]sim.Mode{pair(0.3, 0.1), pair(0.2, 0.2), pair(0.1, 0.3)}, true},
		{"pair, shares 3:1 1:3", [][]sim.Mode{pair(0.3, 0.1), pair(0.1, 0.3)}, true},
		{"pair, equal shares", [][]sim.Mode{pair(0.3, 0.3), pair(0.2, 0.2), pair(0.1, 0.1)}, false},
		{"one mode, 0.3 0.15 0.1 px", [][]sim.Mode{{{Fn: fn, Zeta: 0.02, AmplitudePx: 0.3}}, {{Fn: fn, Zeta: 0.02, AmplitudePx: 0.15}}, {{Fn: fn, Zeta: 0.02, AmplitudePx: 0.1}}}, false},
		{"one mode, ζ 0.5 %, 3 1 0.3 px", [][]sim.Mode{{{Fn: fn, Zeta: 0.005, AmplitudePx: 3}}, {{Fn: fn, Zeta: 0.005, AmplitudePx: 1}}, {{Fn: fn, Zeta: 0.005, AmplitudePx: 0.3}}}, false},
	} {
		for seed := uint64(1); seed <= 10; seed++ {
			var xs [][]float64
			var dt float64
			for k, r := range c.releases {
				x, d := pluck(t, r, dur, noise, 10*seed+uint64(k))
				xs, dt = append(xs, x), d
			}
			a, err := Agree(xs, dt, 2*math.Pi*fn)
			if err != nil {
				t.Fatal(err)
			}
			got, why := a.Apart()
			t.Logf("%s seed %d: %.5f Hz ± %.5f, χ²/dof %.3g, spread %.2f %%: apart %v %s", c.name, seed, a.Hz, a.Sigma, a.Chi2, 100*a.Spread(), got, why)
			if got != c.apart {
				t.Errorf("%s seed %d: apart %v, want %v", c.name, seed, got, c.apart)
			}
		}
	}
}

// pluck is a release from rest of modes (their phases zero: a pluck),
// dur seconds at 30 fps, read with white noise of noisePx rms.
func pluck(t *testing.T, modes []sim.Mode, dur, noisePx float64, seed uint64) ([]float64, float64) {
	t.Helper()
	s := sim.Structure{Seed: int64(seed), FPS: 30, Duration: dur, W: 64, H: 64, Modes: append([]sim.Mode(nil), modes...)}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 13))
	d := s.Displacement(s.Times())
	for i := range d {
		d[i] += noisePx * rng.NormFloat64()
	}
	return d, 1 / s.FPS
}
