package sim

import (
	"fmt"
	"math"
)

// Regime names a damping regime of z″ + γ1 z′ + γ0 z = 0 as used in the
// paper's tables.
type Regime string

// The four damping regimes of the paper.
const (
	// RegimeUnderdamped is γ1² < 4γ0 with γ1 > 0: a decaying oscillation.
	RegimeUnderdamped Regime = "underdamped"
	// RegimeUndamped is γ1 = 0, γ0 > 0: a sustained oscillation.
	RegimeUndamped Regime = "undamped"
	// RegimeCritical is γ1² = 4γ0: the fastest non-oscillating decay.
	RegimeCritical Regime = "critical"
	// RegimeOverdamped is γ1² > 4γ0: a slow non-oscillating decay.
	RegimeOverdamped Regime = "overdamped"
)

// Regimes returns the four regimes of the paper in table order.
func Regimes() []Regime {
	return []Regime{RegimeUnderdamped, RegimeUndamped, RegimeCritical, RegimeOverdamped}
}

// GroundTruth returns the coefficients (γ1, γ0) the paper uses for a regime:
// underdamped (γ0, γ1) = (4.0016, 0.08), undamped (4, 0), critical (4, 4) and
// overdamped (4, 5). Note the order of the results: γ1 first. For an unknown
// regime both results are NaN; use [Regime.Valid] to check beforehand.
func GroundTruth(r Regime) (gamma1, gamma0 float64) {
	switch r {
	case RegimeUnderdamped:
		return 0.08, 4.0016
	case RegimeUndamped:
		return 0, 4
	case RegimeCritical:
		return 4, 4
	case RegimeOverdamped:
		return 5, 4
	}
	return math.NaN(), math.NaN()
}

// Valid reports whether r is one of the four regimes of the paper.
func (r Regime) Valid() bool {
	switch r {
	case RegimeUnderdamped, RegimeUndamped, RegimeCritical, RegimeOverdamped:
		return true
	}
	return false
}

// ParseRegime converts a regime name ("underdamped", "undamped", "critical",
// "overdamped") into a Regime.
func ParseRegime(name string) (Regime, error) {
	r := Regime(name)
	if !r.Valid() {
		return "", fmt.Errorf("sim: unknown regime %q (want underdamped, undamped, critical or overdamped)", name)
	}
	return r, nil
}

// criticalTol is the relative tolerance on the discriminant γ1² − 4γ0 below
// which Solve uses the critically damped closed form. The other closed forms
// are accurate arbitrarily close to the critical case too, so the tolerance
// only absorbs rounding in γ1² − 4γ0.
const criticalTol = 1e-12

// Solve returns the analytic solution z(t) and its derivative z'(t) of
//
//	z'' + γ1 z' + γ0 z = 0,  z(0) = z0,  z'(0) = v0
//
// at the given times, in closed form (no numerical integration). All regimes
// are handled: underdamped and undamped (complex roots), critically damped
// (double root, used when |γ1² − 4γ0| ≤ 1e-12·max(γ1², 4|γ0|)), and
// overdamped (two real roots, including γ0 ≤ 0). Times may be negative.
//
// The solution is written as z = z0·E·C + (v0 − α z0)·E·S with α = −γ1/2,
// q = (γ1² − 4γ0)/4, E = e^{αt}, C = cosh(√q t) and S = sinh(√q t)/√q
// (continued to cos and sin for q < 0 and to C = 1, S = t for q = 0). The
// overdamped case is evaluated as e^{(α+√q)|t|}·(1 ± e^{−2√q|t|}) with
// math.Expm1 so that it neither overflows early nor loses precision close
// to critical damping. Non-finite inputs give NaN or ±Inf outputs, never a
// panic. The returned slices have len(t) elements.
func Solve(gamma1, gamma0, z0, v0 float64, t []float64) (z, v []float64) {
	z = make([]float64, len(t))
	v = make([]float64, len(t))
	alpha := -gamma1 / 2
	q := (gamma1*gamma1 - 4*gamma0) / 4
	b := v0 - alpha*z0
	scale := math.Max(gamma1*gamma1, 4*math.Abs(gamma0))
	critical := math.Abs(4*q) <= criticalTol*scale
	if critical {
		q = 0
	}
	for i, ti := range t {
		var ec, es float64 // e^{αt}·C(t) and e^{αt}·S(t)
		switch {
		case critical:
			e := math.Exp(alpha * ti)
			ec, es = e, e*ti
		case q < 0:
			w := math.Sqrt(-q)
			e := math.Exp(alpha * ti)
			s, c := math.Sincos(w * ti)
			ec, es = e*c, e*s/w
		default:
			mu := math.Sqrt(q)
			at := math.Abs(ti)
			lead := math.Exp(alpha*ti + mu*at) // e^{αt + μ|t|}
			m := math.Expm1(-2 * mu * at)      // e^{−2μ|t|} − 1 ∈ (−1, 0]
			ec = lead * (2 + m) / 2
			es = -lead * m / (2 * mu)
			if ti < 0 {
				es = -es
			}
		}
		zi := z0*ec + b*es
		z[i] = zi
		// d/dt(E·C) = α E C + q E S and d/dt(E·S) = α E S + E C.
		v[i] = alpha*zi + z0*q*es + b*ec
	}
	return z, v
}
