package symeig

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Pair agrees with the full eigendecomposition: the same smallest (or
// second smallest) eigenvalue, and an eigenvector with residual ‖Cv − λv‖ at rounding level
// and the same direction (up to sign) when the smallest eigenvalue is
// separated; on matrices with a clustered or repeated smallest eigenvalue
// it still returns a unit vector of that eigenspace.
func TestPairSmallest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var ws Work
	for trial := range 200 {
		n := 1 + trial%40
		// C = Q diag(λ) Qᵀ with chosen spectra: random, a tight cluster at
		// the bottom, an exact double eigenvalue, widely scaled.
		lam := make([]float64, n)
		for i := range lam {
			lam[i] = rng.Float64() * 10
		}
		switch trial % 4 {
		case 1:
			if n > 1 {
				lam[1] = lam[0] + 1e-9
			}
		case 2:
			if n > 1 {
				lam[1] = lam[0]
			}
		case 3:
			for i := range lam {
				lam[i] = math.Pow(10, 8*rng.Float64()-4)
			}
		}
		g := mat.NewDense(n, n, nil)
		for i := range n {
			for j := range n {
				g.Set(i, j, rng.NormFloat64())
			}
		}
		var qr mat.QR
		qr.Factorize(g)
		var q mat.Dense
		qr.QTo(&q)
		var c mat.Dense
		c.Mul(&q, mat.NewDiagDense(n, lam))
		c.Mul(&c, q.T())
		sym := mat.NewSymDense(n, nil)
		raw := make([]float64, n*n)
		for i := range n {
			for j := i; j < n; j++ {
				v := (c.At(i, j) + c.At(j, i)) / 2
				sym.SetSym(i, j, v)
				raw[i*n+j] = v
			}
		}
		var es mat.EigenSym
		if !es.Factorize(sym, true) {
			t.Fatal("EigenSym failed")
		}
		vals := es.Values(nil)
		var vecs mat.Dense
		es.VectorsTo(&vecs)
		v := make([]float64, n)
		j := 0
		if trial%5 == 4 && n > 2 {
			j = 1 // the second smallest, as the Fiedler vector is
		}
		got, ok := ws.Pair(raw, n, j, v)
		if !ok {
			t.Fatalf("trial %d: failed", trial)
		}
		scale := math.Abs(vals[n-1])
		if math.Abs(got-vals[j]) > 1e-12*scale {
			t.Errorf("trial %d (n %d): λ_%d %v, EigenSym %v", trial, n, j, got, vals[j])
		}
		// ‖Cv − λv‖ and ‖v‖.
		var res, nv float64
		for i := range n {
			var s float64
			for j := range n {
				s += sym.At(i, j) * v[j]
			}
			res += (s - got*v[i]) * (s - got*v[i])
			nv += v[i] * v[i]
		}
		if math.Abs(nv-1) > 1e-12 || math.Sqrt(res) > 1e-10*scale {
			t.Errorf("trial %d (n %d): ‖v‖² %v, residual %.3g (scale %.3g)", trial, n, nv, math.Sqrt(res), scale)
		}
		separated := n > 1 && vals[j+1]-vals[j] > 1e-6*scale && (j == 0 || vals[j]-vals[j-1] > 1e-6*scale)
		if n > j+1 && separated {
			var dot float64
			for i := range n {
				dot += v[i] * vecs.At(i, j)
			}
			if math.Abs(math.Abs(dot)-1) > 1e-8 {
				t.Errorf("trial %d (n %d): |⟨v, EigenSym's v_%d⟩| = %v", trial, n, j, math.Abs(dot))
			}
		}
	}
}
