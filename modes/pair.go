package modes

import (
	"fmt"
	"math"
)

// MaxPairF is the largest F statistic (Pair) at which a free response
// is read as one mode. Under one mode and white noise F follows about
// F(4, N−9) (its 99.9 % point is 4.7 for N = 600); over 18 noisy single
// modes (0.3–3 px, ζ 0.5–2 %) it stayed within 3.8, while pairs of equal
// modes half a half-power bandwidth apart (ζ = 2 %) read 27–142 and at
// one bandwidth (ζ = 1 %) 113–349.
const MaxPairF = 10.0

// PairSpread is twice the largest relative distance of the one-mode
// estimate from the stronger of two terms that Close lets pass: within
// 0.5 %, 1 % in γ0, the bar a certificate promises.
const PairSpread = 0.01

// pairMaxZeta, pairMinShare and pairMinBandwidths: what Close takes
// for two modes.
const (
	pairMaxZeta       = 0.2
	pairMinShare      = 0.1
	pairMinBandwidths = 0.25
)

// Spacing is the two terms' distance in units of the narrower half-power
// bandwidth 2ζf_n (NaN without a two-term fit).
func (p PairTest) Spacing() float64 {
	if p.Two == nil || len(p.Two.Terms) != 2 {
		return math.NaN()
	}
	a, b := p.Two.Terms[0], p.Two.Terms[1]
	bw := 2 * math.Min(math.Abs(a.Zeta()*a.Hz()), math.Abs(b.Zeta()*b.Hz()))
	return math.Abs(a.Hz()-b.Hz()) / bw
}

// PairTest is the outcome of Pair.
type PairTest struct {
	// F is the F statistic of two terms against one,
	//
	//	F = ((S₁ − S₂)/4) / (S₂/(N − 9)) · (1 − ρ)/(1 + ρ),
	//
	// S_k the residual sum of squares of the k-term fit (Fit), N the
	// samples, ρ the two-term residual's lag-one autocorrelation (lagOne):
	// how much the second term explains beyond the noise.
	F float64
	// One and Two are the fits.
	One, Two *Model
	// StrongSigma is the standard error (Hz) of the stronger of Two's
	// terms' frequency (Model.HzSigmas, widened like F for red noise),
	// +Inf when it cannot be had.
	StrongSigma float64
}

// Close reports whether the two terms are a close pair (within
// CloseBandwidths of the wider half-power bandwidth) whose second term
// explains more than MaxPairF allows, and says why ("" when not).
func (p PairTest) Close() (bool, string) {
	if p.Two == nil || !(p.F > MaxPairF) {
		return false, ""
	}
	a, b := p.Two.Terms[0], p.Two.Terms[1]
	// Two modes, not a mode and a transient: both ring (ζ < pairMaxZeta)
	// and the weaker carries pairMinShare of the stronger's amplitude.
	if !(a.Zeta() < pairMaxZeta) || !(b.Zeta() < pairMaxZeta) ||
		math.Min(a.Amplitude(), b.Amplitude()) < pairMinShare*math.Max(a.Amplitude(), b.Amplitude()) {
		return false, ""
	}
	if CloseReason(p.Two.Terms, 0) == "" {
		return false, ""
	}
	// Terms closer than pairMinBandwidths of the narrower half-power
	// bandwidth beat too slowly to show within the decay: what the
	// second term fits there is the envelope's shape (a real damper's
	// drag is not linear in the velocity: make real's ballOil, ζ 9 %,
	// fits a second term 0.1 bandwidth away with twice the damping,
	// F 68), which a pair of modes that close could not be told from.
	if p.Spacing() < pairMinBandwidths {
		return false, ""
	}
	// A one-mode estimate within PairSpread/2 of the stronger term is
	// within the bar (1 % in γ0) of the mode it mostly reads: a real
	// oscillator's amplitude-dependent frequency fits two terms 0.2 %
	// apart (make real's ballOil), a codec's distortion of one mode two
	// terms 1.1 % apart with the one-mode estimate 0.4 % from the
	// stronger (make subpixel's 1 px cable at CRF 18, F 23).
	//
	// The stronger term must be known that well too: |f − f_s| + 2σ(f_s)
	// within PairSpread/2. From one noise draw an equal pair half a
	// bandwidth apart (modes at 1.00 and 1.02 Hz) fitted, as its global
	// minimum, a weak term at 1.003 Hz and a strong one at 1.013 ± 0.003
	// Hz, the one-mode estimate 0.28 % from it: the bare distance let
	// that merged estimate be certified.
	strong := a
	if b.Amplitude() > a.Amplitude() {
		strong = b
	}
	if f := p.One.Terms[0].Hz(); math.Abs(f-strong.Hz())+2*p.StrongSigma <= PairSpread/2*f {
		return false, ""
	}
	return true, fmt.Sprintf("two modes within one spectral line (or one whose frequency changes with its amplitude): a second term at %.4g Hz beside %.4g Hz explains F = %.3g times the noise (limit %g); one mode fitted to them reads a frequency and a damping between theirs and cannot be placed within the bar of either", b.Hz(), a.Hz(), p.F, MaxPairF)
}

// Pair fits x (sampled dt seconds apart) with one term at omega (rad/s)
// and with two terms started a fraction of the one's decay rate either
// side of it (0.5, 1, 2 and 4 σ apart; the best fit kept: from fewer
// starts a pair 0.5 bandwidth apart once settled on a local minimum), and returns the
// F statistic of the second term: a test of one mode against two
// within its spectral line, which the readout's lines cannot tell
// apart.
func Pair(x []float64, dt, omega float64) (PairTest, error) {
	one, err := Fit(x, dt, []float64{omega}, startZeta)
	if err != nil {
		return PairTest{}, err
	}
	tm := one.Terms[0]
	var two *Model
	for _, k := range []float64{0.5, 1, 2, 4} {
		d := k * math.Max(tm.Sigma, 1e-3*tm.Omega)
		m, err := Fit(x, dt, []float64{tm.Omega - d, tm.Omega + d}, math.Max(tm.Zeta(), 1e-3))
		if err != nil {
			continue
		}
		if two == nil || m.RMS < two.RMS {
			two = m
		}
	}
	if two == nil {
		return PairTest{One: one}, nil
	}
	if two.Terms[0].Hz() > two.Terms[1].Hz() {
		two.Terms[0], two.Terms[1] = two.Terms[1], two.Terms[0]
	}
	f := math.Inf(1)
	strongSigma := math.Inf(1)
	if F, rho, ok := termF(x, dt, one, two); ok {
		f = F
		if sig := two.HzSigmas(len(x), dt); sig != nil {
			k := 0
			if two.Terms[1].Amplitude() > two.Terms[0].Amplitude() {
				k = 1
			}
			strongSigma = sig[k] * math.Sqrt((1+rho)/(1-rho))
		}
	}
	return PairTest{F: f, One: one, Two: two, StrongSigma: strongSigma}, nil
}

// termF is the F statistic of the term more (a Fit of x) has beyond
// fewer (one term fewer),
//
//	F = ((S_f − S_m)/4) / (S_m/(N − P_m)) · (1 − ρ)/(1 + ρ),
//
// S the residual sums of squares, P_m more's parameters, ρ the lag-one
// autocorrelation of more's residual (lagOne), returned too; ok is false
// when S_m is not positive.
func termF(x []float64, dt float64, fewer, more *Model) (f, rho float64, ok bool) {
	n := float64(len(x))
	pf, pm := float64(4*len(fewer.Terms)+1), float64(4*len(more.Terms)+1)
	sf := fewer.RMS * fewer.RMS * (n - pf)
	sm := more.RMS * more.RMS * (n - pm)
	if !(sm > 0) {
		return 0, 0, false
	}
	rho = lagOne(x, dt, more)
	return ((sf - sm) / 4) / (sm / (n - pm)) * (1 - rho) / (1 + rho), rho, true
}

// lagOne is the lag-one autocorrelation of x less the model m, within
// [0, 0.99]: a compressed stream's noise is red (a codec holds and
// rounds the moving pixels together), and a second term then explains
// (1+ρ)/(1−ρ) times what it would of white noise (AR(1) noise has that
// many fewer independent samples), so Pair's F is divided by it.
func lagOne(x []float64, dt float64, m *Model) float64 {
	var s0, s1, prev float64
	for k, v := range x {
		r := v - m.At(float64(k)*dt)
		s0 += r * r
		if k > 0 {
			s1 += r * prev
		}
		prev = r
	}
	if !(s0 > 0) {
		return 0
	}
	return math.Min(math.Max(s1/s0, 0), 0.99)
}
