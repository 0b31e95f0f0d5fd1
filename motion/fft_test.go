package motion

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// TestPlan2 checks the half spectrum against the 2-D DFT summed directly,
// and the inverse against w·h times the input, on even and odd sizes.
func TestPlan2(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][2]int{{8, 8}, {9, 7}, {209, 20}, {104, 10}, {12, 33}, {26, 9}} {
		w, h := sz[0], sz[1]
		f := make([]float64, w*h)
		for i := range f {
			f[i] = rng.NormFloat64()
		}
		p := newPlan2(w, h)
		spec := make([]complex128, p.halfLen())
		p.forward(spec, f)
		var worst float64
		for v := range h {
			for u := range w/2 + 1 {
				var s complex128
				for y := range h {
					for x := range w {
						s += complex(f[y*w+x], 0) * cmplx.Exp(complex(0, -2*math.Pi*(float64(u*x)/float64(w)+float64(v*y)/float64(h))))
					}
				}
				worst = math.Max(worst, cmplx.Abs(s-spec[v*p.hw+u]))
			}
		}
		if worst > 1e-9 {
			t.Errorf("%d×%d: forward differs from the DFT by %.3g", w, h, worst)
		}
		back := make([]float64, w*h)
		p.inverse(back, spec)
		worst = 0
		for i, v := range f {
			worst = math.Max(worst, math.Abs(back[i]/float64(w*h)-v))
		}
		if worst > 1e-12 {
			t.Errorf("%d×%d: inverse(forward(f))/(w·h) differs from f by %.3g", w, h, worst)
		}
	}
}

// BenchmarkPlan2 times the forward and inverse 2-D transforms of the
// daemon's half-size motion test of a 640×60 region (104×10) and of its
// full size (209×20, an odd width: gonum's rows).
func BenchmarkPlan2(b *testing.B) {
	for _, sz := range [][2]int{{104, 10}, {209, 20}} {
		w, h := sz[0], sz[1]
		p := newPlan2(w, h)
		rng := rand.New(rand.NewPCG(1, 2))
		src := make([]float64, w*h)
		for i := range src {
			src[i] = rng.Float64()
		}
		spec, buf, dst := make([]complex128, p.halfLen()), make([]complex128, p.halfLen()), make([]float64, w*h)
		b.Run(fmt.Sprintf("forward/%dx%d", w, h), func(b *testing.B) {
			for b.Loop() {
				p.forward(spec, src)
			}
		})
		b.Run(fmt.Sprintf("inverse/%dx%d", w, h), func(b *testing.B) {
			for b.Loop() {
				copy(buf, spec)
				p.inverse(dst, buf)
			}
		})
	}
}
