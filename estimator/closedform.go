package estimator

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
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
	m := int(math.Ceil(math.Sqrt(float64(e.K + 1))))
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
	for d := 1; d < 2*m-1 && kept < e.K; d++ { // by total order p+q, low first
		for p := range m {
			q := d - p
			if q < 0 || q >= m || kept >= e.K {
				continue
			}
			for y := range h {
				for i := range w {
					row[y*w+i] = cx[p][i] * cy[q][y]
				}
			}
			var s2 float64
			for r := range n {
				var f float64
				for j, v := range x[r*e.P : (r+1)*e.P] {
					f += v * row[j]
				}
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
		return 0, fmt.Errorf("spatial basis: the frames do not change (no motion)")
	}
	return kept, nil
}

// solveReadout finds the linear readout u minimising the ODE residual of
// z = H u under the variance floor held as a constraint, jointly with the
// coefficients, by variable projection:
//
//	for fixed γ:  min_u uᵀA(γ)u / uᵀBu   (a generalised eigenproblem),
//	for fixed u:  γ = least squares        (FitODE),
//
// alternated from a grid of starting frequencies and damping ratios; the
// start with the smallest normalised residual wins. A(γ) = MᵀM/N with
// M the stacked stencil residual rows of the features (intercept projected
// out), B the mean per-clip covariance of the features. feats[m] is clip m's
// T_m×K feature matrix, row-major.
func solveReadout(feats [][]float64, k int, dt, tau float64, intercept bool) ([]float64, error) {
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
	best := math.Inf(1)
	var bestU []float64
	const nw = 10
	for iw := range nw {
		omega := wLo * math.Pow(wHi/wLo, float64(iw)/float64(nw-1))
		for _, zeta := range []float64{0.05, 0.7, 1.5} {
			u, score, g0 := refineReadout(feats, k, dt, 2*zeta*omega, omega*omega, intercept, wt, tau)
			if u != nil && score < best && g0 > 0 && math.Sqrt(g0) <= 1.5*wHi {
				best, bestU = score, u
			}
		}
	}
	if bestU == nil {
		return nil, fmt.Errorf("closed form: no start converged")
	}
	return bestU, nil
}

// refineReadout alternates the eigenproblem for u and least squares for γ
// from the stencil coefficients (g1, g0) until γ settles. It returns the
// readout, its normalised residual and the final γ0 (nil u on failure).
func refineReadout(feats [][]float64, k int, dt, g1, g0 float64, intercept bool, wt *mat.Dense, tau float64) ([]float64, float64, float64) {
	var u []float64
	var score float64
	for range 40 {
		var err error
		u, score, err = readoutFor(feats, k, dt, g1, g0, intercept, wt, tau)
		if err != nil {
			return nil, 0, 0
		}
		fit, err := FitODE(latentsOf(feats, k, u), dt, intercept)
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
func solveReadoutFrom(feats [][]float64, k int, dt, tau float64, intercept bool, g1, g0 float64) ([]float64, error) {
	wt, err := whitener(featureCovariance(feats, k))
	if err != nil {
		return nil, err
	}
	u, _, g0 := refineReadout(feats, k, dt, g1, g0, intercept, wt, tau)
	if u == nil || !(g0 > 0) {
		return nil, fmt.Errorf("closed form: warm start did not converge")
	}
	return u, nil
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

// readoutFor solves the generalised eigenproblem for fixed γ and returns u
// scaled so that uᵀBu = τ², with the normalised residual uᵀAu/uᵀBu.
func readoutFor(feats [][]float64, k int, dt, g1, g0 float64, intercept bool, wt *mat.Dense, tau float64) ([]float64, float64, error) {
	cm, c0, cp := stencilWeights(g1, g0, dt)
	var rows []float64
	n := 0
	for _, f := range feats {
		t := len(f) / k
		for i := 1; i+1 < t; i++ {
			for a := range k {
				rows = append(rows, cm*f[(i-1)*k+a]+c0*f[i*k+a]+cp*f[(i+1)*k+a])
			}
			n++
		}
	}
	if intercept {
		for a := range k {
			var s float64
			for i := range n {
				s += rows[i*k+a]
			}
			s /= float64(n)
			for i := range n {
				rows[i*k+a] -= s
			}
		}
	}
	M := mat.NewDense(n, k, rows)
	var A mat.SymDense
	A.SymOuterK(1/float64(n), M.T())
	// C = Wᵀ A W, r×r
	_, r := wt.Dims()
	var tmp, C mat.Dense
	tmp.Mul(wt.T(), &A)
	C.Mul(&tmp, wt)
	Cs := mat.NewSymDense(r, nil)
	for a := range r {
		for b := a; b < r; b++ {
			Cs.SetSym(a, b, 0.5*(C.At(a, b)+C.At(b, a)))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(Cs, true) {
		return nil, 0, fmt.Errorf("closed form: eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var V mat.Dense
	eig.VectorsTo(&V)
	y := mat.NewVecDense(r, mat.Col(nil, 0, &V))
	var u mat.VecDense
	u.MulVec(wt, y) // uᵀBu = yᵀy = 1
	out := make([]float64, k)
	for a := range k {
		out[a] = tau * u.AtVec(a)
	}
	return out, vals[0], nil
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
