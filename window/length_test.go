package window

import (
	"math"
	"math/rand/v2"
	"testing"
)

// WindowFor against the coverage test itself: a window a third longer
// than it asks for is covered in most draws, one half as long in few.
func TestWindowForPredictsCoverage(t *testing.T) {
	const zeta, sigma, rho = 0.002, 0.01, 0.5
	// Slope noise of AR(1) noise through the corrected slope estimator is
	// not known in closed form: measure it on one draw, as Certify does.
	rng := rand.New(rand.NewPCG(7, 7))
	probe := noiseCase{zeta: zeta, periods: 20, fps: 30, sigma: sigma, rho: rho}
	z, dt := simulateLatent(rng, probe)
	cov, ok := fittedCoverage(t, z, dt)
	if !ok {
		t.Fatal("probe fit failed")
	}
	rel := cov.Noise.Slope / (1.41 * 2 * math.Pi)
	L := WindowFor(zeta, 2*math.Pi, rel, 200)
	t.Logf("slope noise %.3g of the peak slope: ζ = %g needs %.1f s (%.1f periods)", rel, zeta, L, L)
	if math.IsInf(L, 0) || L < 2 {
		t.Fatalf("WindowFor = %g", L)
	}
	count := func(periods float64) int {
		c := 0
		for range 40 {
			z, dt := simulateLatent(rng, noiseCase{zeta: zeta, periods: periods, fps: 30, sigma: sigma, rho: rho})
			if cov, ok := fittedCoverage(t, z, dt); ok && cov.Holds {
				c++
			}
		}
		return c
	}
	long, short := count(1.33*L), count(0.5*L)
	t.Logf("covered: %d/40 at 1.33 L, %d/40 at L/2", long, short)
	if long < 30 || short > 10 {
		t.Errorf("WindowFor does not predict coverage: %d/40 covered at 1.33 L, %d/40 at L/2", long, short)
	}
	if !math.IsInf(WindowFor(0, 2*math.Pi, rel, 200), 1) {
		t.Error("an undamped clip has a finite window")
	}
}
