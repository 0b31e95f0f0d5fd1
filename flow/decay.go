package flow

import (
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/dsp/fourier"
)

// decayRatio is how far above the reading's quietest stretch a stretch's
// rms must be to count as motion the video resolves: √(ratio² − 1) ≈ 3.9
// times the noise's rms.
const decayRatio = 4.0

// decayPeriods is a stretch's length in periods of the reading's
// dominant frequency.
const decayPeriods = 2

// minDecayStretches is the fewest stretches a trimmed reading keeps: a
// free decay shorter than that is refused on its own terms (coverage,
// precision), not cut shorter still.
const minDecayStretches = 4

// resolvedSpan is how many leading samples of z hold motion the video
// resolves: a free decay falls into the noise, and the samples after it
// hold nothing but noise — under a codec, noise that is red (quarter-pel
// rounding common to the moving pixels), which the fit check reads as
// misfit against a signal whose rms the tail has diluted. A modal
// analyst cuts the record where the decay meets the floor; so does this.
//
// z is cut into stretches of decayPeriods periods of its dominant
// frequency (the periodogram's peak); the floor is the quietest
// stretch's rms. The span ends after the last stretch whose rms is at
// least decayRatio times the floor. Motion that does not fall to the
// floor (a steady or driven response, a decay slower than the window)
// keeps every sample, as does a span of fewer than minDecayStretches
// stretches. It returns len(z) when nothing is cut.
func resolvedSpan(z []float64) int {
	n := len(z)
	f := dominantBin(z)
	if f == 0 {
		return n
	}
	w := int(math.Round(decayPeriods * float64(n) / float64(f)))
	if w < 4 || n/w < 2*minDecayStretches {
		return n
	}
	k := n / w
	rms := make([]float64, k)
	floor := math.Inf(1)
	for b := range k {
		seg := z[b*w : (b+1)*w]
		var mean, ss float64
		for _, v := range seg {
			mean += v / float64(w)
		}
		for _, v := range seg {
			ss += (v - mean) * (v - mean)
		}
		rms[b] = math.Sqrt(ss / float64(w))
		floor = min(floor, rms[b])
	}
	if !(floor > 0) {
		return n
	}
	last := -1
	for b, r := range rms {
		if r >= decayRatio*floor {
			last = b
		}
	}
	if last < 0 || last == k-1 || last+1 < minDecayStretches {
		return n
	}
	return (last + 1) * w
}

// dominantBin is the periodogram's peak bin of z, its mean taken out (0:
// no peak, a constant).
func dominantBin(z []float64) int {
	n := len(z)
	if n < 8 {
		return 0
	}
	x := make([]float64, n)
	var mean float64
	for _, v := range z {
		mean += v / float64(n)
	}
	for i, v := range z {
		x[i] = v - mean
	}
	c := fourier.NewFFT(n).Coefficients(nil, x)
	best, bin := 0.0, 0
	for k := 1; k < len(c); k++ {
		if p := cmplx.Abs(c[k]); p > best {
			best, bin = p, k
		}
	}
	return bin
}
