package estimator

import (
	"fmt"
	"math"

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
	// X0 holds each clip's initial state (z, z') relative to the offset.
	X0 [][2]float64
	// Cov is the Newey–West sandwich covariance of (γ1, γ0).
	Cov [2][2]float64
	// Fitted is ẑ per clip; Resid is z − ẑ.
	Fitted, Resid [][]float64
	// RSS is Σ (z − ẑ)²; Signal is Σ (z − z̄)² (clip means).
	RSS, Signal float64
}

// RelResidual is the RMS of z − ẑ over the RMS of the centred latent.
func (f *TrajectoryFit) RelResidual() float64 {
	if !(f.Signal > 0) {
		return math.Inf(1)
	}
	return math.Sqrt(f.RSS / f.Signal)
}

// stateMap returns Φ = e^{AΔt} for A = [[0, 1], [−γ0, −γ1]].
func stateMap(g1, g0, dt float64) ([2][2]float64, error) {
	a := mat.NewDense(2, 2, []float64{0, dt, -g0 * dt, -g1 * dt})
	var e mat.Dense
	e.Exp(a)
	phi := [2][2]float64{{e.At(0, 0), e.At(0, 1)}, {e.At(1, 0), e.At(1, 1)}}
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

// trajectoryDesign fills X (N×q, q = 2M + offsetColumns) with the
// free-response columns e₁ᵀΦᵏ e_j of each clip and the offsets' constant
// columns: one shared, or one per clip (its indicator).
func trajectoryDesign(lens []int, g1, g0, dt float64, off Offset) (*mat.Dense, error) {
	phi, err := stateMap(g1, g0, dt)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, l := range lens {
		n += l
	}
	q := 2*len(lens) + offsetColumns(off, len(lens))
	X := mat.NewDense(n, q, nil)
	row := 0
	for m, l := range lens {
		// r = e₁ᵀΦᵏ, advanced by r ← rΦ.
		r0, r1 := 1.0, 0.0
		for range l {
			X.Set(row, 2*m, r0)
			X.Set(row, 2*m+1, r1)
			switch off {
			case SharedOffset:
				X.Set(row, q-1, 1)
			case ClipOffsets:
				X.Set(row, 2*len(lens)+m, 1)
			}
			r0, r1 = r0*phi[0][0]+r1*phi[1][0], r0*phi[0][1]+r1*phi[1][1]
			row++
		}
	}
	return X, nil
}

// projectedResidual returns z − X(γ)β̂(γ) for the least-squares β̂, and β̂.
func projectedResidual(z []float64, lens []int, g1, g0, dt float64, off Offset) ([]float64, []float64, error) {
	X, err := trajectoryDesign(lens, g1, g0, dt, off)
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
	if err := checkFinite(latents); err != nil {
		return nil, fmt.Errorf("fit trajectory: %w", err)
	}
	var z []float64
	lens := make([]int, len(latents))
	for m, l := range latents {
		lens[m] = len(l)
		z = append(z, l...)
	}
	q := 2*len(lens) + offsetColumns(off, len(lens))
	if len(z) < q+4 {
		return nil, fmt.Errorf("fit trajectory: %d samples for %d parameters: %w", len(z), q+2, ErrDegenerate)
	}
	x := [2]float64{g1, g0}
	r, _, err := projectedResidual(z, lens, x[0], x[1], dt, off)
	if err != nil {
		return nil, fmt.Errorf("fit trajectory: %w", err)
	}
	rss := sumSq(r)
	lambda := 1e-3
	jac := make([][2]float64, len(z))
	for range 100 {
		for j := range 2 {
			h := 1e-6 * math.Max(1, math.Abs(x[j]))
			xp, xm := x, x
			xp[j] += h
			xm[j] -= h
			rp, _, errP := projectedResidual(z, lens, xp[0], xp[1], dt, off)
			rm, _, errM := projectedResidual(z, lens, xm[0], xm[1], dt, off)
			if errP != nil || errM != nil {
				return nil, fmt.Errorf("fit trajectory: Jacobian at (%g, %g): %w", x[0], x[1], ErrDegenerate)
			}
			for i := range z {
				jac[i][j] = (rp[i] - rm[i]) / (2 * h)
			}
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
			nr, _, err := projectedResidual(z, lens, nx[0], nx[1], dt, off)
			if err == nil {
				if n := sumSq(nr); n < rss {
					done := rss-n <= 1e-14*rss || math.Abs(step[0])+math.Abs(step[1]) <= 1e-12*(1+math.Abs(x[1]))
					x, r, rss = nx, nr, n
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
	return trajectoryResult(latents, z, lens, x, dt, off)
}

// trajectoryResult assembles the fit at (γ1, γ0) = x with its sandwich
// covariance over all parameters (γ, initial states, offset).
func trajectoryResult(latents [][]float64, z []float64, lens []int, x [2]float64, dt float64, off Offset) (*TrajectoryFit, error) {
	r, beta, err := projectedResidual(z, lens, x[0], x[1], dt, off)
	if err != nil {
		return nil, fmt.Errorf("fit trajectory: %w", err)
	}
	X, err := trajectoryDesign(lens, x[0], x[1], dt, off)
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
		Xp, errP := trajectoryDesign(lens, xp[0], xp[1], dt, off)
		Xm, errM := trajectoryDesign(lens, xm[0], xm[1], dt, off)
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
	for _, l := range lens {
		addNeweyWest(S.RawMatrix().Data, p, lag, r[start:start+l], J.RawMatrix().Data[start*p:(start+l)*p])
		start += l
	}
	var tmp, cov mat.Dense
	tmp.Mul(&inv, S)
	cov.Mul(&tmp, &inv)
	scale := float64(n) / float64(max(1, n-p))
	f := &TrajectoryFit{Gamma1: x[0], Gamma0: x[1], RSS: sumSq(r)}
	for a := range 2 {
		for b := range 2 {
			f.Cov[a][b] = cov.At(a, b) * scale
		}
	}
	switch off {
	case SharedOffset:
		f.Offset = beta[q-1]
	case ClipOffsets:
		f.ClipOffsets = append([]float64(nil), beta[2*len(lens):]...)
	}
	start = 0
	for m, l := range lens {
		f.X0 = append(f.X0, [2]float64{beta[2*m], beta[2*m+1]})
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

// OffsetOf is clip m's equilibrium level: its own c_m, the shared c, or 0.
func (f *TrajectoryFit) OffsetOf(m int) float64 {
	if m < len(f.ClipOffsets) {
		return f.ClipOffsets[m]
	}
	return f.Offset
}

// Motion returns the fitted solution's exact state at every sample of
// every clip, sampled Δt apart: position relative to the clip's offset,
// velocity, acceleration and jerk,
//
//	x_k = Φᵏ x_m,  z'' = −γ1 z' − γ0 z,  z''' = −γ1 z'' − γ0 z'.
//
// The certificate takes its discretisation bounds from these rather than
// from differences of the noisy latent.
func (f *TrajectoryFit) Motion(dt float64) ([][][4]float64, error) {
	phi, err := stateMap(f.Gamma1, f.Gamma0, dt)
	if err != nil {
		return nil, fmt.Errorf("motion: %w", err)
	}
	out := make([][][4]float64, len(f.Fitted))
	for m, z := range f.Fitted {
		if m >= len(f.X0) {
			return nil, fmt.Errorf("motion: clip %d has no initial state", m)
		}
		s := make([][4]float64, len(z))
		p, v := f.X0[m][0], f.X0[m][1]
		for k := range s {
			a := -f.Gamma1*v - f.Gamma0*p
			s[k] = [4]float64{p, v, a, -f.Gamma1*a - f.Gamma0*v}
			p, v = phi[0][0]*p+phi[0][1]*v, phi[1][0]*p+phi[1][1]*v
		}
		out[m] = s
	}
	return out, nil
}
