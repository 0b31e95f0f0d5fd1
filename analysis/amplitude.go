package analysis

import (
	"math"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/flow"
)

// amplitudeOf tells how far the window's region moves, in source pixels
// (sourcePx of them a frame pixel; 0 means 1): from the small-motion
// reading rd when its motion is within the linear model (its amplitude
// less its noise, and its noise floor), else from the reported readout
// when that is a followed object's position (√2 × its fitted solution's
// rms about the mean, and the rms of what the solution leaves), else
// nil.
func amplitudeOf(r *estimator.Result, rd *flow.Reading, sourcePx float64) *flow.Amplitude {
	if !(sourcePx > 0) {
		sourcePx = 1
	}
	if rd != nil && rd.Peak() <= flow.MaxPeak && !math.IsInf(rd.Noise, 0) {
		return &flow.Amplitude{Px: rd.Amplitude() * sourcePx, NoisePx: rd.Noise * sourcePx, Readout: flow.ReadoutFlow}
	}
	if r == nil || r.Readout == estimator.ReadoutEncoder || r.Readout == flow.ReadoutFlow || r.Trajectory == nil {
		return nil
	}
	var fit, res float64
	var n int
	for m, f := range r.Trajectory.Fitted {
		var mean float64
		for _, v := range f {
			mean += v
		}
		mean /= float64(len(f))
		for i, v := range f {
			fit += (v - mean) * (v - mean)
			e := r.Trajectory.Resid[m][i]
			res += e * e
		}
		n += len(f)
	}
	if n == 0 {
		return nil
	}
	return &flow.Amplitude{Px: math.Sqrt(2*fit/float64(n)) * sourcePx, NoisePx: math.Sqrt(res/float64(n)) * sourcePx, Readout: r.Readout}
}
