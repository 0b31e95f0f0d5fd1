package window

import (
	"math"

	"github.com/physd/physd/estimator"
)

// maxImpulse is the largest jump of the latent's velocity, beyond the
// fitted solution's, accepted at one sample, in units of the fitted
// solution's largest acceleration times Δt².
const maxImpulse = 5.0

// Impulse is the test for a window that holds more than one free
// response: a knock, a push or a new release changes the velocity of the
// motion at one instant, which no solution of the ODE does.
type Impulse struct {
	// Ratio is the largest |c_k| (see testImpulse) over the fitted
	// solution's largest |z''|Δt², among the samples that pass the
	// noise and phase-step tests; 0 when none does.
	Ratio float64 `json:"ratio"`
	// At is when, in seconds from its clip's first frame.
	At float64 `json:"t"`
}

// testImpulse looks for an impulse in the output-error residual e. A
// velocity jump Δv at sample k puts c_k = e_{k+1} − 2e_k + e_{k−1} ≈ Δv·Δt
// into one second difference. A dropped or repeated frame shifts the
// phase instead — a step in e — which puts +d and −d into two neighbouring
// second differences; so a sample counts only when c_k stands out of the
// residual's noise (√(2 ln N) + 2 robust standard deviations of c, N the
// samples tested), exceeds maxImpulse × max|ẑ”|Δt², and is not cancelled
// by either neighbour (|c_k + c_{k±1}| ≥ |c_k|/2). The two samples at each
// end of a clip, where the fit is least constrained, are not tested.
//
// What it resolves: a velocity jump above maxImpulse·ω_nΔt times the peak
// velocity (0.5× for a 0.32 Hz pendulum at 20 fps, 1× for 1 Hz at 30 fps).
// A frozen frame moves the latent by up to the peak velocity × Δt, which is
// 1/(ω_nΔt) in these units, so the bar cannot go lower without refusing
// re-timed files.
func testImpulse(tf *estimator.TrajectoryFit, tr Trace) Impulse {
	var im Impulse
	if tf == nil || tr.motion == nil {
		return im
	}
	dt := tr.Dt
	var amax float64
	for _, mo := range tr.motion {
		for _, s := range mo {
			amax = math.Max(amax, math.Abs(s[2]))
		}
	}
	scale := amax * dt * dt
	if !(scale > 0) {
		return im
	}
	var abs []float64
	for _, e := range tf.Resid {
		for k := 1; k+1 < len(e); k++ {
			abs = append(abs, math.Abs(e[k+1]-2*e[k]+e[k-1]))
		}
	}
	if len(abs) < 8 {
		return im
	}
	bar := (math.Sqrt(2*math.Log(float64(len(abs)))) + 2) * 1.4826 * median(abs)
	for _, e := range tf.Resid {
		c := func(k int) float64 { return e[k+1] - 2*e[k] + e[k-1] }
		for k := 3; k+3 < len(e); k++ {
			ck := c(k)
			a := math.Abs(ck)
			if a <= bar || a/scale <= im.Ratio {
				continue
			}
			if math.Abs(ck+c(k-1)) < a/2 || math.Abs(ck+c(k+1)) < a/2 {
				continue // a phase step: the neighbour takes it back
			}
			im.Ratio, im.At = a/scale, float64(k)*dt
		}
	}
	return im
}
