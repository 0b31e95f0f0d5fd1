package window

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A faint motion read through noise is a good fit when its residual is
// the noise: the fit check judges the residual beyond the noise for a
// readout that measures its own (estimator.Result.Noise), and refuses a
// residual that is smooth (a model the latent does not follow) as
// before, measured noise or not.
func TestFitJudgedBeyondTheNoise(t *testing.T) {
	const dt = 1.0 / 30
	var ts []float64
	for k := range 600 {
		ts = append(ts, float64(k)*dt)
	}
	clean := exactSolution(0.12, 57, 1, 0, ts)
	var rms float64
	for _, v := range clean {
		rms += v * v / float64(len(clean))
	}
	rms = math.Sqrt(rms)
	tight := [2][2]float64{{1e-8, 0}, {0, 1e-8}}
	fitCheck := func(z []float64, noise float64) (Verdict, bool) {
		r := resultOf(t, z, dt, tight)
		r.Noise = noise
		v := Certify(r, Thresholds{}, nil)
		for _, c := range v.Checks {
			if c.Name == CheckFit {
				return v, c.Passed
			}
		}
		t.Fatal("no fit check")
		return v, false
	}

	// White noise of 15 % of the motion's rms: a residual of 0.15 (> 0.1).
	rng := rand.New(rand.NewPCG(3, 4))
	noisy := make([]float64, len(clean))
	for i, v := range clean {
		noisy[i] = v + 0.15*rms*rng.NormFloat64()
	}
	if v, ok := fitCheck(noisy, 0); ok || !math.IsNaN(v.TrajectoryMisfit) {
		t.Errorf("noise unknown: fit passed %v (residual %.3g, misfit %.3g), want refused and no misfit", ok, v.TrajectoryResidual, v.TrajectoryMisfit)
	}
	// The readout's own measure may be low (a codec's noise it does not
	// see): the residual's rough part is credited all the same.
	v, ok := fitCheck(noisy, 0.02*rms)
	if !ok || !(v.TrajectoryResidual > 0.1) || !(v.TrajectoryMisfit < 0.05) {
		t.Errorf("noise measured: fit passed %v, residual %.3g, misfit %.3g; want passed, residual > 0.1, misfit < 0.05", ok, v.TrajectoryResidual, v.TrajectoryMisfit)
	}

	// A smooth residual of the same size (a slow sway the ODE does not
	// describe) is a misfit whatever noise the readout claims.
	swayed := make([]float64, len(clean))
	for i, v := range clean {
		swayed[i] = v + 0.15*rms*math.Sqrt2*math.Sin(2*math.Pi*0.3*ts[i])
	}
	if v, ok := fitCheck(swayed, 0.02*rms); ok || !(v.TrajectoryMisfit > 0.1) {
		t.Errorf("smooth misfit: fit passed %v, misfit %.3g; want refused, misfit > 0.1", ok, v.TrajectoryMisfit)
	}
	// Correlated over a few frames, the residual is not read as noise
	// (lag-one autocorrelation beyond maxNoiseLag1), even when the
	// readout claims it all.
	var walk float64
	shaken := make([]float64, len(clean))
	for i, v := range clean {
		walk = 0.9*walk + 0.15*rms*math.Sqrt(1-0.81)*rng.NormFloat64()
		shaken[i] = v + walk
	}
	if v, ok := fitCheck(shaken, 0.15*rms); ok || !(v.TrajectoryResidualLag1 > maxNoiseLag1) {
		t.Errorf("correlated residual: fit passed %v, lag-one %.2f; want refused, lag-one > %g", ok, v.TrajectoryResidualLag1, maxNoiseLag1)
	}
}
