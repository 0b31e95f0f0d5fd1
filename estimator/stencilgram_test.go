package estimator

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestStencilGramMatchesRows checks A(γ) from the cross-products against
// A built from the stencil rows themselves, centred per offset mode:
// (1/n) Σ r̃ r̃ᵀ with r_i = c₋ f_{i−1} + c₀ f_i + c₊ f_{i+1}.
func TestStencilGramMatchesRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const k = 5
	var feats [][]float64
	for m, T := range []int{30, 2, 57} {
		f := make([]float64, T*k)
		for i := range T {
			for a := range k {
				f[i*k+a] = math.Sin(0.2*float64(i)+float64(a)) + 0.1*rng.NormFloat64() + float64(m)
			}
		}
		feats = append(feats, f)
	}
	for _, off := range []Offset{NoOffset, SharedOffset, ClipOffsets} {
		g := newStencilGram(feats, k, off)
		for _, gam := range [][2]float64{{0.1, 4}, {3, 0.5}, {-1, 40}} {
			cm, c0, cp := stencilWeights(gam[0], gam[1], 0.05)
			var rows []float64
			var clipStart []int
			for _, f := range feats {
				clipStart = append(clipStart, len(rows)/k)
				T := len(f) / k
				for i := 1; i+1 < T; i++ {
					for a := range k {
						rows = append(rows, cm*f[(i-1)*k+a]+c0*f[i*k+a]+cp*f[(i+1)*k+a])
					}
				}
			}
			n := len(rows) / k
			clipStart = append(clipStart, n)
			centre := func(lo, hi int) {
				if hi <= lo {
					return
				}
				for a := range k {
					var s float64
					for i := lo; i < hi; i++ {
						s += rows[i*k+a]
					}
					for i := lo; i < hi; i++ {
						rows[i*k+a] -= s / float64(hi-lo)
					}
				}
			}
			switch off {
			case SharedOffset:
				centre(0, n)
			case ClipOffsets:
				for m := range feats {
					centre(clipStart[m], clipStart[m+1])
				}
			}
			var want mat.SymDense
			want.SymOuterK(1/float64(n), mat.NewDense(n, k, rows).T())
			got := g.A(cm, c0, cp, &mat.SymDense{})
			scale := mat.Norm(&want, math.Inf(1))
			for a := range k {
				for b := range k {
					if d := math.Abs(got.At(a, b) - want.At(a, b)); d > 1e-12*scale {
						t.Fatalf("offset %v, γ %v: A[%d][%d] = %.15g from the cross-products, %.15g from the rows", off, gam, a, b, got.At(a, b), want.At(a, b))
					}
				}
			}
		}
	}
}
