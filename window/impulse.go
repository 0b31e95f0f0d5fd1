package window

import (
	"fmt"
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
	// noise and phase-step tests and have no key frame within one
	// sample; 0 when none does.
	Ratio float64 `json:"ratio"`
	// At is when, in seconds from its clip's first frame.
	At float64 `json:"t"`
	// KeyRatio and KeyAt are the largest jump of the same kind, and
	// when, set aside because a key frame lies within one sample of it
	// (estimator.Result.Keys): there the codec re-coded the whole
	// picture, and the readout may read its re-quantisation as a step; 0
	// when there is none. KeysGuessed says the key frames were guessed
	// from the pictures, the source telling no frame types.
	KeyRatio    float64 `json:"key_ratio,omitempty"`
	KeyAt       float64 `json:"key_t,omitempty"`
	KeysGuessed bool    `json:"keys_guessed,omitempty"`
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
// Nor are the samples with a key frame within one sample (keys; see
// keyFrames.near): a key frame re-codes the whole picture, a step in the
// image that a readout turns into a step in the latent, and a step
// joined to the change of drift the codec's prediction leaves before it
// need not cancel as a phase step does. The largest such jump is
// reported apart (Impulse.KeyRatio) and fails nothing: a knock that
// lands within a sample of a key frame goes unseen, 3 samples in every
// GOP (a tenth of them at GOP 30, 1 % at GOP 250).
//
// What it resolves: a velocity jump above maxImpulse·ω_nΔt times the peak
// velocity (0.5× for a 0.32 Hz pendulum at 20 fps, 1× for 1 Hz at 30 fps).
// A frozen frame moves the latent by up to the peak velocity × Δt, which is
// 1/(ω_nΔt) in these units, so the bar cannot go lower without refusing
// re-timed files.
func testImpulse(tf *estimator.TrajectoryFit, tr Trace, keys keyFrames) Impulse {
	im := Impulse{KeysGuessed: keys.guessed}
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
	for m, e := range tf.Resid {
		c := func(k int) float64 { return e[k+1] - 2*e[k] + e[k-1] }
		for k := 3; k+3 < len(e); k++ {
			ck := c(k)
			a := math.Abs(ck)
			if a <= bar || a/scale <= min(im.Ratio, im.KeyRatio) {
				continue
			}
			if math.Abs(ck+c(k-1)) < a/2 || math.Abs(ck+c(k+1)) < a/2 {
				continue // a phase step: the neighbour takes it back
			}
			switch r := a / scale; {
			case keys.near(m, k):
				if r > im.KeyRatio {
					im.KeyRatio, im.KeyAt = r, float64(k)*dt
				}
			case r > im.Ratio:
				im.Ratio, im.At = r, float64(k)*dt
			}
		}
	}
	return im
}

// keyNote says why a jump at a key frame (im.KeyRatio) was set aside; ""
// when none would have failed the test.
func (im Impulse) keyNote() string {
	if !(im.KeyRatio > maxImpulse) {
		return ""
	}
	how := "told by the decoder"
	if im.KeysGuessed {
		how = "guessed from a step over the whole picture"
	}
	return fmt.Sprintf("a velocity jump of %.1f× at %.2f s is within one frame of a key frame (%s), where the codec re-coded the whole picture: set aside, not read as an impulse", im.KeyRatio, im.KeyAt, how)
}
