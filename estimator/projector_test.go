package estimator

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestProjectorMatchesQR checks the projector's profiled residual against
// a dense QR solve of the same trajectory design, for clips of their own
// and for runs of one clip with gaps, under each offset.
func TestProjectorMatchesQR(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 17))
	const dt = 1.0 / 30
	layouts := map[string]func() (layout, error){
		"clips": func() (layout, error) { return seqLayout([]int{40, 7, 90}), nil },
		"runs": func() (layout, error) {
			lat := [][]float64{make([]float64, 30), make([]float64, 12), make([]float64, 50), make([]float64, 25)}
			return latentsLayout(lat, &Runs{Clip: []int{0, 0, 1, 1}, First: []int{0, 41, 3, 70}})
		},
	}
	for name, mk := range layouts {
		lay, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		for _, off := range []Offset{NoOffset, SharedOffset, ClipOffsets} {
			for _, g := range [][2]float64{{0.3, 40}, {9, 16}, {0, 4}} {
				z := make([]float64, lay.n())
				for i := range z {
					z[i] = math.Sin(0.3*float64(i)) + 0.1*rng.NormFloat64()
				}
				want, _, err := projectedResidual(z, lay, g[0], g[1], dt, off)
				if err != nil {
					t.Fatal(err)
				}
				got := make([]float64, len(z))
				if err := newProjector(lay, dt, off).residual(z, g[0], g[1], got); err != nil {
					t.Fatal(err)
				}
				var d, s float64
				for i := range got {
					d = math.Max(d, math.Abs(got[i]-want[i]))
					s = math.Max(s, math.Abs(z[i]))
				}
				if d > 1e-10*s {
					t.Errorf("%s, offset %v, γ = %v: residual differs from QR's by %.3g (scale %.3g)", name, off, g, d, s)
				}
			}
		}
	}
}
