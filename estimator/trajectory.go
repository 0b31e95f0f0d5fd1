package estimator

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// TrajectoryFit is the output-error fit of the ODE to latents: the exact
// sampled solution
//
//	ẑ_m(t_k) = c + e₁ᵀ e^{AΔt·k} x_m,   A = [[0, 1], [−γ0, −γ1]],
//
// with (γ1, γ0) and the offset c shared (or one c_m per clip, see Offset)
// and one initial state x_m per clip,
// chosen to minimise Σ (z − ẑ)². Unlike the stencil's equation error, whose
// second difference multiplies pixel noise by 4/Δt², the output error
// weighs noise once: on a latent with white noise σ the frequency error
// falls as σ/N^{3/2} instead of σ/(Δt²√N). That is what makes γ accurate
// on coarse, quantised renderings (the scale system: a few pixels decide
// the radius near its extremes).
type TrajectoryFit struct {
	Gamma1, Gamma0 float64
	// Offset is c, the latent's equilibrium level (SharedOffset; else 0).
	Offset float64
	// ClipOffsets holds each clip's own c_m (ClipOffsets; else nil).
	ClipOffsets []float64
	// X0 holds each clip's initial state (z, z') relative to the offset
	// (one for all runs of a clip, at its first run's start).
	X0 [][2]float64
	// Cov is the Newey–West sandwich covariance of (γ1, γ0).
	Cov [2][2]float64
	// Fitted is ẑ per clip; Resid is z − ẑ.
	Fitted, Resid [][]float64
	// RSS is Σ (z − ẑ)²; Signal is Σ (z − z̄)² (clip means).
	RSS, Signal float64
	// lay places the sequences (FitTrajectoryRuns); X0 and ClipOffsets
	// are per group of it.
	lay layout
}

// RelResidual is the RMS of z − ẑ over the RMS of the centred latent.
func (f *TrajectoryFit) RelResidual() float64 {
	if !(f.Signal > 0) {
		return math.Inf(1)
	}
	return math.Sqrt(f.RSS / f.Signal)
}

// stateMap returns Φ = e^{AΔt} for A = [[0, 1], [−γ0, −γ1]], in closed
// form (Cayley–Hamilton: e^{At} = e^{st}(C I + S (A − sI)) for the
// eigenvalues s ± q, s = −γ1/2, q² = γ1²/4 − γ0):
//
//	C = cosh qt, S = sinh(qt)/q        (q² > 0, overdamped)
//	C = cos ωt,  S = sin(ωt)/ω         (q² = −ω² < 0, underdamped)
//
// with their series where |q|t is small (critical damping).
func stateMap(g1, g0, dt float64) ([2][2]float64, error) {
	s := -g1 / 2
	q2 := g1*g1/4 - g0
	x := q2 * dt * dt
	var c, sh float64
	switch {
	case math.Abs(x) < 1e-4:
		// cosh √x = 1 + x/2 + x²/24 + …, sinh(√x)/√x = 1 + x/6 + x²/120 + …
		c = 1 + x/2*(1+x/12*(1+x/30))
		sh = dt * (1 + x/6*(1+x/20*(1+x/42)))
	case x > 0:
		q := math.Sqrt(q2)
		c, sh = math.Cosh(q*dt), math.Sinh(q*dt)/q
	default:
		w := math.Sqrt(-q2)
		c, sh = math.Cos(w*dt), math.Sin(w*dt)/w
	}
	e := math.Exp(s * dt)
	c, sh = e*c, e*sh
	phi := [2][2]float64{{c - s*sh, sh}, {-g0 * sh, c + (-g1-s)*sh}}
	for _, r := range phi {
		for _, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return phi, fmt.Errorf("state map of (γ1, γ0) = (%g, %g) at Δt=%g is not finite", g1, g0, dt)
			}
		}
	}
	return phi, nil
}

// offsetColumns is how many constant columns the design carries for M clips.
func offsetColumns(off Offset, clips int) int {
	switch off {
	case SharedOffset:
		return 1
	case ClipOffsets:
		return clips
	}
	return 0
}

// trajectoryDesign fills X (N×q, q = 2G + offsetColumns) with the
// free-response columns e₁ᵀΦᵏ e_j of each group of sequences (a clip and
// its runs, k counted from its first sample across the gaps) and the
// offsets' constant columns: one shared, or one per group (its
// indicator).
func trajectoryDesign(lay layout, g1, g0, dt float64, off Offset) (*mat.Dense, error) {
	phi, err := stateMap(g1, g0, dt)
	if err != nil {
		return nil, err
	}
	q := lay.q(off)
	X := mat.NewDense(lay.n(), q, nil)
	row := 0
	eachPower(lay, phi, func(m, i int, r0, r1 float64) {
		g := lay.group[m]
		X.Set(row, 2*g, r0)
		X.Set(row, 2*g+1, r1)
		switch off {
		case SharedOffset:
			X.Set(row, q-1, 1)
		case ClipOffsets:
			X.Set(row, 2*lay.groups+g, 1)
		}
		row++
	})
	return X, nil
}

// eachPower calls f for every sample i of every sequence m, in stacked
// order, with r = e₁ᵀΦᵏ, k the sample's frame from its group's first
// sample: r advanced by r ← rΦ, through the gaps between runs too.
func eachPower(lay layout, phi [2][2]float64, f func(m, i int, r0, r1 float64)) {
	var r0, r1 float64
	at := 0 // the frame r stands for, from the group's first sample
	for m, l := range lay.lens {
		if m == 0 || lay.group[m] != lay.group[m-1] {
			r0, r1, at = 1, 0, 0
		}
		for ; at < lay.skip[m]; at++ {
			r0, r1 = r0*phi[0][0]+r1*phi[1][0], r0*phi[0][1]+r1*phi[1][1]
		}
		for i := range l {
			f(m, i, r0, r1)
			r0, r1 = r0*phi[0][0]+r1*phi[1][0], r0*phi[0][1]+r1*phi[1][1]
			at++
		}
	}
}

// projectedResidual returns z − X(γ)β̂(γ) for the least-squares β̂, and β̂.
func projectedResidual(z []float64, lay layout, g1, g0, dt float64, off Offset) ([]float64, []float64, error) {
	X, err := trajectoryDesign(lay, g1, g0, dt, off)
	if err != nil {
		return nil, nil, err
	}
	var qr mat.QR
	qr.Factorize(X)
	var beta mat.VecDense
	if err := qr.SolveVecTo(&beta, false, mat.NewVecDense(len(z), z)); err != nil {
		return nil, nil, fmt.Errorf("trajectory design: %w", ErrDegenerate)
	}
	var fit mat.VecDense
	fit.MulVec(X, &beta)
	r := make([]float64, len(z))
	for i := range z {
		r[i] = z[i] - fit.AtVec(i)
	}
	return r, beta.RawVector().Data, nil
}

func sumSq(r []float64) float64 {
	var s float64
	for _, v := range r {
		s += v * v
	}
	return s
}

// FitTrajectory fits the sampled ODE solution to the latents by
// Levenberg–Marquardt on (γ1, γ0), the initial states and offset being
// solved exactly at every trial (variable projection), from the start
// (g1, g0) — the stencil's estimate mapped by Exact.
func FitTrajectory(latents [][]float64, dt, g1, g0 float64, off Offset) (*TrajectoryFit, error) {
	return FitTrajectoryRuns(latents, nil, dt, g1, g0, off)
}

// FitTrajectoryRuns is FitTrajectory of latent sequences placed by runs:
// the runs of one clip share one initial state, on the clip's time axis.
// nil runs make each sequence a clip of its own.
func FitTrajectoryRuns(latents [][]float64, runs *Runs, dt, g1, g0 float64, off Offset) (*TrajectoryFit, error) {
	if err := checkFinite(latents); err != nil {
		return nil, fmt.Errorf("fit trajectory: %w", err)
	}
	lay, err := latentsLayout(latents, runs)
	if err != nil {
		return nil, fmt.Errorf("fit trajectory: %w", err)
	}
	var z []float64
	for _, l := range latents {
		z = append(z, l...)
	}
	q := lay.q(off)
	if len(z) < q+4 {
		return nil, fmt.Errorf("fit trajectory: %d samples for %d parameters: %w", len(z), q+2, ErrDegenerate)
	}
	x, err := trajectoryLM(z, lay, dt, [2]float64{g1, g0}, off, false)
	if err != nil {
		return nil, err
	}
	return trajectoryResult(latents, z, lay, x, dt, off)
}

// trajectoryLM is FitTrajectory's Levenberg–Marquardt search on (γ1, γ0)
// from x over the stacked latents z (placed by lay), the initial states
// and offsets projected out at every trial. It returns the minimiser,
// without the covariance (the bootstrap refits only need γ). fast sums
// in projector.fast's order.
func trajectoryLM(z []float64, lay layout, dt float64, x [2]float64, off Offset, fast bool) ([2]float64, error) {
	pr := newProjector(lay, dt, off)
	pr.fast = fast
	n := len(z)
	r, nr, work := make([]float64, n), make([]float64, n), make([]float64, 2*n)
	if err := pr.residual(z, x[0], x[1], r); err != nil {
		return x, fmt.Errorf("fit trajectory: %w", err)
	}
	rss := pr.sumSq(r)
	lambda := 1e-3
	jac := make([][2]float64, n)
	for range 100 {
		// pr holds the basis and Qᵀz of x: its residual was the last
		// computed, at the start or as the step accepted.
		if err := pr.jacobian(jac, work); err != nil {
			return x, fmt.Errorf("fit trajectory: Jacobian at (%g, %g): %w", x[0], x[1], ErrDegenerate)
		}
		var a, b, c, ga, gb float64
		for i := range z {
			a += jac[i][0] * jac[i][0]
			b += jac[i][0] * jac[i][1]
			c += jac[i][1] * jac[i][1]
			ga += jac[i][0] * r[i]
			gb += jac[i][1] * r[i]
		}
		improved := false
		for lambda < 1e10 {
			aa, cc := a+lambda*a, c+lambda*c
			det := aa*cc - b*b
			if !(det > 0) {
				lambda *= 10
				continue
			}
			step := [2]float64{-(cc*ga - b*gb) / det, -(aa*gb - b*ga) / det}
			nx := [2]float64{x[0] + step[0], x[1] + step[1]}
			if err := pr.residual(z, nx[0], nx[1], nr); err == nil {
				if n := pr.sumSq(nr); n < rss {
					done := rss-n <= 1e-14*rss || math.Abs(step[0])+math.Abs(step[1]) <= 1e-12*(1+math.Abs(x[1]))
					x, rss = nx, n
					r, nr = nr, r
					lambda = math.Max(lambda/10, 1e-12)
					improved = true
					if done {
						lambda = 1e10
					}
					break
				}
			}
			lambda *= 10
		}
		if !improved || lambda >= 1e10 {
			break
		}
	}
	return x, nil
}

// projector computes the profiled residual z − X(γ)β̂(γ) of the
// trajectory design (trajectoryDesign) over and over without allocating:
// the search evaluates it at every trial step, the bootstrap B times that,
// and it gives the search its Jacobian (jacobian) from what it computed.
// It orthonormalises X's q columns by modified Gram–Schmidt, each column
// twice ("twice is enough", Giraud et al. 2005), which is as accurate as
// Householder QR for the residual, and subtracts z's projection. A
// clip's state columns (and its own offset) are zero outside the clip,
// so each column is kept with its support [lo, hi) and products run over
// supports only: a set of M clips costs M times less than a dense QR.
type projector struct {
	lay    layout
	off    Offset
	dt     float64
	n, q   int
	cols   []float64 // q columns of length n, column c at cols[c·n:]
	lo, hi []int     // column c is zero outside rows lo[c] … hi[c]−1

	// What the last basis and residual left for the Jacobian: X = QR
	// (R upper triangular, q×q, row-major), Qᵀz of the last residual,
	// and the γ and Φ = e^{AΔt} of the basis.
	r, qz  []float64
	beta   []float64 // β̂, jacobian's scratch
	g1, g0 float64
	phi    [2][2]float64

	// fast sums each inner product in four interleaved parts and scales
	// by a reciprocal instead of dividing each sample: about a fifth less
	// time, the same results to rounding but not to the bit. Only the
	// bootstrap's refits use it: the fit whose residual seeds the
	// bootstrap's random stream (residualSeed) must give the same bits
	// every time, its refits only the same γ* to the search's tolerance.
	fast bool
}

func newProjector(lay layout, dt float64, off Offset) *projector {
	n, q := lay.n(), lay.q(off)
	return &projector{lay: lay, off: off, dt: dt, n: n, q: q, cols: make([]float64, n*q),
		lo: make([]int, q), hi: make([]int, q), r: make([]float64, q*q), qz: make([]float64, q), beta: make([]float64, q)}
}

// basis sets p.cols to an orthonormal basis of the columns of X(γ).
func (p *projector) basis(g1, g0 float64) error {
	phi, err := stateMap(g1, g0, p.dt)
	if err != nil {
		return err
	}
	n, q, lay := p.n, p.q, p.lay
	p.g1, p.g0, p.phi = g1, g0, phi
	clear(p.cols)
	clear(p.r)
	for c := range q {
		p.lo[c], p.hi[c] = n, 0
	}
	// eachPower's recursion written out: a call per row cost as much as
	// the orthonormalisation below.
	var r0, r1 float64
	row, at := 0, 0 // at: the frame r stands for, from the group's first sample
	for m, l := range lay.lens {
		g := lay.group[m]
		if m == 0 || g != lay.group[m-1] {
			r0, r1, at = 1, 0, 0
		}
		for ; at < lay.skip[m]; at++ {
			r0, r1 = r0*phi[0][0]+r1*phi[1][0], r0*phi[0][1]+r1*phi[1][1]
		}
		if l == 0 {
			continue
		}
		c0, c1 := p.cols[2*g*n+row:2*g*n+row+l], p.cols[(2*g+1)*n+row:(2*g+1)*n+row+l]
		for i := range c0 {
			c0[i], c1[i] = r0, r1
			r0, r1 = r0*phi[0][0]+r1*phi[1][0], r0*phi[0][1]+r1*phi[1][1]
		}
		at += l
		cs := [3]int{2 * g, 2*g + 1, -1}
		switch p.off {
		case SharedOffset:
			cs[2] = q - 1
		case ClipOffsets:
			cs[2] = 2*lay.groups + g
		}
		if cs[2] >= 0 {
			ones := p.cols[cs[2]*n+row : cs[2]*n+row+l]
			for i := range ones {
				ones[i] = 1
			}
		}
		for _, c := range cs {
			if c >= 0 {
				p.lo[c], p.hi[c] = min(p.lo[c], row), max(p.hi[c], row+l)
			}
		}
		row += l
	}
	for c := range q {
		if p.lo[c] >= p.hi[c] {
			return fmt.Errorf("trajectory design: column %d is empty: %w", c, ErrDegenerate)
		}
		v := p.cols[c*n : (c+1)*n]
		norm0 := math.Sqrt(p.sumSq(v[p.lo[c]:p.hi[c]]))
		for range 2 {
			for d := range c {
				lo, hi := max(p.lo[c], p.lo[d]), min(p.hi[c], p.hi[d])
				if lo >= hi {
					continue // disjoint supports: already orthogonal
				}
				p.lo[c], p.hi[c] = min(p.lo[c], p.lo[d]), max(p.hi[c], p.hi[d])
				p.r[d*q+c] += p.subtract(v[p.lo[d]:p.hi[d]], p.cols[d*n+p.lo[d]:d*n+p.hi[d]])
			}
		}
		w := v[p.lo[c]:p.hi[c]]
		norm := math.Sqrt(p.sumSq(w))
		if !(norm > 1e-15*norm0) {
			return fmt.Errorf("trajectory design: %w", ErrDegenerate)
		}
		p.r[c*q+c] = norm
		if p.fast {
			floats.Scale(1/norm, w)
			continue
		}
		for i := range w {
			w[i] /= norm
		}
	}
	return nil
}

// residual writes z − X(γ)β̂ into out (len n).
func (p *projector) residual(z []float64, g1, g0 float64, out []float64) error {
	if err := p.basis(g1, g0); err != nil {
		return err
	}
	copy(out, z)
	clear(p.qz)
	p.projectCoef(out, p.qz)
	return nil
}

// project sets v ← v − QQᵀv for the basis Q in p.cols, twice.
func (p *projector) project(v []float64) { p.projectCoef(v, nil) }

// projectCoef is project that also adds Qᵀv (both passes' parts) to
// coef, when coef is not nil.
func (p *projector) projectCoef(v, coef []float64) {
	n := p.n
	for range 2 {
		for c := range p.q {
			d := p.subtract(v[p.lo[c]:p.hi[c]], p.cols[c*n+p.lo[c]:c*n+p.hi[c]])
			if coef != nil {
				coef[c] += d
			}
		}
	}
}

// jacobian writes into jac the Jacobian of the last residual's
// r(γ) = (I − P(γ)) z with respect to (γ1, γ0), in Kaufman's form
//
//	∂r/∂γj ≈ −(I − P) (∂X/∂γj) β̂,
//
// which drops the part of the exact derivative lying in X's range; it is
// orthogonal to r, so Jᵀr, the gradient of ½‖r‖², is exact and the
// search stops where the exact one would (Kaufman 1975; Golub and
// Pereyra 2003). β̂ solves R β̂ = Qᵀz. A group's free response is
// y_k = e₁ᵀ s_k with s_{k+1} = Φ s_k and s_0 = β̂'s state, so
//
//	∂s_{k+1} = ∂Φ s_k + Φ ∂s_k,  ∂s_0 = 0,
//
// with ∂Φ/∂γj by central differences of the 2×2 state map (error
// O(h²) ≈ 1e-12 relative). It costs two projections instead of the four
// residuals of a differenced Jacobian. work must hold 2n values.
func (p *projector) jacobian(jac [][2]float64, work []float64) error {
	n, q, lay := p.n, p.q, p.lay
	beta := p.beta
	for c := q - 1; c >= 0; c-- {
		v := p.qz[c]
		for e := c + 1; e < q; e++ {
			v -= p.r[c*q+e] * beta[e]
		}
		beta[c] = v / p.r[c*q+c]
	}
	var dphi [2][2][2]float64
	for j := range 2 {
		x := [2]float64{p.g1, p.g0}
		h := 1e-6 * math.Max(1, math.Abs(x[j]))
		xp, xm := x, x
		xp[j] += h
		xm[j] -= h
		pp, err := stateMap(xp[0], xp[1], p.dt)
		if err != nil {
			return err
		}
		pm, err := stateMap(xm[0], xm[1], p.dt)
		if err != nil {
			return err
		}
		for a := range 2 {
			for b := range 2 {
				dphi[j][a][b] = (pp[a][b] - pm[a][b]) / (2 * h)
			}
		}
	}
	f := p.phi
	d := [2][]float64{work[:n], work[n : 2*n]}
	var s [2]float64     // the state
	var ds [2][2]float64 // its derivative in γj, ds[j]
	row, at := 0, 0
	for m, l := range lay.lens {
		g := lay.group[m]
		if m == 0 || g != lay.group[m-1] {
			s, ds, at = [2]float64{beta[2*g], beta[2*g+1]}, [2][2]float64{}, 0
		}
		for k := -lay.skip[m] + at; k < l; k++ {
			if k >= 0 {
				d[0][row+k], d[1][row+k] = -ds[0][0], -ds[1][0]
			}
			for j := range 2 {
				a := &dphi[j]
				ds[j] = [2]float64{
					a[0][0]*s[0] + a[0][1]*s[1] + f[0][0]*ds[j][0] + f[0][1]*ds[j][1],
					a[1][0]*s[0] + a[1][1]*s[1] + f[1][0]*ds[j][0] + f[1][1]*ds[j][1],
				}
			}
			s = [2]float64{f[0][0]*s[0] + f[0][1]*s[1], f[1][0]*s[0] + f[1][1]*s[1]}
		}
		at = lay.skip[m] + l
		row += l
	}
	for j := range 2 {
		p.project(d[j])
		for i := range n {
			jac[i][j] = d[j][i]
		}
	}
	return nil
}

// sumSq is Σ r_i², in four interleaved parts when p.fast.
func (p *projector) sumSq(r []float64) float64 {
	if !p.fast {
		return sumSq(r)
	}
	return dot4(r, r)
}

// subtract is subtractProjection, uᵀv in four interleaved parts when
// p.fast.
func (p *projector) subtract(v, u []float64) float64 {
	if !p.fast {
		return subtractProjection(v, u)
	}
	v = v[:len(u)]
	d := dot4(u, v)
	floats.AddScaled(v, -d, u)
	return d
}

// dot4 is Σ a_i b_i (len(b) ≥ len(a)) summed in four interleaved parts:
// one chain of dependent additions waits on the adder's latency at every
// sample. In Go rather than floats.Dot, whose kernel is assembly on amd64
// but one chain on arm64, the boards physd runs on.
func dot4(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+3 < len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// subtractProjection sets v ← v − (uᵀv) u for a unit vector u and
// returns uᵀv.
func subtractProjection(v, u []float64) float64 {
	var d float64
	for i, x := range u {
		d += x * v[i]
	}
	for i, x := range u {
		v[i] -= d * x
	}
	return d
}

// trajectoryResult assembles the fit at (γ1, γ0) = x with its sandwich
// covariance over all parameters (γ, initial states, offset).
func trajectoryResult(latents [][]float64, z []float64, lay layout, x [2]float64, dt float64, off Offset) (*TrajectoryFit, error) {
	r, beta, err := projectedResidual(z, lay, x[0], x[1], dt, off)
	if err != nil {
		return nil, fmt.Errorf("fit trajectory: %w", err)
	}
	X, err := trajectoryDesign(lay, x[0], x[1], dt, off)
	if err != nil {
		return nil, fmt.Errorf("fit trajectory: %w", err)
	}
	n, q := X.Dims()
	p := q + 2
	// Full Jacobian of the model: ∂(Xβ)/∂γ_j by central differences, then X.
	J := mat.NewDense(n, p, nil)
	bv := mat.NewVecDense(q, beta)
	for j := range 2 {
		h := 1e-6 * math.Max(1, math.Abs(x[j]))
		xp, xm := x, x
		xp[j] += h
		xm[j] -= h
		Xp, errP := trajectoryDesign(lay, xp[0], xp[1], dt, off)
		Xm, errM := trajectoryDesign(lay, xm[0], xm[1], dt, off)
		if errP != nil || errM != nil {
			return nil, fmt.Errorf("fit trajectory: Jacobian: %w", ErrDegenerate)
		}
		var fp, fm mat.VecDense
		fp.MulVec(Xp, bv)
		fm.MulVec(Xm, bv)
		for i := range n {
			J.Set(i, j, (fp.AtVec(i)-fm.AtVec(i))/(2*h))
		}
	}
	for i := range n {
		for c := range q {
			J.Set(i, 2+c, X.At(i, c))
		}
	}
	var jtj, inv mat.Dense
	jtj.Mul(J.T(), J)
	if err := inv.Inverse(&jtj); err != nil {
		return nil, fmt.Errorf("fit trajectory: information matrix: %w", ErrDegenerate)
	}
	// Newey–West meat, within clips only.
	lag := neweyWestLag(n)
	S := mat.NewDense(p, p, nil)
	start := 0
	for _, l := range lay.lens {
		addNeweyWest(S.RawMatrix().Data, p, lag, r[start:start+l], J.RawMatrix().Data[start*p:(start+l)*p])
		start += l
	}
	var tmp, cov mat.Dense
	tmp.Mul(&inv, S)
	cov.Mul(&tmp, &inv)
	scale := float64(n) / float64(max(1, n-p))
	f := &TrajectoryFit{Gamma1: x[0], Gamma0: x[1], RSS: sumSq(r), lay: lay}
	for a := range 2 {
		for b := range 2 {
			f.Cov[a][b] = cov.At(a, b) * scale
		}
	}
	switch off {
	case SharedOffset:
		f.Offset = beta[q-1]
	case ClipOffsets:
		f.ClipOffsets = append([]float64(nil), beta[2*lay.groups:]...)
	}
	for g := range lay.groups {
		f.X0 = append(f.X0, [2]float64{beta[2*g], beta[2*g+1]})
	}
	start = 0
	for m, l := range lay.lens {
		fit := make([]float64, l)
		res := make([]float64, l)
		var mean float64
		for i := range l {
			res[i] = r[start+i]
			fit[i] = z[start+i] - r[start+i]
			mean += z[start+i] / float64(l)
		}
		for _, v := range latents[m] {
			f.Signal += (v - mean) * (v - mean)
		}
		f.Fitted = append(f.Fitted, fit)
		f.Resid = append(f.Resid, res)
		start += l
	}
	return f, nil
}

// OffsetOf is sequence m's equilibrium level: its clip's own c_m, the
// shared c, or 0.
func (f *TrajectoryFit) OffsetOf(m int) float64 {
	if f.lay.group != nil && m < len(f.lay.group) {
		m = f.lay.group[m]
	}
	if m < len(f.ClipOffsets) {
		return f.ClipOffsets[m]
	}
	return f.Offset
}

// Motion returns the fitted solution's exact state at every sample of
// every sequence, sampled Δt apart: position relative to the offset,
// velocity, acceleration and jerk,
//
//	x_k = Φᵏ x_g,  z'' = −γ1 z' − γ0 z,  z''' = −γ1 z'' − γ0 z',
//
// k counted from the first sample of the sequence's clip (its runs share
// x_g). The certificate takes its discretisation bounds from these rather
// than from differences of the noisy latent.
func (f *TrajectoryFit) Motion(dt float64) ([][][4]float64, error) {
	phi, err := stateMap(f.Gamma1, f.Gamma0, dt)
	if err != nil {
		return nil, fmt.Errorf("motion: %w", err)
	}
	lay := f.layout()
	out := make([][][4]float64, len(f.Fitted))
	var p, v float64
	at := 0
	for m, z := range f.Fitted {
		g := lay.group[m]
		if g >= len(f.X0) {
			return nil, fmt.Errorf("motion: clip %d has no initial state", g)
		}
		if m == 0 || g != lay.group[m-1] {
			p, v, at = f.X0[g][0], f.X0[g][1], 0
		}
		for ; at < lay.skip[m]; at++ {
			p, v = phi[0][0]*p+phi[0][1]*v, phi[1][0]*p+phi[1][1]*v
		}
		s := make([][4]float64, len(z))
		for k := range s {
			a := -f.Gamma1*v - f.Gamma0*p
			s[k] = [4]float64{p, v, a, -f.Gamma1*a - f.Gamma0*v}
			p, v = phi[0][0]*p+phi[0][1]*v, phi[1][0]*p+phi[1][1]*v
			at++
		}
		out[m] = s
	}
	return out, nil
}
