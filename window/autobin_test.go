package window

import (
	"math"
	"testing"
)

// AutoBin keeps sixteen bins a period and 48 a window, whichever binds,
// and never chooses outside 1…max.
func TestAutoBin(t *testing.T) {
	w := func(fHz float64) float64 { return math.Pow(2*math.Pi*fHz, 2) }
	for _, tc := range []struct {
		name           string
		g1, g0, dt     float64
		frames, cur, m int
		want           int
	}{
		// A 0.55 Hz mode at 30 fps, 6 s windows: 30/(16·0.55) = 3.4.
		{"cart at 30 fps", 0.37, w(0.549), 1.0 / 30, 180, 1, 8, 3},
		// The same seen through bin 3: the same choice.
		{"cart binned", 0.37, w(0.549), 3.0 / 30, 60, 3, 8, 3},
		// The default pendulum (γ0 = 4) at 20 fps, 95 frames: the
		// window's 48 bins bind first (sixteen a period would allow 3).
		{"pendulum", 0.08, 4, 1 / 20.0, 95, 1, 8, 2},
		{"pendulum binned", 0.08, 4, 2 / 20.0, 48, 2, 8, 2},
		// A shorter window cannot be binned at all.
		{"short window", 0.08, 4, 1 / 20.0, 60, 1, 8, 1},
		// A 2 Hz mode at 30 fps: fewer than 16 bins a period at N = 1
		// already.
		{"fast mode", 0.2, w(2), 1.0 / 30, 180, 1, 8, 1},
		// A slow mode with long windows stops at the most allowed.
		{"slow mode", 0.05, w(0.1), 1.0 / 30, 1800, 1, 8, 8},
		// An overdamped decay is bounded by its faster rate, 9.9/s here,
		// not by √γ0 = 1.
		{"overdamped", 10, 1, 1.0 / 30, 900, 1, 8, 1},
		{"no mode", 0.1, -1, 1.0 / 30, 180, 1, 8, 1},
		{"not finite", math.NaN(), 4, 1.0 / 30, 180, 1, 8, 1},
	} {
		if got := AutoBin(tc.g1, tc.g0, tc.dt, tc.frames, tc.cur, tc.m); got != tc.want {
			t.Errorf("%s: AutoBin = %d, want %d", tc.name, got, tc.want)
		}
	}
}
