package motion

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"
)

// TestColFFT checks the column transform against the DFT summed directly
// (with exactly reduced angles), both directions, for lengths made of
// every radix (4, 2, 3, 5 and direct primes) and several column counts.
func TestColFFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 20, 24, 25, 30, 49, 60, 77} {
		for _, b := range []int{1, 3, 53} {
			x := make([]complex128, n*b)
			for i := range x {
				x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
			}
			f := newColFFT(n, b)
			for _, inverse := range []bool{false, true} {
				got := slices.Clone(x)
				f.transform(got, inverse)
				sign := -1.0
				if inverse {
					sign = 1
				}
				var worst, scale float64
				for k := range n {
					for c := range b {
						var s complex128
						for j := range n {
							ang := sign * 2 * math.Pi * float64(j*k%n) / float64(n)
							s += x[j*b+c] * cmplx.Rect(1, ang)
						}
						worst = math.Max(worst, cmplx.Abs(s-got[k*b+c]))
						scale = math.Max(scale, cmplx.Abs(s))
					}
				}
				if worst > 1e-13*scale*float64(n) {
					t.Errorf("n = %d, b = %d, inverse %v: differs from the DFT by %.3g (scale %.3g)", n, b, inverse, worst, scale)
				}
			}
			// inverse(forward(x)) = n·x.
			got := slices.Clone(x)
			f.transform(got, false)
			f.transform(got, true)
			var worst float64
			for i := range x {
				worst = math.Max(worst, cmplx.Abs(got[i]/complex(float64(n), 0)-x[i]))
			}
			if worst > 1e-13 {
				t.Errorf("n = %d, b = %d: inverse(forward(x))/n differs from x by %.3g", n, b, worst)
			}
		}
	}
}

func TestRadices(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want []int
	}{{1, nil}, {10, []int{2, 5}}, {16, []int{4, 4}}, {24, []int{4, 2, 3}}, {49, []int{7, 7}}, {104, []int{4, 2, 13}}} {
		if got := radices(tc.n); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("radices(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
}

// BenchmarkColumns times the columns of a half spectrum of a 104×10 frame
// (the daemon's half-size motion test of a 640×60 region): gonum's
// transform column by column against colFFT.
func BenchmarkColumns(b *testing.B) {
	p := newPlan2(104, 10)
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]complex128, p.halfLen())
	for i := range x {
		x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
	}
	b.Run("gonum", func(b *testing.B) {
		col := fourier.NewCmplxFFT(p.h)
		a, c := make([]complex128, p.h), make([]complex128, p.h)
		for b.Loop() {
			for u := range p.hw {
				for y := range p.h {
					a[y] = x[y*p.hw+u]
				}
				col.Sequence(c, a)
				for y := range p.h {
					x[y*p.hw+u] = c[y]
				}
			}
		}
	})
	b.Run("colFFT", func(b *testing.B) {
		for b.Loop() {
			p.columns(x, true)
		}
	})
}
