package modes

import (
	"fmt"
	"math"
)

// MaxAgreeChi2 is the largest χ²/(k − 1) of k releases' frequencies
// (Agree) at which they are read as one mode's: about the 99.9 % point of
// χ²₂/2 (6.9) with room for the σ's own error.
const MaxAgreeChi2 = 10.0

// Agreement is the outcome of Agree.
type Agreement struct {
	// Hz and Sigma are each release's one-term frequency (Hz) and its
	// standard error (Model.HzSigmas, widened by (1+ρ)/(1−ρ) for red
	// noise); Mean their inverse-variance weighted mean.
	Hz, Sigma []float64
	Mean      float64
	// Chi2 is Σ_i ((f_i − f̄)/σ_i)² / (k − 1).
	Chi2 float64
}

// Agree fits each release of an event window (xs, one series per clip,
// sampled dt apart) with one term started at omega (rad/s) and tests
// whether their frequencies are one's. A structure ringing in two modes
// within one spectral line reads, in each release, a frequency between
// theirs weighted by that release's shares of them; releases whose
// shares differ then disagree, which one free decay cannot show (its
// beat bends the envelope as friction does). A linear mode's frequency
// does not depend on its amplitude, a drag's or friction's damping
// leaves it alone. Releases that do not ring (fewer than two cycles, or
// a fit that fails) are left out; fewer than two left is an error.
func Agree(xs [][]float64, dt, omega float64) (Agreement, error) {
	var a Agreement
	var sw, swf float64
	for _, x := range xs {
		if float64(len(x))*dt*omega < 4*math.Pi {
			continue
		}
		m, err := Fit(x, dt, []float64{omega}, startZeta)
		if err != nil || !(m.Terms[0].Zeta() < pairMaxZeta) {
			continue
		}
		sig := m.HzSigmas(len(x), dt)
		if sig == nil || !(sig[0] > 0) {
			continue
		}
		rho := lagOne(x, dt, m)
		s := sig[0] * math.Sqrt((1+rho)/(1-rho))
		f := m.Terms[0].Omega / (2 * math.Pi)
		a.Hz, a.Sigma = append(a.Hz, f), append(a.Sigma, s)
		sw += 1 / (s * s)
		swf += f / (s * s)
	}
	if len(a.Hz) < 2 {
		return a, fmt.Errorf("%w: %d of %d releases ring", ErrFit, len(a.Hz), len(xs))
	}
	a.Mean = swf / sw
	for i, f := range a.Hz {
		d := (f - a.Mean) / a.Sigma[i]
		a.Chi2 += d * d
	}
	a.Chi2 /= float64(len(a.Hz) - 1)
	return a, nil
}

// Spread is the range of the releases' frequencies relative to their
// mean, (max f_i − min f_i)/f̄.
func (a Agreement) Spread() float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, f := range a.Hz {
		lo, hi = math.Min(lo, f), math.Max(hi, f)
	}
	return (hi - lo) / a.Mean
}

// Apart reports whether the releases' frequencies disagree beyond their
// noise (Chi2 > MaxAgreeChi2) and by more than the bar (Spread over
// PairSpread/2, 0.5 % in f, 1 % in γ0: no one frequency is then within
// the bar of every release's), and says why ("" when not). A release's
// frequency is a mix of the modes' it carries, so the modes lie at least
// that far apart.
func (a Agreement) Apart() (bool, string) {
	if !(a.Chi2 > MaxAgreeChi2) || !(a.Spread() > PairSpread/2) {
		return false, ""
	}
	return true, fmt.Sprintf("the releases ring at different frequencies (%s Hz; χ²/dof %.3g, limit %g): two modes within one spectral line whose shares differ from release to release, or a frequency that changes with amplitude; one mode fitted to them cannot be placed within the bar", joinHz(a.Hz), a.Chi2, MaxAgreeChi2)
}

func joinHz(fs []float64) string {
	s := ""
	for i, f := range fs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%.4g", f)
	}
	return s
}
