package window

import (
	"math"

	"github.com/physd/physd/estimator"
)

// Conditioning reports the design-conditioning lemma (App. "Design
// conditioning", Lem. lem:conditioning) for the design X_k = [z'_k, z_k],
// pooled over clips, with z measured from each clip's fitted equilibrium.
//
// G = (1/N) Σ X_kᵀX_k has λ_min(G) = ψ_min ≥ min{ρυ⋆, c₁τ²} − C_bd/L. Because
// ψ_min carries the latent's units, the verdict uses the scale-normalised
// design (columns divided by their RMS), whose smallest eigenvalue is
// 1 − |corr(z', z)|: 1 for a well-conditioned window, 0 for a collinear one.
type Conditioning struct {
	// PsiMin is λ_min of the scale-normalised G; PsiRaw of G itself.
	PsiMin float64 `json:"psi_min"`
	PsiRaw float64 `json:"psi_raw"`
	G11    float64 `json:"g11"` // mean z'²
	G12    float64 `json:"g12"` // mean z'z
	G22    float64 `json:"g22"` // mean z²
	// The lemma's terms, raw: ρυ⋆ (slope energy on the covered set),
	// c₁τ² (position energy from the variance floor), C_bd/L (boundary).
	RhoUps   float64 `json:"rho_upsilon"`
	C1Tau2   float64 `json:"c1_tau2"`
	Boundary float64 `json:"cbd_over_l"`
	// Bound is the lemma's lower bound on the normalised ψ_min:
	// min{ρυ⋆/G11, c₁τ²/G22} − (C_bd/L)/√(G11 G22).
	Bound float64 `json:"bound"`
}

// Condition evaluates the lemma for latents z (per clip), clip m about
// centres[m] (0 where centres is short), with the coverage result cov
// supplying ρ and υ⋆.
func Condition(z [][]float64, dt float64, centres []float64, cov Coverage) Conditioning {
	var c Conditioning
	n := 0
	var bd float64
	c1tau2 := math.Inf(1)
	for m, zm := range z {
		if len(zm) < 3 {
			continue
		}
		var centre float64
		if m < len(centres) {
			centre = centres[m]
		}
		y := make([]float64, len(zm))
		for i, v := range zm {
			y[i] = v - centre
		}
		d1, _ := estimator.Stencil(y, dt)
		for i, v := range d1 {
			c.G11 += v * v
			c.G12 += v * y[i+1]
			c.G22 += y[i+1] * y[i+1]
			n++
		}
		T := len(y) - 1
		bd += math.Abs(y[T-1]*y[T]-y[1]*y[0]) / (2 * dt)
		// c₁τ² with τ² the clip's variance (what the floor holds up).
		var mu, vr float64
		for _, v := range y {
			mu += v
		}
		mu /= float64(len(y))
		for _, v := range y {
			vr += (v - mu) * (v - mu)
		}
		vr /= float64(len(y))
		b1 := float64(T+1)/float64(T-1) - (y[0]*y[0]+y[T]*y[T])/(float64(T-1)*vr)
		c1tau2 = math.Min(c1tau2, math.Max(0, b1)*vr)
	}
	if n == 0 {
		return c
	}
	inv := 1 / float64(n)
	c.G11 *= inv
	c.G12 *= inv
	c.G22 *= inv
	c.Boundary = bd * inv
	c.C1Tau2 = c1tau2
	c.RhoUps = cov.Rho * cov.UpsStar
	tr, det := c.G11+c.G22, c.G11*c.G22-c.G12*c.G12
	c.PsiRaw = tr/2 - math.Sqrt(math.Max(0, tr*tr/4-det))
	if s := math.Sqrt(c.G11 * c.G22); s > 0 {
		c.PsiMin = 1 - math.Abs(c.G12)/s
		c.Bound = math.Min(c.RhoUps/c.G11, c.C1Tau2/c.G22) - c.Boundary/s
	}
	return c
}
