package estimator

import (
	"fmt"
	"math"
)

// Regularizer selects the anti-collapse term of the objective.
type Regularizer string

// Regularizers of the paper's loss ablation (Tab. "loss ablation").
const (
	// VarFloor is the variance floor (Eq. loss-var-floor):
	// (max{0, τ − √(Var(z)+ε)})².
	VarFloor Regularizer = "var-floor"
	// KL is KL(N(μ̂, Var(z)) ‖ N(0,1)) = ½(Var + μ̂² − 1 − log(Var+ε)).
	KL Regularizer = "kl"
	// NoReg leaves only the ODE residual, which the collapsed latent z ≡ 0 minimises.
	NoReg Regularizer = "none"
)

// LossConfig parameterises the objective.
type LossConfig struct {
	Reg    Regularizer
	Tau    float64 // variance-floor target standard deviation τ
	Lambda float64 // weight λ_var of the regulariser
	Eps    float64 // ε inside the square root, 1e-8 in the paper
	// Offset selects the residual's constant term (App. "Constant term
	// g"); with NoOffset the encoder's bias must learn the equilibrium.
	Offset Offset
}

// Offset selects the constant term of the residual
// z” + γ1 z' + γ0 z + g: where the latent's equilibrium sits.
type Offset int

const (
	// NoOffset fixes g = 0.
	NoOffset Offset = iota
	// SharedOffset fits one g for every clip: the clips are seen through
	// one observation map (one camera), so they share one equilibrium.
	SharedOffset
	// ClipOffsets fits one g_m per clip: the clips' observation maps may
	// differ by a constant, as when each clip is normalised on its own
	// (the paper's intensity and scale sets) or recorded under another
	// exposure. Certification then needs more (window.CoverageOf).
	ClipOffsets
)

// String names the offset as flags and reports spell it.
func (o Offset) String() string {
	switch o {
	case NoOffset:
		return "none"
	case SharedOffset:
		return "shared"
	case ClipOffsets:
		return "per-clip"
	}
	return fmt.Sprintf("Offset(%d)", int(o))
}

// ParseOffset reads "none", "shared" or "per-clip".
func ParseOffset(s string) (Offset, error) {
	for _, o := range []Offset{NoOffset, SharedOffset, ClipOffsets} {
		if s == o.String() {
			return o, nil
		}
	}
	return 0, fmt.Errorf("offset %q: want %q, %q or %q", s, NoOffset, SharedOffset, ClipOffsets)
}

// Validate reports a configuration the objective cannot use.
func (c LossConfig) Validate() error {
	switch c.Reg {
	case VarFloor, KL, NoReg:
	default:
		return fmt.Errorf("loss: regularizer %q: want %q, %q or %q", c.Reg, VarFloor, KL, NoReg)
	}
	if !(c.Tau > 0) || math.IsInf(c.Tau, 0) {
		return fmt.Errorf("loss: tau %g: must be positive and finite", c.Tau)
	}
	if !(c.Lambda >= 0) || math.IsInf(c.Lambda, 0) {
		return fmt.Errorf("loss: lambda %g: must be non-negative and finite", c.Lambda)
	}
	if !(c.Eps > 0) {
		return fmt.Errorf("loss: eps %g: must be positive", c.Eps)
	}
	if c.Offset < NoOffset || c.Offset > ClipOffsets {
		return fmt.Errorf("loss: %v: want %q, %q or %q", c.Offset, NoOffset, SharedOffset, ClipOffsets)
	}
	return nil
}

// Coefficients are the ODE parameters the objective is evaluated at; G is
// the shared offset (SharedOffset only).
type Coefficients struct{ Gamma1, Gamma0, G float64 }

// Objective evaluates the multi-clip objective of Sec. 3 (Eq. loss-total-multi)
//
//	L = (1/N) Σ_m Σ_{k=1}^{T_m−1} r_k^{(m)}² + (λ/M) Σ_m R(z^{(m)})
//
// with N = Σ_m (T_m − 1), and returns its gradient with respect to every
// latent and to the coefficients (∂L/∂γ1, ∂L/∂γ0, ∂L/∂g). With one clip it
// is Eq. loss-total. With ClipOffsets each clip's g_m is profiled out (set
// to its optimum, as the authors' multi-clip loss does) and c.G is unused.
func Objective(z [][]float64, dt float64, c Coefficients, cfg LossConfig) (loss float64, dz [][]float64, dc Coefficients) {
	n := 0
	for _, zm := range z {
		if len(zm) >= 3 {
			n += len(zm) - 2
		}
	}
	dz = make([][]float64, len(z))
	if n == 0 {
		return math.NaN(), dz, dc
	}
	cm, c0, cp := stencilWeights(c.Gamma1, c.Gamma0, dt)
	inv := 1 / float64(n)
	for m, zm := range z {
		g := make([]float64, len(zm))
		dz[m] = g
		var off float64
		switch cfg.Offset {
		case SharedOffset:
			off = c.G
		case ClipOffsets:
			// The clip's own g at its optimum, minus the mean residual;
			// by the envelope theorem it adds nothing to the gradient.
			var s float64
			for k := 1; k+1 < len(zm); k++ {
				s += cm*zm[k-1] + c0*zm[k] + cp*zm[k+1]
			}
			if len(zm) >= 3 {
				off = -s / float64(len(zm)-2)
			}
		}
		for k := 1; k+1 < len(zm); k++ {
			r := cm*zm[k-1] + c0*zm[k] + cp*zm[k+1] + off
			loss += r * r * inv
			w := 2 * r * inv
			g[k-1] += w * cm
			g[k] += w * c0
			g[k+1] += w * cp
			dc.Gamma1 += w * (zm[k+1] - zm[k-1]) / (2 * dt)
			dc.Gamma0 += w * zm[k]
			if cfg.Offset == SharedOffset {
				dc.G += w
			}
		}
	}
	if cfg.Reg == NoReg || cfg.Lambda == 0 {
		return loss, dz, dc
	}
	wm := cfg.Lambda / float64(len(z))
	for m, zm := range z {
		r, grad := regularizer(zm, cfg)
		loss += wm * r
		for k := range grad {
			dz[m][k] += wm * grad[k]
		}
	}
	return loss, dz, dc
}

// regularizer returns R(z) and ∂R/∂z for one clip; Var is the population
// variance over k = 0 … T.
func regularizer(z []float64, cfg LossConfig) (float64, []float64) {
	t := float64(len(z))
	var mu float64
	for _, v := range z {
		mu += v
	}
	mu /= t
	var vr float64
	for _, v := range z {
		vr += (v - mu) * (v - mu)
	}
	vr /= t
	grad := make([]float64, len(z))
	switch cfg.Reg {
	case VarFloor:
		s := math.Sqrt(vr + cfg.Eps)
		gap := cfg.Tau - s
		if gap <= 0 {
			return 0, grad
		}
		// dR/dz_k = −2 gap · (1/(2s)) · 2(z_k − μ)/t
		for k, v := range z {
			grad[k] = -2 * gap / s * (v - mu) / t
		}
		return gap * gap, grad
	case KL:
		ve := vr + cfg.Eps
		r := 0.5 * (vr + mu*mu - 1 - math.Log(ve))
		for k, v := range z {
			dv := 2 * (v - mu) / t
			grad[k] = 0.5 * (dv*(1-1/ve) + 2*mu/t)
		}
		return r, grad
	}
	return 0, grad
}
