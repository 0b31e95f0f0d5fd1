// Package symeig finds one eigenpair of a real symmetric matrix — the
// smallest, or the j-th smallest — for a fraction of the cost of the full
// eigendecomposition: the readout of physd's closed form (the smallest)
// and the Fiedler vector of the camera-motion test's graph (the second).
package symeig

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"
)

// Work is Pair's scratch, kept across calls of one order. The zero value
// is ready; a Work is not safe for concurrent use.
type Work struct {
	n                 int
	d, e, tau, dd, ee []float64
	x, work           []float64
	lu                [4][]float64 // the shifted tridiagonal's LU factors
	piv               []bool
	impl              gonum.Implementation
	trdWork           int
}

// Pair returns the j-th smallest eigenvalue λ_j (j = 0 the smallest) of the
// symmetric n×n matrix c (upper triangle, row-major, stride n;
// overwritten) and a unit eigenvector v (len n) for it; ok is false when
// the iteration fails or j ≥ n.
//
// One eigenpair, not all n: c is reduced to tridiagonal
// form QᵀcQ = T (Dsytrd), T's eigenvalues are found without vectors
// (Dsterf, O(n²)), λ₀'s eigenvector x of T by inverse iteration, and
// v = Qx from Dsytrd's reflectors. That is about a sixth of the work of
// the full eigendecomposition (Dsyev forms Q and accumulates every QR
// rotation into n vectors). v's sign is fixed so that its largest
// component is positive. When λ_j is repeated or clustered, v is a unit
// vector of that eigenspace, as the full decomposition's would be.
func (ws *Work) Pair(c []float64, n, j int, v []float64) (float64, bool) {
	if n == 1 {
		v[0] = 1
		return c[0], true
	}
	if ws.n != n {
		*ws = Work{n: n, d: make([]float64, n), e: make([]float64, n-1), tau: make([]float64, n-1),
			dd: make([]float64, n), ee: make([]float64, n-1), x: make([]float64, n), piv: make([]bool, n)}
		for i := range ws.lu {
			ws.lu[i] = make([]float64, n)
		}
		q := []float64{0}
		ws.impl.Dsytrd(blas.Upper, n, c, n, ws.d, ws.e, ws.tau, q, -1)
		ws.trdWork = int(q[0])
		ws.work = make([]float64, max(ws.trdWork, 1))
	}
	impl := ws.impl
	impl.Dsytrd(blas.Upper, n, c, n, ws.d, ws.e, ws.tau, ws.work, ws.trdWork)
	copy(ws.dd, ws.d)
	copy(ws.ee, ws.e)
	if !impl.Dsterf(n, ws.dd, ws.ee) || j >= n {
		return 0, false
	}
	lambda := ws.dd[j]
	if !ws.inverseIteration(lambda) {
		return 0, false
	}
	copy(v, ws.x)
	applyQ(c, n, ws.tau, v)
	var big float64
	for _, s := range v {
		if math.Abs(s) > math.Abs(big) {
			big = s
		}
	}
	if big < 0 {
		for i := range v {
			v[i] = -v[i]
		}
	}
	return lambda, true
}

// inverseIteration sets ws.x to a unit eigenvector of the tridiagonal T
// (diagonal ws.d, off-diagonal ws.e) for its eigenvalue λ: x ← (T − λI)⁻¹x
// from a fixed start, normalised, three times. Each solve multiplies x's
// component along λ's eigenvector by 1/|λ − λ̂| (λ̂ the computed value,
// within rounding of λ), and the others by at most 1/gap, so one step
// would do unless eigenvalues cluster; a pivot that rounds to 0 is set to
// ε‖T‖, as LAPACK's Dlagts does.
func (ws *Work) inverseIteration(lambda float64) bool {
	n, d, e := ws.n, ws.d, ws.e
	var norm float64
	for i := range n {
		r := math.Abs(d[i] - lambda)
		if i > 0 {
			r += math.Abs(e[i-1])
		}
		if i+1 < n {
			r += math.Abs(e[i])
		}
		norm = math.Max(norm, r)
	}
	tiny := math.Max(norm, math.SmallestNonzeroFloat64) * 0x1p-52
	// LU of T − λI with partial pivoting (Dlagtf's scheme): row i of U
	// holds u0 (diagonal), u1, u2 (super-diagonals); l the multipliers;
	// piv[i] when rows i and i+1 were swapped.
	u0, u1, u2, l := ws.lu[0], ws.lu[1], ws.lu[2], ws.lu[3]
	a, b := d[0]-lambda, 0.0 // the current row's diagonal and super-diagonal
	if n > 1 {
		b = e[0]
	}
	for i := range n {
		if i == n-1 {
			u0[i], u1[i], u2[i], ws.piv[i] = a, 0, 0, false
			break
		}
		c := e[i]                    // sub-diagonal below a
		nd, ne := d[i+1]-lambda, 0.0 // next row: diagonal, super
		if i+2 < n {
			ne = e[i+1]
		}
		if math.Abs(a) >= math.Abs(c) {
			ws.piv[i] = false
			u0[i], u1[i], u2[i] = a, b, 0
			if a == 0 {
				a, u0[i] = tiny, tiny
			}
			m := c / a
			l[i] = m
			a, b = nd-m*b, ne
		} else {
			ws.piv[i] = true
			u0[i], u1[i], u2[i] = c, nd, ne
			m := a / c
			l[i] = m
			a, b = b-m*nd, -m*ne
		}
	}
	if u0[n-1] == 0 {
		u0[n-1] = tiny
	}
	x := ws.x
	for i := range n { // a start with no special symmetry
		x[i] = 1 + float64(i%7)/7
	}
	for range 3 {
		// Forward: apply the row swaps and multipliers.
		for i := 0; i+1 < n; i++ {
			if ws.piv[i] {
				x[i], x[i+1] = x[i+1], x[i]
			}
			x[i+1] -= l[i] * x[i]
		}
		// Back substitution with U.
		for i := n - 1; i >= 0; i-- {
			s := x[i]
			if i+1 < n {
				s -= u1[i] * x[i+1]
			}
			if i+2 < n {
				s -= u2[i] * x[i+2]
			}
			x[i] = s / u0[i] // never 0: the factorisation replaced zero pivots
		}
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		nrm := math.Sqrt(ss)
		if !(nrm > 0) || math.IsInf(nrm, 0) {
			return false
		}
		for i := range x {
			x[i] /= nrm
		}
	}
	return true
}

// applyQ replaces x by Qx, Q = H_{n−2} ⋯ H_1 H_0 the orthogonal factor of
// Dsytrd(blas.Upper) whose reflectors H_i = I − τ_i v vᵀ it left in a:
// v[i] = 1, v[0:i] = a[0:i, i+1] (row-major, stride n), v[i+1:] = 0. H_0
// acts first.
func applyQ(a []float64, n int, tau, x []float64) {
	for i := 0; i+1 < n; i++ {
		// x ← x − τ_i (vᵀx) v
		s := x[i]
		for r := range i {
			s += a[r*n+i+1] * x[r]
		}
		s *= tau[i]
		x[i] -= s
		for r := range i {
			x[r] -= s * a[r*n+i+1]
		}
	}
}
