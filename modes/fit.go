package modes

import (
	"errors"
	"fmt"
	"math"

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

// Model is a readout's fitted sum of mode terms and an offset.
type Model struct {
	Terms  []Term
	Offset float64
	// RMS is the residual's rms, with the fit's degrees of freedom taken
	// out: √(Σ r² / (N − P)).
	RMS float64
}

// At is the model at t seconds.
func (m *Model) At(t float64) float64 {
	v := m.Offset
	for _, tm := range m.Terms {
		v += tm.At(t)
	}
	return v
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
	r := make([]float64, n)
	J := mat.NewDense(n, p, nil)
	s := residual(r, th, x, dt)
	lambda := 1e-3
	var jtj mat.SymDense
	jtr := mat.NewVecDense(p, nil)
	trial := make([]float64, p)
	rt := make([]float64, n)
	for range fitIters {
		jacobian(J, th, dt)
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
			if st := residual(rt, trial, x, dt); st < s {
				rel := (s - st) / s
				copy(th, trial)
				copy(r, rt)
				s = st
				lambda = math.Max(lambda/10, 1e-12)
				improved = true
				if rel < fitTol {
					return model(th, s, n), nil
				}
				break
			}
			lambda *= 10
		}
		if !improved {
			break
		}
	}
	return model(th, s, n), nil
}

func model(th []float64, s float64, n int) *Model {
	k := (len(th) - 1) / 4
	m := &Model{Offset: th[4*k], RMS: math.Sqrt(s / float64(max(n-len(th), 1)))}
	for i := range k {
		m.Terms = append(m.Terms, Term{Sigma: th[4*i], Omega: math.Abs(th[4*i+1]), A: th[4*i+2], B: math.Copysign(1, th[4*i+1]) * th[4*i+3]})
	}
	return m
}

// residual writes r_n = x_n − model(t_n) and returns Σ r_n².
func residual(r, th, x []float64, dt float64) float64 {
	k := (len(th) - 1) / 4
	var s float64
	for n := range x {
		t := float64(n) * dt
		v := th[4*k]
		for i := range k {
			e := math.Exp(-th[4*i] * t)
			sn, c := math.Sincos(th[4*i+1] * t)
			v += e * (th[4*i+2]*c + th[4*i+3]*sn)
		}
		r[n] = x[n] - v
		s += r[n] * r[n]
	}
	return s
}

// jacobian writes ∂model(t_n)/∂θ into J (N × P): for term i,
//
//	∂/∂σ = −t e^{−σt}(a cos ωt + b sin ωt),  ∂/∂ω = t e^{−σt}(b cos ωt − a sin ωt),
//	∂/∂a = e^{−σt} cos ωt,  ∂/∂b = e^{−σt} sin ωt,  ∂/∂c = 1.
func jacobian(J *mat.Dense, th []float64, dt float64) {
	n, _ := J.Dims()
	k := (len(th) - 1) / 4
	for row := range n {
		t := float64(row) * dt
		for i := range k {
			e := math.Exp(-th[4*i] * t)
			sn, c := math.Sincos(th[4*i+1] * t)
			a, b := th[4*i+2], th[4*i+3]
			J.Set(row, 4*i, -t*e*(a*c+b*sn))
			J.Set(row, 4*i+1, t*e*(b*c-a*sn))
			J.Set(row, 4*i+2, e*c)
			J.Set(row, 4*i+3, e*sn)
		}
		J.Set(row, 4*k, 1)
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
