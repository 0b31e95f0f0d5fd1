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

// run is a stretch of a latent: its values from frame first of its clip.
type run struct {
	first int
	z     []float64
}

// phaseLag is the shift s (frames, sub-frame) that best aligns b with a,
// |corr(a[k], b[k+s])| maximal for |s| ≤ maxLag, and that correlation. a
// is one or more runs of a readout of one clip (an object hidden between
// them), b starts at frame fb of that clip; a is read on the frames where
// b is there at every shift, so each shift compares the same frames of
// a. ok is false when fewer than minLen frames remain.
func phaseLag(a []run, b []float64, fb int, maxLag, minLen int) (lag, corr float64, ok bool) {
	lo, hi := fb+maxLag, fb+len(b)-maxLag
	var frames []int // the frames of a compared
	var av []float64
	for _, r := range a {
		for k := max(lo, r.first); k < min(hi, r.first+len(r.z)); k++ {
			frames = append(frames, k)
			av = append(av, r.z[k-r.first])
		}
	}
	if len(frames) < max(minLen, 3) {
		return 0, 0, false
	}
	cs := make([]float64, 2*maxLag+1)
	bv := make([]float64, len(frames))
	best := 0
	for i := range cs {
		s := i - maxLag
		for j, k := range frames {
			bv[j] = b[k+s-fb]
		}
		cs[i] = math.Abs(corrAt(av, bv))
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
	if we == 0 || wo == 0 || math.Abs(we-wo) > lagFreqTol*wo || enc.Dt <= 0 || enc.ClipCount() != obj.ClipCount() {
		return ""
	}
	period := 2 * math.Pi / wo / enc.Dt // frames
	maxLag := int(math.Ceil(period / 4))
	// The object's runs of a clip are compared with the latent of that
	// clip.
	for c := range obj.ClipCount() {
		a := objectRuns(obj, c)
		for m := range enc.Latents {
			if enc.ClipOf(m) != c {
				continue
			}
			lag, corr, ok := phaseLag(a, enc.Latents[m], firstOf(enc, m), maxLag, int(math.Ceil(period/2)))
			if sol, ok2 := objectSolution(obj, c, a, maxLag); ok2 {
				// The object's solution extends a quarter period either
				// side of where it was seen: the latent is compared on
				// every frame the object was seen through, the
				// solution shifted against it.
				fe := firstOf(enc, m)
				lo, hi := max(sol.first+maxLag, fe), min(sol.first+len(sol.z)-maxLag, fe+len(enc.Latents[m]))
				if lo < hi {
					lag, corr, ok = phaseLag([]run{{lo, enc.Latents[m][lo-fe : hi-fe]}}, sol.z, sol.first, maxLag, int(math.Ceil(period/2)))
				}
			}
			if !ok || corr < lagMinCorr {
				continue
			}
			if math.Abs(lag) > max(1, lagMaxFrac*period) {
				return fmt.Sprintf("the latent swings with the object followed by %s (%.0f%% alike) but %.1f frames (%.0f°) out of phase with it: a function of that object's state turns when it turns, so the latent mixes it with another motion",
					name(obj), 100*corr, math.Abs(lag), 360*math.Abs(lag)/period)
			}
		}
	}
	return ""
}

// objectRuns are the followed object's runs of clip c.
func objectRuns(obj *estimator.Result, c int) []run {
	var a []run
	for i := range obj.Latents {
		if obj.ClipOf(i) == c {
			a = append(a, run{firstOf(obj, i), obj.Latents[i]})
		}
	}
	return a
}

// objectSolution is the object's fitted solution over its runs a of clip
// c and maxLag frames either side, when it was hidden between them and
// its runs fit one free response (its output-error fit within lagFitMax
// of its size): the phase of an oscillator seen on both sides of a gap
// is known across it.
func objectSolution(obj *estimator.Result, c int, a []run, maxLag int) (run, bool) {
	tf := obj.Trajectory
	if len(a) < 2 || tf == nil || !(tf.RelResidual() <= lagFitMax) {
		return run{}, false
	}
	last := a[len(a)-1]
	sol, err := tf.Solution(c, -maxLag, last.first+len(last.z)-a[0].first+2*maxLag, obj.Dt)
	if err != nil {
		return run{}, false
	}
	return run{a[0].first - maxLag, sol}, true
}

// lagFitMax is the largest relative output-error residual of a followed
// object whose fitted solution stands for it between its runs.
const lagFitMax = 0.05

// firstOf is the frame latent sequence m of r starts at (Result.First).
func firstOf(r *estimator.Result, m int) int {
	if r.First == nil {
		return 0
	}
	return r.First[m]
}
