package estimator

import (
	"fmt"
	"math"
	"math/cmplx"
)

// ARMap returns the AR(2) coefficients z_{k+1} = α z_k + β z_{k−1} that the
// centred stencil with coefficients (γ1^Δ, γ0^Δ) implies (App. "Constant term
// g", Eq. centered-map):
//
//	α = (2 − γ0^Δ Δt²) / (1 + s),  β = −(1 − s) / (1 + s),  s = γ1^Δ Δt / 2.
func ARMap(gamma1, gamma0, dt float64) (alpha, beta float64) {
	s := gamma1 * dt / 2
	return (2 - gamma0*dt*dt) / (1 + s), -(1 - s) / (1 + s)
}

// Exact maps stencil coefficients (γ1^Δ, γ0^Δ) to the continuous-time
// (γ1, γ0) whose exact sampled solutions obey the same AR(2) recursion.
//
// The stencil is O(Δt²) biased: for an undamped sinusoid of angular
// frequency ω it returns γ0^Δ = (2/Δt)² sin²(ωΔt/2). The AR(2) recursion is
// exact for sampled solutions of the ODE: its characteristic roots are
// ρ = e^{λΔt} where λ solves λ² + γ1 λ + γ0 = 0, so
//
//	γ1 = −(λ₁ + λ₂),  γ0 = λ₁ λ₂,  λ = log(ρ) / Δt.
//
// It fails when a root is real and non-positive (no continuous-time system
// samples to that recursion: aliasing or a sign-flipping latent).
func Exact(gamma1, gamma0, dt float64) (g1, g0 float64, err error) {
	alpha, beta := ARMap(gamma1, gamma0, dt)
	// ρ² − α ρ − β = 0
	disc := complex(alpha*alpha+4*beta, 0)
	sq := cmplx.Sqrt(disc)
	r1 := (complex(alpha, 0) + sq) / 2
	r2 := (complex(alpha, 0) - sq) / 2
	for _, r := range []complex128{r1, r2} {
		if imag(r) == 0 && real(r) <= 0 {
			return 0, 0, fmt.Errorf("AR(2) root %.4g is not positive: no continuous-time equivalent at Δt=%g", real(r), dt)
		}
	}
	l1 := cmplx.Log(r1) / complex(dt, 0)
	l2 := cmplx.Log(r2) / complex(dt, 0)
	g1 = -real(l1 + l2)
	g0 = real(l1 * l2)
	if math.IsNaN(g1) || math.IsNaN(g0) || math.IsInf(g1, 0) || math.IsInf(g0, 0) {
		return 0, 0, fmt.Errorf("exact map of (%g, %g) at Δt=%g is not finite", gamma1, gamma0, dt)
	}
	return g1, g0, nil
}

// exactCov propagates a covariance of (γ1^Δ, γ0^Δ) through Exact by the
// delta method, with the Jacobian from central differences.
func exactCov(gamma1, gamma0, dt float64, cov [2][2]float64) ([2][2]float64, error) {
	var J [2][2]float64
	x := [2]float64{gamma1, gamma0}
	for j := range 2 {
		h := 1e-6 * math.Max(1, math.Abs(x[j]))
		xp, xm := x, x
		xp[j] += h
		xm[j] -= h
		p1, p0, err := Exact(xp[0], xp[1], dt)
		if err != nil {
			return cov, err
		}
		m1, m0, err := Exact(xm[0], xm[1], dt)
		if err != nil {
			return cov, err
		}
		J[0][j] = (p1 - m1) / (2 * h)
		J[1][j] = (p0 - m0) / (2 * h)
	}
	var out [2][2]float64
	for a := range 2 {
		for b := range 2 {
			for c := range 2 {
				for d := range 2 {
					out[a][b] += J[a][c] * cov[c][d] * J[b][d]
				}
			}
		}
	}
	return out, nil
}
