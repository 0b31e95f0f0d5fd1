package window

import (
	"fmt"
	"math"

	"github.com/physd/physd/estimator"
)

// A latent that is a function of the oscillator's state, z̃ = h(z), turns
// where the state turns: ż̃ = h′(z)·ż vanishes with ż, whatever the map h.
// So two readouts of one oscillating object, each a function of its
// state, swing in phase (or in antiphase, for a decreasing h). A learned
// latent that swings at a followed object's frequency but runs a fraction
// of a period ahead of or behind it is not a function of that object's
// state: it mixes the object with another motion (moving clutter, a
// shadow), and what it certifies describes the mixture, not the object.
const (
	// lagMinCorr is the correlation, at the best lag, from which the
	// latent counts as a shifted copy of the object's motion.
	lagMinCorr = 0.9
	// lagFreqTol is how close the two readouts' damped frequencies must
	// be to count as one oscillation (relative).
	lagFreqTol = 0.1
	// lagMaxFrac is the largest lag, in periods, taken as noise: 1/20 of
	// a period is 18°.
	lagMaxFrac = 1.0 / 20
)

// phaseLag is the shift s (frames, sub-frame) that best aligns b with a,
// |corr(a[k], b[k+s])| maximal for |s| ≤ maxLag, and that correlation. a
// and b start at frames fa and fb of one clip; a is read on the frames
// where b is there at every shift, so each shift compares the same frames
// of a. ok is false when fewer than minLen frames remain.
func phaseLag(a []float64, fa int, b []float64, fb int, maxLag, minLen int) (lag, corr float64, ok bool) {
	lo, hi := max(fa, fb+maxLag), min(fa+len(a), fb+len(b)-maxLag)
	if hi-lo < max(minLen, 3) {
		return 0, 0, false
	}
	cs := make([]float64, 2*maxLag+1)
	best := 0
	for i := range cs {
		s := i - maxLag
		cs[i] = math.Abs(corrAt(a[lo-fa:hi-fa], b[lo+s-fb:hi+s-fb]))
		if cs[i] > cs[best] {
			best = i
		}
	}
	lag, corr = float64(best-maxLag), cs[best]
	// A parabola through the peak and its neighbours places it between
	// frames.
	if best > 0 && best < len(cs)-1 {
		l, c, r := cs[best-1], cs[best], cs[best+1]
		if d := l - 2*c + r; d < 0 {
			lag += 0.5 * (l - r) / d
		}
	}
	return lag, corr, true
}

// corrAt is Pearson's correlation of x and y (equal lengths); 0 when one
// is constant.
func corrAt(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// dampedFreq is ω_d = √(γ0 − γ1²/4) of r's fit, or 0 when it does not
// oscillate.
func dampedFreq(r *estimator.Result) float64 {
	if w2 := r.Gamma0 - r.Gamma1*r.Gamma1/4; w2 > 0 {
		return math.Sqrt(w2)
	}
	return 0
}

// lagging says how the learned latent of enc runs ahead of or behind the
// followed object obj although both swing at one frequency, or "" when it
// does not (or when obj says nothing: it does not oscillate, was followed
// for less than half a period, or the latent is no shifted copy of its
// motion).
func lagging(enc, obj *estimator.Result) string {
	we, wo := dampedFreq(enc), dampedFreq(obj)
	if we == 0 || wo == 0 || math.Abs(we-wo) > lagFreqTol*wo || enc.Dt <= 0 || len(enc.Latents) != len(obj.Latents) {
		return ""
	}
	period := 2 * math.Pi / wo / enc.Dt // frames
	maxLag := int(math.Ceil(period / 4))
	for m := range obj.Latents {
		fo := 0
		if obj.First != nil {
			fo = obj.First[m]
		}
		fe := 0
		if enc.First != nil {
			fe = enc.First[m]
		}
		lag, corr, ok := phaseLag(obj.Latents[m], fo, enc.Latents[m], fe, maxLag, int(math.Ceil(period/2)))
		if !ok || corr < lagMinCorr {
			continue
		}
		if math.Abs(lag) > max(1, lagMaxFrac*period) {
			return fmt.Sprintf("the latent swings with the object followed by %s (%.0f%% alike) but %.1f frames (%.0f°) out of phase with it: a function of that object's state turns when it turns, so the latent mixes it with another motion",
				name(obj), 100*corr, math.Abs(lag), 360*math.Abs(lag)/period)
		}
	}
	return ""
}
