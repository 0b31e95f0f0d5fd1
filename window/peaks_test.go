package window

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sines is n samples dt apart of Σ a·sin(2πf t + φ) over (f, a) pairs,
// plus white noise of rms sd and a drift of slope per second.
func sines(rng *rand.Rand, n int, dt, sd, slope float64, fa ...float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		t := float64(i) * dt
		x[i] = slope*t + sd*rng.NormFloat64()
		for k := 0; k+1 < len(fa); k += 2 {
			x[i] += fa[k+1] * math.Sin(2*math.Pi*fa[k]*t+float64(k))
		}
	}
	return x
}

// TopPeak finds the highest line that stands out, whatever the drift
// and whatever lower line is stronger, to within a bin of the window.
func TestTopPeak(t *testing.T) {
	const dt, n = 1.0 / 30, 181
	bin := 1 / (n * dt) // 0.166 Hz
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		x    []float64
		want float64
	}{
		{"one mode", sines(rng, n, dt, 0.1, 0, 2, 1), 2},
		{"drifting", sines(rng, n, dt, 0.1, 3, 1.5, 1), 1.5},
		{"a second mode at a third", sines(rng, n, dt, 0.05, 0, 1, 1, 2.7, 0.33), 2.7},
		{"a harmonic at a fifth", sines(rng, n, dt, 0.01, 0, 1.5, 1, 4.5, 0.2), 4.5},
		// A twentieth in amplitude is 0.25 % of the power: no mode a
		// fit would find beside the first.
		{"a harmonic at a twentieth", sines(rng, n, dt, 0.005, 0, 1.5, 1, 4.5, 0.05), 1.5},
		// Below bin 7 (1.16 Hz here) nothing is searched: any
		// decimation keeps eight samples a period of it.
		{"a slow mode", sines(rng, n, dt, 0.01, 0, 0.8, 1), 0},
		{"noise alone", sines(rng, n, dt, 1, 0, 0, 0), 0},
		{"drift alone", sines(rng, n, dt, 0.01, 2, 0, 0), 0},
		{"too short", sines(rng, 20, dt, 0.01, 0, 3, 1), 0},
	} {
		got := TopPeak([][]float64{tc.x}, dt)
		if math.Abs(got-tc.want) > bin {
			t.Errorf("%s: TopPeak = %.3f Hz, want %.3f ± %.3f", tc.name, got, tc.want, bin)
		}
	}
	// The highest over several series.
	if got := TopPeak([][]float64{sines(rng, n, dt, 0.05, 0, 0.8, 1), sines(rng, n, dt, 0.05, 0, 3.2, 1)}, dt); math.Abs(got-3.2) > bin {
		t.Errorf("two series: TopPeak = %.3f Hz, want 3.2", got)
	}
	if got := TopPeak([][]float64{{math.NaN(), 1, 2}}, dt); got != 0 {
		t.Errorf("non-finite series: TopPeak = %v, want 0", got)
	}
}

// TopPeak finds a line in noise as seldom as PeakRatio says: white
// noise, a random walk (a red spectrum) and both together, 2000 windows
// each.
func TestTopPeakInNoise(t *testing.T) {
	const dt, n, trials = 1.0 / 30, 181, 2000
	rng := rand.New(rand.NewPCG(3, 4))
	for _, kind := range []string{"white", "random walk", "walk and white"} {
		found := 0
		for range trials {
			x := make([]float64, n)
			walk := 0.0
			for i := range x {
				walk += rng.NormFloat64()
				switch kind {
				case "white":
					x[i] = rng.NormFloat64()
				case "random walk":
					x[i] = walk
				default:
					x[i] = 0.3*walk + 3*rng.NormFloat64()
				}
			}
			if TopPeak([][]float64{x}, dt) > 0 {
				found++
			}
		}
		t.Logf("%s: a line found in %d of %d windows", kind, found, trials)
		// Measured 0.15 % for white noise (PeakRatio); at most 0.5 %.
		if found > trials/200 {
			t.Errorf("%s: a line found in %d of %d windows of noise", kind, found, trials)
		}
	}
}

// AutoBinBand keeps eight bins a period of the highest line, at most
// BlindBin without a line on a line that certified nothing, and 48 bins
// a window.
func TestAutoBinBand(t *testing.T) {
	for _, tc := range []struct {
		name        string
		f, dt       float64
		frames, cur int
		blind       bool
		want        int
	}{
		// 30/(8·0.82) = 4.6: the window's 48 bins bind (180/48).
		{"slow line", 0.82, 1.0 / 30, 181, 1, true, 3},
		{"slow line, long window", 0.82, 1.0 / 30, 1801, 1, true, 4},
		// 30/(8·1.79) = 2.1.
		{"line at 1.79 Hz", 1.79, 1.0 / 30, 181, 1, true, 2},
		{"line at 2.79 Hz", 2.79, 1.0 / 30, 181, 1, true, 1},
		// Seen through bin 3: the same choice.
		{"line at 1.79 Hz, binned", 1.79, 3.0 / 30, 61, 3, true, 2},
		{"no line", 0, 1.0 / 30, 1801, 1, true, BlindBin},
		{"no line, bounded by its mode", 0, 1.0 / 30, 1801, 1, false, 8},
		{"no line, short window", 0, 1.0 / 30, 60, 1, true, 1},
		{"not finite", math.Inf(1), 1.0 / 30, 181, 1, true, 1},
	} {
		if got := AutoBinBand(tc.f, tc.dt, tc.frames, tc.cur, 8, tc.blind); got != tc.want {
			t.Errorf("%s: AutoBinBand = %d, want %d", tc.name, got, tc.want)
		}
	}
}
