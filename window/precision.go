package window

import (
	"fmt"
	"math"

	"github.com/physd/physd/estimator"
)

// Default precision limits (Thresholds): σ(f_n) ≤ 1 % of f_n and
// σ(ζ) ≤ max(30 % of ζ, 0.005). A structural-health rule watches for f_n
// drifts of a few per cent (docs/method.md, "The precision condition":
// the paper's cells, the real dev set and the held-back scenes behind
// them).
const (
	defaultMaxRelSigmaFn   = 0.01
	defaultMaxRelSigmaZeta = 0.3
	defaultSigmaZetaFloor  = 0.005
)

// Precision is the certificate's last condition: the estimate's σ within
// limits a user can act on. Coverage and conditioning say the answer is
// unique; precision says it is worth publishing.
type Precision struct {
	// RelSigmaFn is σ(f_n)/f_n and SigmaZeta is σ(ζ), as the estimate
	// reports them (estimator.Physics).
	RelSigmaFn float64 `json:"rel_sigma_fn"`
	SigmaZeta  float64 `json:"sigma_zeta"`
	// LimitFn is the limit on RelSigmaFn (Thresholds.MaxRelSigmaFn) and
	// LimitZeta the limit on SigmaZeta, max(MaxRelSigmaZeta·|ζ|,
	// SigmaZetaFloor).
	LimitFn   float64 `json:"limit_rel_sigma_fn"`
	LimitZeta float64 `json:"limit_sigma_zeta"`
	// Holds reports whether both σ are within their limits.
	Holds bool `json:"holds"`
	// Data is how many times the window's information both σ need to
	// come within their limits, max((σ/limit)²) over the two (σ falls as
	// the square root of the information): ≤ 1 when Holds.
	Data float64 `json:"data_factor"`
	// WindowNeeded, for one underdamped clip refused for precision, is
	// about how long a window would reach the limits (precisionWindow), in
	// seconds; 0 when no window would or it does not apply.
	WindowNeeded float64 `json:"window_needed_s,omitempty"`
	// ClipsNeeded, for several clips (events) refused for precision, is
	// about how many clips like these would reach the limits.
	ClipsNeeded int `json:"clips_needed,omitempty"`
}

// testPrecision measures r's σ against th's limits (th with its defaults).
func testPrecision(r *estimator.Result, th Thresholds) Precision {
	p := r.Physics
	pr := Precision{RelSigmaFn: p.SigmaF / p.FreqN, SigmaZeta: p.SigmaZ, LimitFn: th.MaxRelSigmaFn,
		LimitZeta: math.Max(th.MaxRelSigmaZeta*math.Abs(p.Zeta), th.SigmaZetaFloor)}
	// NaN (no frequency, no σ) fails both comparisons: not precise.
	pr.Holds = pr.RelSigmaFn <= pr.LimitFn && pr.SigmaZeta <= pr.LimitZeta
	pr.Data = math.Max(sq(pr.RelSigmaFn/pr.LimitFn), sq(pr.SigmaZeta/pr.LimitZeta))
	if pr.Holds || math.IsNaN(pr.Data) || math.IsInf(pr.Data, 0) {
		return pr
	}
	if m := r.ClipCount(); m > 1 {
		// Independent releases: the information adds up clip by clip.
		if need := math.Ceil(float64(m) * pr.Data); need < 1e6 {
			pr.ClipsNeeded = int(need)
		}
		return pr
	}
	if p.Zeta > 0 && p.Zeta < 1 {
		pr.WindowNeeded = precisionWindow(p.Zeta*p.OmegaN, clipSpan(r), pr.Data)
	}
	return pr
}

// reason is the refusal's text.
func (pr Precision) reason() string {
	s := fmt.Sprintf("imprecise: σ(f_n) is %.3g%% of f_n (limit %.3g%%) and σ(ζ) is %.3g (limit %.3g)",
		100*pr.RelSigmaFn, 100*pr.LimitFn, pr.SigmaZeta, pr.LimitZeta)
	switch {
	case pr.ClipsNeeded > 0:
		s += fmt.Sprintf("; about %d clips like these would reach both limits", pr.ClipsNeeded)
	case pr.WindowNeeded > 0:
		s += fmt.Sprintf("; a window of about %.3g s would reach both limits", pr.WindowNeeded)
	case pr.Data > 1:
		s += fmt.Sprintf("; it needs %.3g× the information, more than a longer window of this decaying motion holds: more releases (events) or a stronger one", pr.Data)
	}
	return s
}

// precisionWindow is how long one clip of a free decay with envelope
// e^{−a t} must be to hold data times the information its first have
// seconds hold; 0 when none does.
//
// For a damped sinusoid in white noise the information on its frequency
// and its decay rate both grow as
//
//	I(T) = ∫₀ᵀ t² e^{−2at} dt = (2 − e^{−bT}(b²T² + 2bT + 2)) / b³,  b = 2a,
//
// (the derivative of the signal with respect to either is t times the
// signal): as T³/3 while the motion lasts, towards 2/b³ once it has died
// away. The bisection solves I(T) = data·I(have).
func precisionWindow(a, have, data float64) float64 {
	if !(a > 0) || !(have > 0) || !(data > 1) {
		return 0
	}
	info := func(t float64) float64 {
		b := 2 * a
		if x := b * t; x < 1e-3 {
			return t * t * t / 3 * (1 - 0.75*x) // the series' first terms
		}
		return (2 - math.Exp(-b*t)*(b*b*t*t+2*b*t+2)) / (b * b * b)
	}
	want := data * info(have)
	if !(want < 2/(8*a*a*a)*(1-1e-9)) { // I(∞) = 2/b³
		return 0
	}
	lo, hi := have, 2*have
	for info(hi) < want {
		lo, hi = hi, 2*hi
	}
	for range 60 {
		mid := (lo + hi) / 2
		if info(mid) < want {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// clipSpan is the seconds one clip's runs span, first sample to last.
func clipSpan(r *estimator.Result) float64 {
	last := len(r.Latents) - 1
	if last < 0 {
		return 0
	}
	return float64(firstOf(r, last)+len(r.Latents[last])-1-firstOf(r, 0)) * r.Dt
}

func sq(x float64) float64 { return x * x }
