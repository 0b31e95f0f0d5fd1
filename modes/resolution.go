package modes

import "math"

// DecayResolution is about the closest spacing, in Hz, at which a free
// decay of a mode at fn Hz with damping ratio zeta tells two modes of
// equal share from one: one half-power bandwidth, 2ζf_n. Two equal modes
// s bandwidths apart sum to one oscillation at their mean frequency
// under the envelope e^{−σt} cos(Δω t/2), σ = ζω, whose logarithm bends
// by κ = Δω²/8 = s²σ²/2 over the first beat. Viscous damping with
// Coulomb friction r times as strong at the release bends it by
// rσ²/(2(1+r)), anything up to σ²/2: below one bandwidth a decay's
// envelope cannot tell the beat from friction, which real footage shows
// and Close lets pass, so the pair reads as one mode at their mean
// frequency (measured through video: equal pairs 0.5 and 0.75
// bandwidths apart certified as one mode; 1 and 1.5 bandwidths apart
// refused).
// Releases that share the modes differently (Agree) and a long ambient
// record tell them apart sooner. NaN unless fn and zeta are positive.
func DecayResolution(fn, zeta float64) float64 {
	if !(fn > 0) || !(zeta > 0) || math.IsInf(fn, 0) || math.IsInf(zeta, 0) {
		return math.NaN()
	}
	return 2 * zeta * fn
}
