package estimator

import "math"

// Regime names the damping regime of z” + γ1 z' + γ0 z = 0.
type Regime string

// The regimes of the paper's ground-truth table, and the unstable case.
const (
	Underdamped Regime = "underdamped"
	Undamped    Regime = "undamped"
	Critical    Regime = "critical"
	Overdamped  Regime = "overdamped"
	Unstable    Regime = "unstable" // γ0 ≤ 0 or γ1 < 0 beyond its uncertainty
)

// Physics holds what (γ1, γ0) mean to an engineer.
type Physics struct {
	OmegaN float64 `json:"omega_n"`   // natural angular frequency √γ0, rad/s
	FreqN  float64 `json:"f_n_hz"`    // natural frequency ω_n / 2π, Hz
	Zeta   float64 `json:"zeta"`      // damping ratio γ1 / (2√γ0)
	FreqD  float64 `json:"f_d_hz"`    // damped frequency ω_n √(1−ζ²) / 2π, Hz; 0 unless underdamped
	Regime Regime  `json:"regime"`    // from ζ and its uncertainty
	SigmaF float64 `json:"f_n_sigma"` // 1σ of FreqN
	SigmaZ float64 `json:"zeta_sigma"`
}

// Derive computes Physics from (γ1, γ0) and their covariance. A regime
// boundary (ζ = 0 or ζ = 1) is reported when ζ is within two standard
// deviations of it, except that negative damping (Unstable) must be
// three standard deviations below zero: a passive structure's damping is
// not negative, so the claim that it is needs stronger evidence than a
// label between two physical regimes, and with a calibrated σ a 2σ rule
// would call one undamped window in forty unstable (and the certificate
// refuses it). Between −3σ and +2σ the regime is Undamped. When the
// uncertainty spans both ζ = 0 and ζ = 1, the nearer boundary is named.
func Derive(gamma1, gamma0 float64, cov [2][2]float64) Physics {
	var p Physics
	if !(gamma0 > 0) {
		p.Regime = Unstable
		p.Zeta = math.NaN()
		return p
	}
	w := math.Sqrt(gamma0)
	p.OmegaN = w
	p.FreqN = w / (2 * math.Pi)
	p.Zeta = gamma1 / (2 * w)
	// Jacobians: ∂f/∂γ0 = 1/(4π√γ0); ∂ζ/∂γ1 = 1/(2√γ0), ∂ζ/∂γ0 = −γ1/(4 γ0^{3/2}).
	df0 := 1 / (4 * math.Pi * w)
	p.SigmaF = math.Sqrt(math.Max(0, df0*df0*cov[1][1]))
	z1, z0 := 1/(2*w), -gamma1/(4*gamma0*w)
	p.SigmaZ = math.Sqrt(math.Max(0, z1*z1*cov[0][0]+2*z1*z0*cov[0][1]+z0*z0*cov[1][1]))
	tol := math.Max(2*p.SigmaZ, 1e-9)
	unstable := p.Zeta < -math.Max(3*p.SigmaZ, 1e-9)
	nearZero := !unstable && p.Zeta <= tol
	nearOne := math.Abs(p.Zeta-1) <= tol
	switch {
	case unstable:
		p.Regime = Unstable
	case nearZero && nearOne:
		// σ spans both boundaries: the nearer one.
		p.Regime = Undamped
		if math.Abs(p.Zeta-1) < math.Abs(p.Zeta) {
			p.Regime = Critical
		}
	case nearZero:
		p.Regime = Undamped
	case nearOne:
		p.Regime = Critical
	case p.Zeta < 1:
		p.Regime = Underdamped
	default:
		p.Regime = Overdamped
	}
	if p.Zeta < 1 && p.Zeta >= 0 {
		p.FreqD = p.FreqN * math.Sqrt(1-p.Zeta*p.Zeta)
	}
	return p
}
