package estimator

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/physd/physd/internal/par"
	"github.com/physd/physd/internal/symeig"
)

// spatialBasis sets the encoder's mean frame μ and its feature map W to the
// lowest 2-D cosine (DCT-II) modes of the w×h frame, all but the constant
// one, each row scaled so its feature has unit variance over frames:
//
//	W_{(p,q)}(x, y) = cos(π p (x+½)/w) · cos(π q (y+½)/h) / s_{pq},  0 ≤ p, q < m.
//
// Why not principal components: a moving object (a pendulum's bob) needs
// dozens of components before any linear readout of them tracks its
// position, while a smooth weighting of pixel positions (the angle about a
// pivot, a centroid) is a low-order spatial function. Smooth weights also
// make the latent a smooth function of the image, which is what state
// consistency (Def. 3.1) asks of an encoder. It returns the number of
// features kept (modes with no variance over the frames are dropped).
func (e *LowRank) spatialBasis(frames [][]float64, w, h int) (int, error) {
	n := len(frames)
	if w*h != e.P {
		return 0, fmt.Errorf("spatial basis: %d×%d frame for %d pixels", w, h, e.P)
	}
	for j := range e.Mean {
		e.Mean[j] = 0
	}
	for _, f := range frames {
		for j, v := range f {
			e.Mean[j] += v / float64(n)
		}
	}
	x, err := e.centred(frames)
	if err != nil {
		return 0, err
	}
	// At most a third as many features as frames: with more, the readout
	// could shape the latent into any trajectory it likes.
	limit := min(e.K, n/3)
	m := int(math.Ceil(math.Sqrt(float64(cosineModes + 1))))
	cx := make([][]float64, m)
	cy := make([][]float64, m)
	for p := range m {
		cx[p] = make([]float64, w)
		for i := range w {
			cx[p][i] = math.Cos(math.Pi * float64(p) * (float64(i) + 0.5) / float64(w))
		}
		cy[p] = make([]float64, h)
		for i := range h {
			cy[p][i] = math.Cos(math.Pi * float64(p) * (float64(i) + 0.5) / float64(h))
		}
	}
	wd := data(e.W)
	for i := range wd {
		wd[i] = 0
	}
	kept := 0
	row := make([]float64, e.P)
	feat := make([]float64, n)
	cosLimit := min(limit, cosineModes)
	for d := 1; d < 2*m-1 && kept < cosLimit; d++ { // by total order p+q, low first
		for p := range m {
			q := d - p
			if q < 0 || q >= m || kept >= cosLimit {
				continue
			}
			for y := range h {
				for i := range w {
					row[y*w+i] = cx[p][i] * cy[q][y]
				}
			}
			// The frames' features on e.workers goroutines, each its own.
			par.For(e.workers, n, func(r int) {
				var f float64
				for j, v := range x[r*e.P : (r+1)*e.P] {
					f += v * row[j]
				}
				feat[r] = f
			})
			var s2 float64
			for _, f := range feat {
				s2 += f * f
			}
			sd := math.Sqrt(s2 / float64(n))
			if !(sd > 1e-9) {
				continue
			}
			dst := wd[kept*e.P : (kept+1)*e.P]
			for j, v := range row {
				dst[j] = v / sd
			}
			kept++
		}
	}
	if kept < 2 {
		return 0, fmt.Errorf("spatial basis: the frames do not change, or only in overall brightness: %w", ErrNoMotion)
	}
	return e.fillPrincipal(x, n, kept, limit), nil
}

// maxPrincipalFrames is the most frames fillPrincipal computes principal
// directions from.
const maxPrincipalFrames = 600

// fillPrincipal appends, after the kept cosine modes, the leading
// principal directions of what those modes leave of the centred frames x
// (n frames), up to limit features. A sharp-edged object — the scale
// system's half-discs, whose radii only a handful of pixels resolve near
// their extremes — needs a readout no dozen smooth modes spans; the
// residual's principal directions carry exactly that detail. The cosine
// modes are orthogonal over the pixel grid, so the residual is a
// projection. x is overwritten with that residual: the caller is done
// with it, and a copy would be the fit's largest allocation.
func (e *LowRank) fillPrincipal(x []float64, n, kept, limit int) int {
	if kept >= limit {
		return kept
	}
	wd := data(e.W)
	res := x
	// A long window's directions come from every stride-th frame: the
	// Gram matrix and its eigendecomposition cost O(n²P) and O(n³), and
	// a few hundred frames spread over the window estimate the leading
	// directions of smooth motion as well as all of them do.
	if stride := (n + maxPrincipalFrames - 1) / maxPrincipalFrames; stride > 1 {
		m := (n + stride - 1) / stride
		res = make([]float64, 0, m*e.P)
		for r := 0; r < n; r += stride {
			res = append(res, x[r*e.P:(r+1)*e.P]...)
		}
		n = m
	}
	// Every loop below runs on e.workers goroutines over rows, frames or
	// features whose sums do not depend on one another, each in the order
	// one goroutine would take: the result is the same to the bit.
	norms := make([]float64, kept)
	for j := range kept {
		for _, v := range wd[j*e.P : (j+1)*e.P] {
			norms[j] += v * v
		}
	}
	par.For(e.workers, n, func(r int) {
		xr := res[r*e.P : (r+1)*e.P]
		for j := range kept {
			row := wd[j*e.P : (j+1)*e.P]
			var d float64
			for i, v := range row {
				d += xr[i] * v
			}
			// xr −= (d/‖row‖²)·row, the quotient taken once (Go does not
			// hoist it out of the loop) and the sum by gonum's kernel:
			// the same products and differences, to the bit.
			floats.AddScaled(xr, -(d / norms[j]), row)
		}
	})
	// G = R Rᵀ, upper triangle: G_ij = r_i·r_j as Dsyrk sums it
	// (f64.DotUnitary, which floats.Dot calls).
	g := make([]float64, n*n)
	par.For(e.workers, n, func(i int) {
		ri := res[i*e.P : (i+1)*e.P]
		for j := i; j < n; j++ {
			g[i*n+j] = floats.Dot(ri, res[j*e.P:(j+1)*e.P])
		}
	})
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(n, g), true) {
		return kept
	}
	vals := eig.Values(nil)
	var V mat.Dense
	eig.VectorsTo(&V)
	var cols []int
	for c := n - 1; c >= 0 && kept+len(cols) < limit; c-- {
		if !(vals[c] > rankTol*vals[n-1]) || !(vals[n-1] > 0) {
			break
		}
		cols = append(cols, c)
	}
	par.For(e.workers, len(cols), func(i int) {
		c := cols[i]
		// Pixel direction Rᵀv/‖Rᵀv‖; its feature then has variance λ/n,
		// so dividing by √(λ/n) gives unit variance like the cosine modes.
		dst := wd[(kept+i)*e.P : (kept+i+1)*e.P]
		clear(dst)
		for r := range n {
			if v := V.At(r, c); v != 0 {
				floats.AddScaled(dst, v, res[r*e.P:(r+1)*e.P])
			}
		}
		s := 1 / math.Sqrt(vals[c]) / math.Sqrt(vals[c]/float64(n))
		for i := range dst {
			dst[i] *= s
		}
	})
	return kept + len(cols)
}

// solveReadout finds the linear readout u minimising the ODE residual of
// z = H u under the variance floor held as a constraint, jointly with the
// coefficients, by variable projection:
//
//	for fixed γ:  min_u uᵀA(γ)u / uᵀBu   (a generalised eigenproblem),
//	for fixed u:  γ = least squares        (FitODE),
//
// alternated from a grid of starting frequencies and damping ratios (the
// starts refined on up to workers goroutines, par.For); the
// start with the smallest normalised residual wins, and refineTrajectory
// then moves it to the output-error optimum of its basin. A(γ) = MᵀM/N with
// M the stacked stencil residual rows of the features (intercept projected
// out), B the mean per-clip covariance of the features. feats[m] is clip m's
// T_m×K feature matrix, row-major.
func solveReadout(feats [][]float64, k int, dt, tau float64, off Offset, workers int) ([]float64, error) {
	B := featureCovariance(feats, k)
	wt, err := whitener(B)
	if err != nil {
		return nil, err
	}

	totalT := 0
	for _, f := range feats {
		totalT += len(f)/k - 1
	}
	span := float64(totalT) * dt
	if len(feats) > 0 {
		span /= float64(len(feats))
	}
	// Frequencies from half a cycle per window up to 8 samples a period:
	// beyond that neither the stencil nor a camera resolves the motion.
	wLo, wHi := 2*math.Pi/span*0.5, MaxOmega(dt)
	// The starts are independent: refined on up to workers goroutines,
	// then taken in grid order, so the winner is the one a serial loop
	// would keep.
	gram := newStencilGram(feats, k, off)
	const nw = 10
	zetas := []float64{0.05, 0.7, 1.5}
	type start struct {
		u         []float64
		score, g0 float64
	}
	starts := make([]start, nw*len(zetas))
	par.For(workers, len(starts), func(i int) {
		iw, zeta := i/len(zetas), zetas[i%len(zetas)]
		omega := wLo * math.Pow(wHi/wLo, float64(iw)/float64(nw-1))
		s := &starts[i]
		s.u, s.score, s.g0 = refineReadout(feats, gram, k, dt, 2*zeta*omega, omega*omega, off, wt, tau)
	})
	best := math.Inf(1)
	var bestU []float64
	for _, s := range starts {
		if s.u != nil && s.score < best && s.g0 > 0 && math.Sqrt(s.g0) <= 1.5*wHi {
			best, bestU = s.score, s.u
		}
	}
	if bestU == nil {
		return nil, fmt.Errorf("closed form: no start converged")
	}
	return refineTrajectory(feats, k, dt, tau, off, wt, bestU), nil
}

// refineReadout alternates the eigenproblem for u and least squares for γ
// from the stencil coefficients (g1, g0) until γ settles. It returns the
// readout, its normalised residual and the final γ0 (nil u on failure).
func refineReadout(feats [][]float64, gram *stencilGram, k int, dt, g1, g0 float64, off Offset, wt *mat.Dense, tau float64) ([]float64, float64, float64) {
	var u []float64
	var score float64
	var ws eigWork // the alternations' scratch, reused
	for range 40 {
		var err error
		u, score, err = readoutFor(gram, dt, g1, g0, wt, tau, &ws)
		if err != nil {
			return nil, 0, 0
		}
		fit, err := fitODECoef(latentsOf(feats, k, u), dt, off)
		if err != nil {
			return nil, 0, 0
		}
		d := math.Abs(fit.Gamma1-g1) + math.Abs(fit.Gamma0-g0)
		g1, g0 = fit.Gamma1, fit.Gamma0
		if d < 1e-10*(1+math.Abs(g0)) {
			break
		}
	}
	return u, score, g0
}

// featureCovariance is B, the mean per-clip covariance of the features.
func featureCovariance(feats [][]float64, k int) *mat.SymDense {
	B := mat.NewSymDense(k, nil)
	for _, f := range feats {
		t := len(f) / k
		mean := make([]float64, k)
		for i := range t {
			for a := range k {
				mean[a] += f[i*k+a] / float64(t)
			}
		}
		for a := range k {
			for b := a; b < k; b++ {
				var s float64
				for i := range t {
					s += (f[i*k+a] - mean[a]) * (f[i*k+b] - mean[b])
				}
				B.SetSym(a, b, B.At(a, b)+s/float64(t)/float64(len(feats)))
			}
		}
	}
	return B
}

// solveReadoutFrom is solveReadout from one start, the stencil
// coefficients (g1, g0) of a previous window: the warm path of online
// learning, where the encoder's features carry over and only the readout
// is re-projected onto the new window.
func solveReadoutFrom(feats [][]float64, k int, dt, tau float64, off Offset, g1, g0 float64) ([]float64, error) {
	wt, err := whitener(featureCovariance(feats, k))
	if err != nil {
		return nil, err
	}
	u, _, g0 := refineReadout(feats, newStencilGram(feats, k, off), k, dt, g1, g0, off, wt, tau)
	if u == nil || !(g0 > 0) {
		return nil, fmt.Errorf("closed form: warm start did not converge")
	}
	return refineTrajectory(feats, k, dt, tau, off, wt, u), nil
}

// whitener returns the k×r matrix V_r Λ_r^{-1/2} of B's eigenvectors whose
// eigenvalues exceed rankTol of the largest: a rank-revealing whitening.
// Features that are (numerically) linear combinations of others — a
// symmetric object lights up mirror-image cosine modes identically — then
// cost nothing instead of making B singular; every direction that moves
// stays, so a system with one informative feature keeps it.
func whitener(B *mat.SymDense) (*mat.Dense, error) {
	var eig mat.EigenSym
	if !eig.Factorize(B, true) {
		return nil, fmt.Errorf("closed form: eigendecomposition of the feature covariance failed")
	}
	vals := eig.Values(nil)
	var V mat.Dense
	eig.VectorsTo(&V)
	k := len(vals)
	top := vals[k-1]
	if !(top > 0) {
		return nil, fmt.Errorf("closed form: the features do not vary: %w", ErrDegenerate)
	}
	var keep []int
	for i, v := range vals {
		if v > rankTol*top {
			keep = append(keep, i)
		}
	}
	wt := mat.NewDense(k, len(keep), nil)
	for j, i := range keep {
		s := 1 / math.Sqrt(vals[i])
		for a := range k {
			wt.Set(a, j, V.At(a, i)*s)
		}
	}
	return wt, nil
}

// rankTol is the relative eigenvalue below which a direction of the
// feature covariance counts as absent.
const rankTol = 1e-9

// readoutFor solves the generalised eigenproblem for fixed γ = (g1, g0),
// A(γ) built from the features' cross-products g, and returns u scaled so
// that uᵀBu = τ², with the normalised residual uᵀAu/uᵀBu.
func readoutFor(g *stencilGram, dt, g1, g0 float64, wt *mat.Dense, tau float64, ws *eigWork) ([]float64, float64, error) {
	cm, c0, cp := stencilWeights(g1, g0, dt)
	return minReadout(g.A(cm, c0, cp, &ws.a), wt, tau, ws)
}

// minReadout solves min_u uᵀAu / uᵀBu through the whitener wt of B
// (whitener) and returns u scaled so that uᵀBu = τ², with the minimum.
// ws holds its scratch across calls; the whitened problem's smallest
// eigenpair is all it needs (symeig).
func minReadout(A *mat.SymDense, wt *mat.Dense, tau float64, ws *eigWork) ([]float64, float64, error) {
	k, r := wt.Dims()
	// C = wtᵀ A wt, by hand: k is a few dozen, where a parallel GEMM's
	// start-up costs more than the products. Row by row, as scaled
	// additions of contiguous rows (gonum's assembly kernel):
	//
	//	(A wt)[i, :] = Σ_l A[i, l] · wt[l, :]
	//	C[a, a:]     = Σ_l wt[l, a] · (A wt)[l, a:]   (the upper triangle)
	ar, wr := A.RawSymmetric(), wt.RawMatrix()
	aw := grow(&ws.aw, k*r) // A wt
	clear(aw)
	for i := range k {
		row := aw[i*r : (i+1)*r]
		for l := range k {
			ail := ar.Data[min(i, l)*ar.Stride+max(i, l)] // A's upper triangle
			floats.AddScaled(row, ail, wr.Data[l*wr.Stride:l*wr.Stride+r])
		}
	}
	cs := grow(&ws.cs, r*r)
	clear(cs)
	for l := range k {
		wl, al := wr.Data[l*wr.Stride:l*wr.Stride+r], aw[l*r:(l+1)*r]
		for a := range r {
			floats.AddScaled(cs[a*r+a:(a+1)*r], wl[a], al[a:])
		}
	}
	v0 := grow(&ws.v, r)
	lambda, ok := ws.eig.Pair(cs, r, 0, v0)
	if !ok {
		return nil, 0, fmt.Errorf("closed form: eigendecomposition failed")
	}
	// u = wt v₀ (uᵀBu = v₀ᵀv₀ = 1).
	u := make([]float64, k)
	blas64.Gemv(blas.NoTrans, 1, wr, blas64.Vector{N: r, Inc: 1, Data: v0}, 0, blas64.Vector{N: k, Inc: 1, Data: u})
	for a := range k {
		u[a] *= tau
	}
	return u, lambda, nil
}

// eigWork is minReadout's scratch: A(γ), the whitened problem, its
// smallest eigenvector and the eigensolver's workspace.
type eigWork struct {
	a         mat.SymDense
	aw, cs, v []float64
	eig       symeig.Work
}

// grow returns (*b)[:n], reallocating *b when it is shorter.
func grow(b *[]float64, n int) []float64 {
	if cap(*b) < n {
		*b = make([]float64, n)
	}
	return (*b)[:n]
}

func latentsOf(feats [][]float64, k int, u []float64) [][]float64 {
	z := make([][]float64, len(feats))
	for m, f := range feats {
		t := len(f) / k
		z[m] = make([]float64, t)
		for i := range t {
			var s float64
			for a := range k {
				s += u[a] * f[i*k+a]
			}
			z[m][i] = s
		}
	}
	return z
}

// MaxOmega is the highest angular frequency physd resolves at step dt:
// eight samples per period.
func MaxOmega(dt float64) float64 { return math.Pi / (4 * dt) }

// refineTrajectory takes the stencil's readout u and alternates, from its
// γ, the readout that brings the latent closest to an exact ODE solution
// (trajectoryReadout) with the output-error fit of γ (FitTrajectory),
// until γ settles. The stencil's problem finds the basin — its second
// difference penalises a rough latent, so no high-frequency trajectory
// woven from pixel detail can win — and the output error then weighs
// pixel noise once instead of through that difference. If a step fails it
// returns the last readout that worked.
func refineTrajectory(feats [][]float64, k int, dt, tau float64, off Offset, wt *mat.Dense, u []float64) []float64 {
	z := latentsOf(feats, k, u)
	st, err := fitODECoef(z, dt, off)
	if err != nil {
		return u
	}
	g1, g0, err := Exact(st.Gamma1, st.Gamma0, dt)
	if err != nil {
		return u
	}
	// FitTrajectory's search without its covariance, which this loop
	// does not use; FitTrajectory's own checks first.
	lens := make([]int, len(z))
	n := 0
	for m, c := range z {
		lens[m] = len(c)
		n += len(c)
	}
	if n < 2*len(z)+offsetColumns(off, len(z))+4 {
		return u
	}
	for range 30 {
		if checkFinite(z) != nil {
			return u
		}
		var flat []float64
		for _, c := range z {
			flat = append(flat, c...)
		}
		x, err := trajectoryLM(flat, seqLayout(lens), dt, [2]float64{g1, g0}, off, false)
		if err != nil || !(x[1] > 0) {
			return u
		}
		d := math.Abs(x[0]-g1) + math.Abs(x[1]-g0)
		g1, g0 = x[0], x[1]
		next, err := trajectoryReadout(feats, k, dt, g1, g0, off, wt, tau)
		if err != nil {
			return u
		}
		u = next
		z = latentsOf(feats, k, u)
		if d < 1e-9*(1+g0) {
			break
		}
	}
	return u
}

// cosineModes is how many smooth cosine modes the spatial basis starts
// with before principal directions fill the rest.
const cosineModes = 6

// trajectoryReadout solves, for fixed continuous (γ1, γ0), the readout u
// minimising ‖(I − P)Hu‖² / uᵀBu: P projects onto the exact solutions of
// the ODE (each clip's free response and the offsets off asks for), H stacks the
// features, B is their mean per-clip covariance; uᵀBu = τ².
func trajectoryReadout(feats [][]float64, k int, dt, g1, g0 float64, off Offset, wt *mat.Dense, tau float64) ([]float64, error) {
	lens := make([]int, len(feats))
	n := 0
	for m, f := range feats {
		lens[m] = len(f) / k
		n += lens[m]
	}
	pr := newProjector(seqLayout(lens), dt, off)
	if err := pr.basis(g1, g0); err != nil {
		return nil, err
	}
	// E = (I − P)H, column by column (H's column a gathered from the clips).
	E := mat.NewDense(n, k, nil)
	col := make([]float64, n)
	for a := range k {
		i := 0
		for _, f := range feats {
			for r := range len(f) / k {
				col[i] = f[r*k+a]
				i++
			}
		}
		pr.project(col)
		E.SetCol(a, col)
	}
	var A mat.SymDense
	A.SymOuterK(1/float64(n), E.T())
	u, _, err := minReadout(&A, wt, tau, &eigWork{})
	return u, err
}
