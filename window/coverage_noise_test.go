package window

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/physd/physd/estimator"
)

// The certificate on simulated latents with coloured noise at the levels
// measured on the real dev set (../shared/realvid, docs/real-results.md):
// the output-error residual's RMS is 0.4–2.5 % of the latent's amplitude
// once misfit is counted, its high-frequency part 0.7–1.5 %, and its lag-one
// autocorrelation 0.2–0.9. The noise here is AR(1),
//
//	n_k = ρ n_{k−1} + √(1−ρ²) σ ε_k,
//
// so its stationary σ is the level asked for whatever ρ.

// noiseCase is a latent family and how often it must be covered.
type noiseCase struct {
	name           string
	zeta, periods  float64 // damping ratio; window length in undamped periods
	fps            float64
	v0             float64 // initial velocity in units of A·ω (0: released from rest)
	sigma, rho     float64 // noise σ (fraction of the amplitude) and lag-one autocorrelation
	wantCovered    bool
	minCoveredFrac float64 // for wantCovered: the least fraction of draws covered
}

// simulateLatent returns A·x(t) + noise for x” + 2ζω x' + ω² x = 0 with
// ω = 2π (1 Hz), x(0) = 1, x'(0) = v0·ω, sampled at fps.
func simulateLatent(rng *rand.Rand, c noiseCase) ([]float64, float64) {
	const w = 2 * math.Pi
	dt := 1 / c.fps
	n := int(math.Round(c.periods * c.fps))
	z := make([]float64, n)
	g1, g0 := 2*c.zeta*w, w*w
	// Exact sampling through the state map.
	t := make([]float64, n)
	for k := range t {
		t[k] = float64(k) * dt
	}
	x := exactSolution(g1, g0, 1, c.v0*w, t)
	var noise float64
	for k := range z {
		noise = c.rho*noise + math.Sqrt(1-c.rho*c.rho)*c.sigma*rng.NormFloat64()
		z[k] = 1.41*x[k] + 1.41*noise
	}
	return z, dt
}

// exactSolution is the closed-form free response of z” + g1 z' + g0 z = 0.
func exactSolution(g1, g0, z0, v0 float64, t []float64) []float64 {
	out := make([]float64, len(t))
	a := g1 / 2
	d := g0 - a*a
	for i, tt := range t {
		e := math.Exp(-a * tt)
		switch {
		case d > 1e-12:
			wd := math.Sqrt(d)
			out[i] = e * (z0*math.Cos(wd*tt) + (v0+a*z0)/wd*math.Sin(wd*tt))
		case d < -1e-12:
			s := math.Sqrt(-d)
			out[i] = e * (z0*math.Cosh(s*tt) + (v0+a*z0)/s*math.Sinh(s*tt))
		default:
			out[i] = e * (z0 + (v0+a*z0)*tt)
		}
	}
	return out
}

// fittedCoverage fits the latent as estimator.Fit does (stencil, exact
// map, output-error fit from there) and tests coverage on the trace.
func fittedCoverage(t *testing.T, z []float64, dt float64) (Coverage, bool) {
	t.Helper()
	lat := [][]float64{z}
	f, err := estimator.FitODE(lat, dt, estimator.SharedOffset)
	if err != nil {
		return Coverage{}, false
	}
	g1, g0, err := estimator.Exact(f.Gamma1, f.Gamma0, dt)
	if err != nil {
		return Coverage{}, false
	}
	tf, err := estimator.FitTrajectory(lat, dt, g1, g0, estimator.SharedOffset)
	if err != nil || !(tf.Gamma0 > 0) {
		return Coverage{}, false
	}
	mo, err := tf.Motion(dt)
	if err != nil {
		t.Fatalf("motion: %v", err)
	}
	tr := newFittedTrace(lat, dt, tf.Resid, mo, tf.Gamma0)
	return CoverageOf(tr, CoverageOptions{}), true
}

func TestCoverageColouredNoise(t *testing.T) {
	draws := 300
	if testing.Short() {
		draws = 60
	}
	cases := []noiseCase{
		// Light damping resolved: Q = 100 over 12 periods.
		{name: "Q=100, 12 periods, 30 fps, 1 %, ρ=0.5", zeta: 0.005, periods: 12, fps: 30, sigma: 0.01, rho: 0.5, wantCovered: true, minCoveredFrac: 0.9},
		{name: "Q=100, 12 periods, 60 fps, 1 %, ρ=0.9", zeta: 0.005, periods: 12, fps: 60, sigma: 0.01, rho: 0.9, wantCovered: true, minCoveredFrac: 0.9},
		{name: "Q=100, 20 periods, 30 fps, 2 %, ρ=0.4", zeta: 0.005, periods: 20, fps: 30, sigma: 0.02, rho: 0.4, wantCovered: true, minCoveredFrac: 0.9},
		// Pendulum- and cart-like: ζ = 0.001 over 21 periods, Q = 60 over 6.7.
		{name: "ζ=0.001, 21 periods, 60 fps, 0.7 %, ρ=0.9", zeta: 0.001, periods: 21, fps: 60, sigma: 0.007, rho: 0.9, wantCovered: true, minCoveredFrac: 0.9},
		{name: "Q=60, 6.7 periods, 30 fps, 1.5 %, ρ=0.5", zeta: 0.0083, periods: 6.7, fps: 30, sigma: 0.015, rho: 0.5, wantCovered: true, minCoveredFrac: 0.9},
		// Negative damping: covered, but seen to gain energy.
		{name: "ζ=−0.005, 12 periods, 30 fps, 1 %, ρ=0.5", zeta: -0.005, periods: 12, fps: 30, sigma: 0.01, rho: 0.5},
		// What no single clip determines: never covered.
		{name: "one swing, underdamped", zeta: 0.05, periods: 0.5, fps: 30, sigma: 0.01, rho: 0.5},
		{name: "undamped, 10 periods, 1 %, ρ=0.5", zeta: 0, periods: 10, fps: 30, sigma: 0.01, rho: 0.5},
		{name: "undamped, 20 periods, 60 fps, 0.7 %, ρ=0.9", zeta: 0, periods: 20, fps: 60, sigma: 0.007, rho: 0.9},
		{name: "undamped, 12 periods, 2 %, ρ=0.2", zeta: 0, periods: 12, fps: 30, sigma: 0.02, rho: 0.2},
		{name: "undamped, 30 periods, 60 fps, 3 %, ρ=0.5", zeta: 0, periods: 30, fps: 60, sigma: 0.03, rho: 0.5},
		{name: "critical single clip", zeta: 1, periods: 2, fps: 30, sigma: 0.01, rho: 0.5},
		{name: "critical single clip, overshoot", zeta: 1, periods: 2, fps: 30, v0: -3, sigma: 0.01, rho: 0.5},
		{name: "overdamped single clip", zeta: 2, periods: 2, fps: 30, sigma: 0.01, rho: 0.5},
		{name: "overdamped single clip, overshoot", zeta: 2, periods: 2, fps: 30, v0: -6, sigma: 0.01, rho: 0.9},
	}
	for ci, c := range cases {
		rng := rand.New(rand.NewPCG(uint64(ci)+1, 0x636f76))
		covered, fitted, growing := 0, 0, 0
		for range draws {
			z, dt := simulateLatent(rng, c)
			cov, ok := fittedCoverage(t, z, dt)
			if !ok {
				continue
			}
			fitted++
			if cov.Holds {
				covered++
				if cov.Growing > 0 {
					growing++
				}
			}
		}
		frac := float64(covered) / float64(max(1, fitted))
		if c.zeta < 0 {
			t.Logf("%-45s covered %3d of %3d fitted draws, energy seen growing in %d", c.name, covered, fitted, growing)
			if growing != covered {
				t.Errorf("%s: %d of %d covered draws not seen to gain energy", c.name, covered-growing, covered)
			}
			continue
		}
		if growing > 0 {
			t.Errorf("%s: %d covered draws of a damped latent seen to gain energy (Certify refuses those)", c.name, growing)
		}
		if c.wantCovered {
			t.Logf("%-45s covered %3d of %3d fitted draws (%.0f %%)", c.name, covered, fitted, 100*frac)
			if frac < c.minCoveredFrac || fitted < draws*9/10 {
				t.Errorf("%s: covered in %d of %d fitted draws (%d drawn), want ≥ %.0f %%", c.name, covered, fitted, draws, 100*c.minCoveredFrac)
			}
			continue
		}
		t.Logf("%-45s false certificates of coverage: %d of %d fitted draws", c.name, covered, fitted)
		if covered > 0 {
			t.Errorf("%s: coverage held in %d of %d draws; no single clip of this kind determines (γ1, γ0)", c.name, covered, fitted)
		}
	}
}
