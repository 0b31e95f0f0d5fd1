package modes

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Term is one mode's term of a readout, e^{−σt}(a cos ωt + b sin ωt).
type Term struct {
	// Sigma is the decay rate σ (1/s) and Omega the damped angular
	// frequency ω (rad/s).
	Sigma, Omega float64
	// A and B are the cosine and sine amplitudes at t = 0, in the
	// readout's units.
	A, B float64
}

// At is the term at t seconds.
func (m Term) At(t float64) float64 {
	e := math.Exp(-m.Sigma * t)
	s, c := math.Sincos(m.Omega * t)
	return e * (m.A*c + m.B*s)
}

// Amplitude is the term's envelope at t = 0, √(a² + b²).
func (m Term) Amplitude() float64 { return math.Hypot(m.A, m.B) }

// Gammas are the term's ODE coefficients: γ1 = 2σ, γ0 = σ² + ω².
func (m Term) Gammas() (gamma1, gamma0 float64) {
	return 2 * m.Sigma, m.Sigma*m.Sigma + m.Omega*m.Omega
}

// Hz is the undamped natural frequency √γ0 / 2π and Zeta the damping
// ratio γ1 / (2√γ0).
func (m Term) Hz() float64 { _, g0 := m.Gammas(); return math.Sqrt(g0) / (2 * math.Pi) }

// Zeta is the damping ratio γ1 / (2√γ0).
func (m Term) Zeta() float64 { g1, g0 := m.Gammas(); return g1 / (2 * math.Sqrt(g0)) }

// Model is a readout's fitted sum of mode terms and an offset, seen
// through the readout's static nonlinearity g when that is fitted too
// (FitReadout): x(t) = c + g(u(t)), u the terms' sum.
type Model struct {
	Terms  []Term
	Offset float64
	// Poly are the readout's coefficients c₂, c₃, … of g(u) = u + c₂u² +
	// c₃u³ + … (FitReadout), nil for a linear readout (Fit).
	Poly []float64
	// Shift is, per term, how far its (γ1, γ0) move when g's degree is
	// raised (FitReadout): the readout model's own uncertainty. nil from
	// Fit.
	Shift [][2]float64
	// Nonlinear, when set, says why the readout was not read as a
	// small-motion one (FitReadout): its gain is not bounded over the
	// swing. The model is then Fit's.
	Nonlinear string
	// RMS is the residual's rms, with the fit's degrees of freedom taken
	// out: √(Σ r² / (N − P)).
	RMS float64
}

// At is the model at t seconds, c + g(u(t)).
func (m *Model) At(t float64) float64 {
	g, _ := poly(m.Poly, m.U(t))
	return m.Offset + g
}

// U is the modes' sum u(t) at t seconds.
func (m *Model) U(t float64) float64 {
	var u float64
	for _, tm := range m.Terms {
		u += tm.At(t)
	}
	return u
}

// Slope is the readout's gain g'(u(t)) at t seconds (1 for a linear one).
func (m *Model) Slope(t float64) float64 {
	_, dg := poly(m.Poly, m.U(t))
	return dg
}

// ErrFit reports a joint fit that could not be made.
var ErrFit = errors.New("modes: joint fit failed")

// fitIters bounds the Levenberg–Marquardt steps; fitTol is the relative
// decrease of the squared residual below which the fit has converged.
const (
	fitIters = 200
	fitTol   = 1e-12
)

// Fit fits x_n, sampled at t_n = n·dt, with an offset and one term per
// starting angular frequency omegas[i] (rad/s), by Levenberg–Marquardt on
// every parameter θ = (σ_i, ω_i, a_i, b_i …, c), minimising
//
//	S(θ) = Σ_n (x_n − c − Σ_i e^{−σ_i t_n}(a_i cos ω_i t_n + b_i sin ω_i t_n))²,
//
// from σ_i = zeta0·ω_i and the amplitudes and offset that are then
// linear least squares. The Jacobian is analytic (jacobian).
func Fit(x []float64, dt float64, omegas []float64, zeta0 float64) (*Model, error) {
	k := len(omegas)
	p := 4*k + 1
	n := len(x)
	if k == 0 || n < 2*p || !(dt > 0) {
		return nil, fmt.Errorf("%w: %d samples for %d modes", ErrFit, n, k)
	}
	th := make([]float64, p)
	for i, w := range omegas {
		th[4*i], th[4*i+1] = zeta0*w, w
	}
	if err := linearPart(th, x, dt); err != nil {
		return nil, err
	}
	th, ss := levenberg(th, x, dt, 1)
	return model(th, ss, len(x), 1), nil
}

// levenberg minimises S(θ) of the readout model of degree deg from th by
// Levenberg–Marquardt and returns the minimiser and S there.
func levenberg(th, x []float64, dt float64, deg int) ([]float64, float64) {
	p, n := len(th), len(x)
	r := make([]float64, n)
	J := mat.NewDense(n, p, nil)
	s := residual(r, th, x, dt, deg)
	lambda := 1e-3
	var jtj mat.SymDense
	jtr := mat.NewVecDense(p, nil)
	trial := make([]float64, p)
	rt := make([]float64, n)
	for range fitIters {
		jacobian(J, th, dt, deg)
		jtj.SymOuterK(1, J.T())
		jtr.MulVec(J.T(), mat.NewVecDense(n, r))
		improved := false
		for range 30 {
			a := mat.NewSymDense(p, nil)
			a.CopySym(&jtj)
			for d := range p {
				a.SetSym(d, d, jtj.At(d, d)*(1+lambda)+1e-300)
			}
			var ch mat.Cholesky
			var step mat.VecDense
			if !ch.Factorize(a) || ch.SolveVecTo(&step, jtr) != nil {
				lambda *= 10
				continue
			}
			for d := range p {
				trial[d] = th[d] + step.AtVec(d)
			}
			if st := residual(rt, trial, x, dt, deg); st < s {
				rel := (s - st) / s
				copy(th, trial)
				copy(r, rt)
				s = st
				lambda = math.Max(lambda/10, 1e-12)
				improved = true
				if rel < fitTol {
					return th, s
				}
				break
			}
			lambda *= 10
		}
		if !improved {
			break
		}
	}
	return th, s
}

// HzSigmas are the terms' frequency standard errors (Hz) from the fit's
// Gauss–Newton covariance over its n samples dt apart, RMS²(JᵀJ)⁻¹, J
// the model's Jacobian at its parameters, for white noise: the damped
// frequency ω_i/2π's (σ's share of f_n is second order for a ringing
// mode). nil when JᵀJ is singular.
func (m *Model) HzSigmas(n int, dt float64) []float64 {
	deg := len(m.Poly) + 1
	th := m.params(0)
	J := mat.NewDense(n, len(th), nil)
	jacobian(J, th, dt, deg)
	var jtj mat.SymDense
	jtj.SymOuterK(1, J.T())
	var ch mat.Cholesky
	if !ch.Factorize(&jtj) {
		return nil
	}
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		return nil
	}
	out := make([]float64, len(m.Terms))
	for i := range m.Terms {
		out[i] = m.RMS * math.Sqrt(inv.At(4*i+1, 4*i+1)) / (2 * math.Pi)
	}
	return out
}

// model is the Model of θ for a readout of degree deg fitted to n
// samples with residual sum of squares s; params is its inverse.
func model(th []float64, s float64, n, deg int) *Model {
	k := (len(th) - deg) / 4
	m := &Model{Offset: th[4*k], RMS: math.Sqrt(s / float64(max(n-len(th), 1)))}
	if deg > 1 {
		m.Poly = slices.Clone(th[4*k+1:])
	}
	for i := range k {
		m.Terms = append(m.Terms, Term{Sigma: th[4*i], Omega: math.Abs(th[4*i+1]), A: th[4*i+2], B: math.Copysign(1, th[4*i+1]) * th[4*i+3]})
	}
	return m
}

// params is θ = (σ_i, ω_i, a_i, b_i …, c, c₂ …) of the model, model's
// inverse, its capacity leaving room for extra more of g's coefficients.
func (m *Model) params(extra int) []float64 {
	th := make([]float64, 0, 4*len(m.Terms)+1+len(m.Poly)+extra)
	for _, tm := range m.Terms {
		th = append(th, tm.Sigma, tm.Omega, tm.A, tm.B)
	}
	th = append(th, m.Offset)
	return append(th, m.Poly...)
}

// residual writes r_n = x_n − c − g(u(t_n)) and returns Σ r_n², where u
// is the sum of θ's terms and g(u) = u + c₂u² + … + c_deg u^deg.
func residual(r, th, x []float64, dt float64, deg int) float64 {
	k := (len(th) - deg) / 4
	var s float64
	for n := range x {
		t := float64(n) * dt
		var u float64
		for i := range k {
			e := math.Exp(-th[4*i] * t)
			sn, c := math.Sincos(th[4*i+1] * t)
			u += e * (th[4*i+2]*c + th[4*i+3]*sn)
		}
		g, _ := poly(th[4*k+1:], u)
		r[n] = x[n] - th[4*k] - g
		s += r[n] * r[n]
	}
	return s
}

// poly is g(u) = u + Σ_{d≥2} c_d u^d, c = (c₂, c₃, …), and g'(u).
func poly(c []float64, u float64) (g, dg float64) {
	g, dg = u, 1
	pw := u // u^{d−1}
	for d, cd := range c {
		dg += float64(d+2) * cd * pw
		pw *= u
		g += cd * pw
	}
	return g, dg
}

// jacobian writes ∂model(t_n)/∂θ into J (N × P): for term i, with
// g' = g'(u(t)),
//
//	∂/∂σ = −g' t e^{−σt}(a cos ωt + b sin ωt),  ∂/∂ω = g' t e^{−σt}(b cos ωt − a sin ωt),
//	∂/∂a = g' e^{−σt} cos ωt,  ∂/∂b = g' e^{−σt} sin ωt,  ∂/∂c = 1,  ∂/∂c_d = u^d.
func jacobian(J *mat.Dense, th []float64, dt float64, deg int) {
	n, _ := J.Dims()
	k := (len(th) - deg) / 4
	for row := range n {
		t := float64(row) * dt
		var u float64
		for i := range k {
			e := math.Exp(-th[4*i] * t)
			sn, c := math.Sincos(th[4*i+1] * t)
			a, b := th[4*i+2], th[4*i+3]
			u += e * (a*c + b*sn)
			J.Set(row, 4*i, -t*e*(a*c+b*sn))
			J.Set(row, 4*i+1, t*e*(b*c-a*sn))
			J.Set(row, 4*i+2, e*c)
			J.Set(row, 4*i+3, e*sn)
		}
		_, dg := poly(th[4*k+1:], u)
		for col := range 4 * k {
			J.Set(row, col, dg*J.At(row, col))
		}
		J.Set(row, 4*k, 1)
		pw := u
		for d := range deg - 1 {
			pw *= u
			J.Set(row, 4*k+1+d, pw)
		}
	}
}

// linearPart sets the amplitudes and offset of th to the least-squares
// ones for its decay rates and frequencies.
func linearPart(th, x []float64, dt float64) error {
	k := (len(th) - 1) / 4
	q := 2*k + 1
	B := mat.NewDense(len(x), q, nil)
	for row := range x {
		t := float64(row) * dt
		for i := range k {
			e := math.Exp(-th[4*i] * t)
			sn, c := math.Sincos(th[4*i+1] * t)
			B.Set(row, 2*i, e*c)
			B.Set(row, 2*i+1, e*sn)
		}
		B.Set(row, 2*k, 1)
	}
	var sol mat.VecDense
	if err := sol.SolveVec(B, mat.NewVecDense(len(x), x)); err != nil {
		return fmt.Errorf("%w: initial amplitudes: %w", ErrFit, err)
	}
	for i := range k {
		th[4*i+2], th[4*i+3] = sol.AtVec(2*i), sol.AtVec(2*i+1)
	}
	th[4*k] = sol.AtVec(2 * k)
	return nil
}
