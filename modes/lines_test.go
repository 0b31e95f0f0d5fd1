package modes

import (
	"math"
	"testing"

	"github.com/physd/physd/sim"
	"github.com/physd/physd/window"
)

// A beam's third mode (4.5 Hz at ζ = 2 %, half the first's amplitude),
// read with 0.05 px of noise, is too broad for window.PeakRatio over a
// 20 s release: DecayLines finds two lines; modeLines finds all three, each within a
// bin of its mode. One mode alone gives one line, never a second, over 10
// seeds each; a line too broad for PeakRatio on the 3f tone of a stronger one (a cable's
// harmonic, or a readout's) is not taken.
func TestModeLinesFindsABroadHigherMode(t *testing.T) {
	const dur, noise = 20.0, 0.05
	three := []sim.Mode{{Fn: 0.8, Zeta: 0.01, AmplitudePx: 0.6}, {Fn: 2.2, Zeta: 0.01, AmplitudePx: 0.3}, {Fn: 4.5, Zeta: 0.02, AmplitudePx: 0.3}}
	found := 0
	for seed := uint64(1); seed <= 10; seed++ {
		x, dt := pluck(t, three, dur, noise, seed)
		plainLines := window.DecayLines(x, dt)
		got := modeLines([][]float64{x}, dt, DefaultMaxModes)
		t.Logf("three modes seed %d: DecayLines %d lines, modeLines %+v", seed, len(plainLines), got)
		if len(plainLines) != 2 {
			t.Errorf("seed %d: DecayLines found %d lines, the test wants a mode it misses", seed, len(plainLines))
		}
		if len(got) != 3 {
			continue
		}
		ok := true
		for _, m := range three {
			hit := false
			for _, l := range got {
				hit = hit || math.Abs(l.Hz-m.Fn) < 1/dur
			}
			ok = ok && hit
		}
		if !ok {
			t.Errorf("seed %d: lines %+v are not the modes'", seed, got)
			continue
		}
		found++
	}
	if found < 9 {
		t.Errorf("all three modes' lines on %d of 10 seeds, want at least 9", found)
	}
	for _, c := range []struct {
		name  string
		modes []sim.Mode
	}{
		{"1.7 Hz ζ 1 %", []sim.Mode{{Fn: 1.7, Zeta: 0.01, AmplitudePx: 0.5}}},
		{"4.3 Hz ζ 2 %", []sim.Mode{{Fn: 4.3, Zeta: 0.02, AmplitudePx: 0.4}}},
		{"0.8 Hz ζ 0.5 % 2 px", []sim.Mode{{Fn: 0.8, Zeta: 0.005, AmplitudePx: 2}}},
		{"1 Hz and a broad 3 Hz", []sim.Mode{{Fn: 1, Zeta: 0.01, AmplitudePx: 0.6}, {Fn: 3, Zeta: 0.03, AmplitudePx: 0.3}}},
	} {
		for seed := uint64(1); seed <= 10; seed++ {
			x, dt := pluck(t, c.modes, dur, noise, seed)
			got := modeLines([][]float64{x}, dt, DefaultMaxModes)
			if seed == 1 {
				t.Logf("%s: DecayLines %+v, modeLines %+v", c.name, window.DecayLinesAbove(x, dt, weakRatio), got)
			}
			if len(got) > 1 {
				t.Errorf("%s seed %d: %d lines %+v, want one", c.name, seed, len(got), got)
			}
		}
	}
}

// A higher mode that is small and decays fast holds little of the
// clip's power: the third of a beam's modes (4.1 Hz at ζ = 1.5 %, 0.15 px
// beside 0.6 px at 0.8 Hz and 0.3 px at 2.2 Hz, ζ = 1 %), read with
// 0.05 px of noise, carries under window.PeakShare, so that even a line
// 5× over its floor with 1 % of the power misses it; modeLines
// (weakShare) finds all three, each within a bin of its mode, on at least
// 9 of 10 seeds.
func TestModeLinesFindsAFaintDampedMode(t *testing.T) {
	const dur, noise = 20.0, 0.05
	three := []sim.Mode{{Fn: 0.8, Zeta: 0.01, AmplitudePx: 0.6}, {Fn: 2.2, Zeta: 0.01, AmplitudePx: 0.3}, {Fn: 4.1, Zeta: 0.015, AmplitudePx: 0.15}}
	found := 0
	for seed := uint64(1); seed <= 10; seed++ {
		x, dt := pluck(t, three, dur, noise, seed)
		atOnePercent := window.DecayLinesWith(x, dt, weakRatio, window.PeakShare)
		got := modeLines([][]float64{x}, dt, DefaultMaxModes)
		t.Logf("seed %d: 5× at 1 %% %+v; modeLines %+v", seed, atOnePercent, got)
		for _, l := range atOnePercent {
			if math.Abs(l.Hz-4.1) < 1/dur {
				t.Errorf("seed %d: the 4.1 Hz line carries 1 %% of the power (%+v): the test wants one that does not", seed, l)
			}
		}
		hits := 0
		for _, m := range three {
			for _, l := range got {
				if math.Abs(l.Hz-m.Fn) < 1/dur {
					hits++
					break
				}
			}
		}
		if len(got) == 3 && hits == 3 {
			found++
		}
	}
	if found < 9 {
		t.Errorf("all three modes' lines on %d of 10 seeds, want at least 9", found)
	}
}
