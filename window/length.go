package window

import "math"

// WindowFor is how long a window of one underdamped clip must be, in
// seconds, for the coverage test to resolve damping ratio ζ at natural
// angular frequency ω_n when one slope estimate's noise is relNoise times
// the clip's peak slope s_0 (levels: the levels tested).
//
// At the equilibrium level the same-direction slopes decay as
// s_j = s_0 e^{−ζω_n t_j}, one per damped period T_d = 2π/ω_d, so over a
// window L they drift by s_0 (1 − e^{−ζω_n L}). A weighted line through
// n = L/T_d of them resolves that drift when it exceeds k_t standard
// deviations of the fitted drift, σ √(12 (n−1)²/(n(n²−1))), k_t =
// √(2 ln(2·levels)) + 1 (see representatives). For ζω_n L ≪ 1 this is
//
//	L ≈ [k_t (σ/s_0) √(24π/ω_d) / (ζ ω_n)]^{2/3},
//
// the bisection below solves the exact form. It returns +Inf when no
// window resolves it (ζ ≤ 0) and at least two periods: coverage needs
// three crossings of one level in one direction.
func WindowFor(zeta, omegaN, relNoise float64, levels int) float64 {
	if !(zeta > 0) || !(zeta < 1) || !(omegaN > 0) || !(relNoise >= 0) {
		return math.Inf(1)
	}
	wd := omegaN * math.Sqrt(1-zeta*zeta)
	td := 2 * math.Pi / wd
	kt := math.Sqrt(2*math.Log(float64(max(2, 2*levels)))) + 1
	resolves := func(L float64) bool {
		n := math.Floor(L / td)
		if n < 3 {
			return false
		}
		sd := relNoise * math.Sqrt(12*(n-1)*(n-1)/(n*(n*n-1)))
		return -math.Expm1(-zeta*omegaN*L) > kt*sd
	}
	lo, hi := 2*td, 2*td
	for !resolves(hi) {
		lo, hi = hi, 2*hi
		if hi > 1e6*td {
			return math.Inf(1)
		}
	}
	for range 60 {
		mid := (lo + hi) / 2
		if resolves(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
