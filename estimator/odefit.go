package estimator

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ErrDegenerate reports a design that cannot determine (γ1, γ0): too few
// samples, a constant latent, or a singular normal matrix.
var ErrDegenerate = errors.New("degenerate design")

// ODEFit is the least-squares fit of the stencil residual
//
//	r_k = z''_k + γ1 z'_k + γ0 z_k + g
//
// over the interior indices of every clip, with (γ1, γ0) shared and g the
// latent's equilibrium offset (App. "Constant term g") as the Offset asks:
// zero, one shared G, or one ClipG[m] per clip. Gamma1 and Gamma0 here are
// the stencil's coefficients γ^Δ; Exact maps them to continuous time.
type ODEFit struct {
	Gamma1, Gamma0, G float64
	// ClipG holds each clip's own offset g_m (ClipOffsets only, else nil).
	ClipG []float64
	// Cov is the heteroscedasticity-and-autocorrelation-consistent
	// (Newey–West, Bartlett kernel) covariance of (γ1, γ0).
	Cov [2][2]float64
	// Resid holds r_k per clip (len T_m − 1 each).
	Resid [][]float64
	// N is the number of interior samples; RSS = Σ r_k².
	N   int
	RSS float64
	// Signal is the mean square of z''_k, the scale the residual is judged against.
	Signal float64
}

// OffsetOf is clip m's constant g: G plus its own ClipG[m], if any.
func (f *ODEFit) OffsetOf(m int) float64 {
	if m < len(f.ClipG) {
		return f.G + f.ClipG[m]
	}
	return f.G
}

// RelResidual is the fit quality: RMS residual over RMS acceleration.
func (f *ODEFit) RelResidual() float64 {
	if f.Signal <= 0 {
		return math.Inf(1)
	}
	return math.Sqrt(f.RSS / float64(f.N) / f.Signal)
}

// FitODE solves for (γ1, γ0[, g]) by least squares: y = −z”, X = [z', z, 1].
// The residual is linear in the coefficients, so this is the exact minimiser
// of L_ODE for fixed latents (Thm. 4.6 calls it η̂). With ClipOffsets the
// per-clip constants are partialled out (Frisch–Waugh–Lovell): each clip's
// rows are centred on their own means and (γ1, γ0) solved from those.
func FitODE(latents [][]float64, dt float64, off Offset) (*ODEFit, error) {
	return fitODE(latents, dt, off, true)
}

// fitODECoef is FitODE's coefficients alone (γ1, γ0, G, ClipG and N; no
// residuals, RSS or covariance), bitwise those of FitODE: for the
// alternations and training steps that use nothing else, where the
// Newey–West meat, O(n^{4/3}), was most of the cost.
func fitODECoef(latents [][]float64, dt float64, off Offset) (*ODEFit, error) {
	return fitODE(latents, dt, off, false)
}

func fitODE(latents [][]float64, dt float64, off Offset, withCov bool) (*ODEFit, error) {
	p := 2
	if off == SharedOffset {
		p = 3
	}
	perClip := off == ClipOffsets
	if err := checkFinite(latents); err != nil {
		return nil, fmt.Errorf("fit ODE: %w", err)
	}
	var xtx [9]float64
	var xty [3]float64
	n := 0
	d1s := make([][]float64, len(latents))
	d2s := make([][]float64, len(latents))
	means := make([][3]float64, len(latents)) // per clip: z', z, z''
	for m, z := range latents {
		d1, d2 := Stencil(z, dt)
		d1s[m], d2s[m] = d1, d2
		if perClip && len(d1) > 0 {
			for i := range d1 {
				means[m][0] += d1[i]
				means[m][1] += z[i+1]
				means[m][2] += d2[i]
			}
			for a := range 3 {
				means[m][a] /= float64(len(d1))
			}
		}
		mu := means[m]
		for i := range d1 {
			x := [3]float64{d1[i] - mu[0], z[i+1] - mu[1], 1}
			y := -(d2[i] - mu[2])
			for a := range p {
				xty[a] += x[a] * y
				for b := range p {
					xtx[a*3+b] += x[a] * x[b]
				}
			}
			n++
		}
	}
	np := p // coefficients fitted, the partialled-out offsets included
	if perClip {
		np += len(latents)
	}
	if n < np+2 {
		return nil, fmt.Errorf("fit ODE: %d interior samples for %d coefficients: %w", n, np, ErrDegenerate)
	}
	A := mat.NewDense(p, p, nil)
	for a := range p {
		for b := range p {
			v := xtx[a*3+b]
			if math.IsInf(v, 0) || math.IsNaN(v) || math.IsInf(xty[a], 0) || math.IsNaN(xty[a]) {
				return nil, fmt.Errorf("fit ODE: normal equations overflow: %w", ErrNotFinite)
			}
			A.Set(a, b, v)
		}
	}
	var inv mat.Dense
	if err := inv.Inverse(A); err != nil {
		return nil, fmt.Errorf("fit ODE: normal matrix: %w", ErrDegenerate)
	}
	if c := mat.Cond(A, 2); c > 1e14 || math.IsNaN(c) {
		return nil, fmt.Errorf("fit ODE: normal matrix condition %.3g: %w", c, ErrDegenerate)
	}
	var beta [3]float64
	for a := range p {
		for b := range p {
			beta[a] += inv.At(a, b) * xty[b]
		}
	}
	f := &ODEFit{Gamma1: beta[0], Gamma0: beta[1], N: n, Resid: make([][]float64, len(latents))}
	if off == SharedOffset {
		f.G = beta[2]
	}
	if perClip {
		f.ClipG = make([]float64, len(latents))
		for m, mu := range means {
			f.ClipG[m] = -(mu[2] + f.Gamma1*mu[0] + f.Gamma0*mu[1])
		}
	}
	if !withCov {
		return f, nil
	}
	// Residuals, then the Newey–West meat over each clip.
	lag := neweyWestLag(n)
	S := make([]float64, p*p)
	for m, z := range latents {
		d1, d2 := d1s[m], d2s[m]
		r := make([]float64, len(d1))
		x := make([]float64, 0, len(d1)*p)
		g, mu := f.OffsetOf(m), means[m]
		for i := range d1 {
			r[i] = d2[i] + f.Gamma1*d1[i] + f.Gamma0*z[i+1] + g
			f.RSS += r[i] * r[i]
			f.Signal += d2[i] * d2[i]
			x = append(x, d1[i]-mu[0], z[i+1]-mu[1])
			if p == 3 {
				x = append(x, 1)
			}
		}
		f.Resid[m] = r
		addNeweyWest(S, p, lag, r, x)
	}
	f.Signal /= float64(n)
	// Sandwich (XᵀX)⁻¹ S (XᵀX)⁻¹, with a small-sample factor n/(n−p).
	scale := float64(n) / float64(n-np)
	for a := range 2 {
		for b := range 2 {
			var v float64
			for c := range p {
				for d := range p {
					v += inv.At(a, c) * S[c*p+d] * inv.At(d, b)
				}
			}
			f.Cov[a][b] = v * scale
		}
	}
	return f, nil
}

// neweyWestLag is the Bartlett kernel's bandwidth for n samples.
func neweyWestLag(n int) int { return int(math.Ceil(2 * math.Cbrt(float64(n)))) }

// addNeweyWest adds one segment's Newey–West (Bartlett kernel) meat
// Σ_l w_l Σ_i e_i e_{i+l} (x_i x_{i+l}ᵀ + x_{i+l} x_iᵀ), the l = 0 term
// once, to S (p×p, row-major). r holds the segment's residuals and x its
// rows of the design or Jacobian (len(r)×p, row-major); lags never cross
// segments, because clips are independent.
func addNeweyWest(S []float64, p, lag int, r, x []float64) {
	for l := 0; l <= lag && l < len(r); l++ {
		w := 1 - float64(l)/float64(lag+1)
		for i := 0; i+l < len(r); i++ {
			j := i + l
			xi, xj := x[i*p:(i+1)*p], x[j*p:(j+1)*p]
			e := r[i] * r[j] * w
			for a := range p {
				for b := range p {
					v := e * xi[a] * xj[b]
					if l > 0 {
						v += e * xj[a] * xi[b]
					}
					S[a*p+b] += v
				}
			}
		}
	}
}

// ErrNotFinite reports a latent that is NaN or infinite: training
// diverged, or the caller passed one in.
var ErrNotFinite = errors.New("latent is not finite")

// checkFinite rejects NaN and Inf latents before they reach LAPACK, which
// panics on them.
func checkFinite(latents [][]float64) error {
	for m, z := range latents {
		for k, v := range z {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("clip %d sample %d is %g: %w", m, k, v, ErrNotFinite)
			}
		}
	}
	return nil
}
