package modes

import (
	"math"
	"testing"
)

func TestDecayResolutionIsOneBandwidth(t *testing.T) {
	if got := DecayResolution(1.25, 0.02); math.Abs(got-0.05) > 1e-12 {
		t.Errorf("DecayResolution(1.25 Hz, ζ 0.02) = %g Hz, want the half-power bandwidth 0.05", got)
	}
	for _, c := range [][2]float64{{0, 0.02}, {1, 0}, {-1, 0.02}, {1, -0.01}, {math.NaN(), 0.02}, {1, math.Inf(1)}} {
		if got := DecayResolution(c[0], c[1]); !math.IsNaN(got) {
			t.Errorf("DecayResolution(%g, %g) = %g, want NaN", c[0], c[1], got)
		}
	}
}
