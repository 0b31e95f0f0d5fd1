package estimator

import "gonum.org/v1/gonum/mat"

// stencilGram holds what the closed form's A(γ) needs of the features,
// so that each alternation builds A in O(k²) instead of O(n k²). The
// stencil residual row of sample i (interior, per clip) is
//
//	r_i = c₋ f_{i−1} + c₀ f_i + c₊ f_{i+1} = α D2_i + β D1_i + γ F_i,
//	D2_i = f_{i−1} − 2 f_i + f_{i+1},  D1_i = f_{i+1} − f_{i−1},  F_i = f_i,
//	α = (c₋ + c₊)/2,  β = (c₊ − c₋)/2,  γ = c₋ + c₀ + c₊,
//
// so with the rows centred as the offset asks (all rows, each clip's, or
// none), A = (1/n) Σ_i r̃_i r̃_iᵀ is a quadratic form in (α, β, γ) of the
// six cross-products C_ab = Σ_i X̃_{a,i} X̃_{b,i}ᵀ, X ∈ {D2, D1, F}.
// The differences are formed before any product, as the rows were, so
// the second difference's small size costs no precision.
type stencilGram struct {
	k, n int
	// c holds C_ab, k×k row-major, in the order of pairs.
	c [6][]float64
}

// stencilPairs are the (a, b) of stencilGram.c, a ≤ b over (D2, D1, F).
var stencilPairs = [6][2]int{{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}}

// newStencilGram accumulates the cross-products of the clips' features
// (feats[m] is T_m×k, row-major) for the offset off.
func newStencilGram(feats [][]float64, k int, off Offset) *stencilGram {
	g := &stencilGram{k: k}
	for p := range g.c {
		g.c[p] = make([]float64, k*k)
	}
	// x holds one clip's three bases, rows of 3k: D2, D1, F.
	var x []float64
	var mean []float64
	flush := func(rows int) {
		if rows == 0 {
			return
		}
		if off != NoOffset {
			mean = append(mean[:0], make([]float64, 3*k)...)
			for i := range rows {
				for a, v := range x[i*3*k : (i+1)*3*k] {
					mean[a] += v
				}
			}
			for a := range mean {
				mean[a] /= float64(rows)
			}
			for i := range rows {
				row := x[i*3*k : (i+1)*3*k]
				for a := range row {
					row[a] -= mean[a]
				}
			}
		}
		for p, ab := range stencilPairs {
			c := g.c[p]
			for i := range rows {
				row := x[i*3*k : (i+1)*3*k]
				xa, xb := row[ab[0]*k:(ab[0]+1)*k], row[ab[1]*k:(ab[1]+1)*k]
				for a, va := range xa {
					ca := c[a*k : (a+1)*k]
					for b, vb := range xb {
						ca[b] += va * vb
					}
				}
			}
		}
		x = x[:0]
	}
	rows := 0
	for _, f := range feats {
		t := len(f) / k
		for i := 1; i+1 < t; i++ {
			fm, f0, fp := f[(i-1)*k:i*k], f[i*k:(i+1)*k], f[(i+1)*k:(i+2)*k]
			for a := range k {
				x = append(x, fm[a]-2*f0[a]+fp[a])
			}
			for a := range k {
				x = append(x, fp[a]-fm[a])
			}
			x = append(x, f0...)
			rows++
			g.n++
		}
		if off == ClipOffsets {
			flush(rows)
			rows = 0
		}
	}
	flush(rows)
	return g
}

// A is (1/n) Σ r̃ r̃ᵀ for the stencil weights (cm, c0, cp), written into
// dst (resized if empty).
func (g *stencilGram) A(cm, c0, cp float64, dst *mat.SymDense) *mat.SymDense {
	w := [3]float64{(cm + cp) / 2, (cp - cm) / 2, cm + c0 + cp}
	k := g.k
	if dst.IsEmpty() || dst.SymmetricDim() != k {
		*dst = *mat.NewSymDense(k, nil)
	}
	A := dst
	inv := 1 / float64(g.n)
	for a := range k {
		for b := a; b < k; b++ {
			var v float64
			for p, ab := range stencilPairs {
				c := g.c[p]
				wab := w[ab[0]] * w[ab[1]]
				if ab[0] == ab[1] {
					v += wab * c[a*k+b]
				} else { // C_ab + C_ba = C_ab + C_abᵀ
					v += wab * (c[a*k+b] + c[b*k+a])
				}
			}
			A.SetSym(a, b, v*inv)
		}
	}
	return A
}
