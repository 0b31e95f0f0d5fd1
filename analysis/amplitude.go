package analysis

import (
	"math"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/flow"
	"github.com/physd/physd/window"
)

// amplitudeOf tells how far the window's region moves, in source pixels
// (sourcePx of them a frame pixel; 0 means 1): from the small-motion
// reading rd when its motion is within the linear model — its amplitude
// over the span a free decay is fitted on (flow.Reading.Span) less its
// noise, and its noise floor: the reading's own, or what the
// fit of it (small) leaves when that is more (a codec's quarter-pixel
// motion vectors and quantisation are not noise the reading sees) —
// else from a fitted position (√2 × its fitted solution's rms about the
// mean, and the rms of what the solution leaves): the reported readout's
// when it is a followed object or a small-motion reading fitted from where
// it is linear, else the followed object whose path one free
// response describes best (tracked; a swing the encoder reads is still
// told in pixels when an object was followed through it), else nil. A
// small-motion reading fitted from where a large swing entered the linear
// model is not asked when the encoder's readout is reported: it knows the
// swing's tail only (a 5 px decay read 1.1 px, and refused "below the
// floor").
func amplitudeOf(r, small *estimator.Result, rd *flow.Reading, tracked []*estimator.Result, sourcePx float64) *flow.Amplitude {
	if !(sourcePx > 0) {
		sourcePx = 1
	}
	// A reading the linear model does not explain is a large motion
	// read small, unless it is below its own floor (then it is what
	// tells why the window says nothing).
	var span float64
	if rd != nil && rd.Linear() && !math.IsInf(rd.Noise, 0) {
		span = rd.SpanAmplitude()
	}
	useReading := rd != nil && rd.Linear() && !math.IsInf(rd.Noise, 0) &&
		(rd.Explained >= flow.MinExplained || span < window.MinResolved*rd.Noise)
	if useReading {
		noise := rd.Noise
		if small != nil && small.Trajectory != nil {
			_, res := trajectoryRMS(small.Trajectory)
			noise = max(noise, res)
		}
		rms := span / math.Sqrt2
		amp := math.Sqrt(2 * max(rms*rms+rd.Noise*rd.Noise-noise*noise, 0))
		return &flow.Amplitude{Px: amp * sourcePx, NoisePx: noise * sourcePx, Readout: flow.ReadoutFlow}
	}
	// A flow readout whose reading is past the linear model at its start
	// (fitted from flow.Reading.LinearFrom on) tells its amplitude by its
	// fit, as a followed object's does.
	if r == nil || r.Readout == estimator.ReadoutEncoder || r.Trajectory == nil {
		r = nil
		for _, t := range tracked {
			if t != nil && t.Trajectory != nil && (r == nil || t.Trajectory.RelResidual() < r.Trajectory.RelResidual()) {
				r = t
			}
		}
		if r == nil {
			return nil
		}
	}
	fit, res := trajectoryRMS(r.Trajectory)
	if fit == 0 && res == 0 {
		return nil
	}
	return &flow.Amplitude{Px: math.Sqrt2 * fit * sourcePx, NoisePx: res * sourcePx, Readout: r.Readout}
}

// trajectoryRMS is the rms of a fitted solution about its clips' means
// and the rms of what it leaves of the latent.
func trajectoryRMS(t *estimator.TrajectoryFit) (fit, res float64) {
	var n int
	for m, f := range t.Fitted {
		var mean float64
		for _, v := range f {
			mean += v
		}
		mean /= float64(len(f))
		for i, v := range f {
			fit += (v - mean) * (v - mean)
			e := t.Resid[m][i]
			res += e * e
		}
		n += len(f)
	}
	if n == 0 {
		return 0, 0
	}
	return math.Sqrt(fit / float64(n)), math.Sqrt(res / float64(n))
}
