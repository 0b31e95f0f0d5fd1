package window

import (
	"math"
	"testing"

	"github.com/physd/physd/sim"
)

// traj samples the analytic solution at fps over dur seconds (degrees, as
// the paper's initial conditions are given).
func traj(g1, g0, z0, v0, dur, fps float64) []float64 {
	n := int(math.Round(dur * fps))
	t := make([]float64, n)
	for k := range t {
		t[k] = float64(k) / fps
	}
	z, _ := sim.Solve(g1, g0, z0, v0, t)
	return z
}

func TestCoverageAnalytic(t *testing.T) {
	const fps = 20
	dt := 1.0 / fps
	u1, u0 := sim.GroundTruth(sim.RegimeUnderdamped)
	c1, c0 := sim.GroundTruth(sim.RegimeCritical)
	o1, o0 := sim.GroundTruth(sim.RegimeOverdamped)
	P := 2 * math.Pi / math.Sqrt(u0-u1*u1/4)
	cases := []struct {
		name  string
		z     [][]float64
		holds bool
		maxD  int // expected MaxDistinct bound: exact if >0
	}{
		{"underdamped 2P", [][]float64{traj(u1, u0, 50, 0, 2*P, fps)}, true, 0},
		{"underdamped 1.5π", [][]float64{traj(u1, u0, 50, 0, 1.5*math.Pi, fps)}, true, 0},
		{"underdamped 0.5π", [][]float64{traj(u1, u0, 50, 0, 0.5*math.Pi, fps)}, false, 1},
		{"critical single", [][]float64{traj(c1, c0, 50, 0, 3, fps)}, false, 0},
		{"overdamped single", [][]float64{traj(o1, o0, 50, 0, 3, fps)}, false, 0},
		{"critical single undershoot", [][]float64{traj(c1, c0, 50, -600, 3, fps)}, false, 0},
		{"undamped 2.5π", [][]float64{traj(0, 4, 50, 0, 2.5*math.Pi, fps)}, false, 2},
		{"undamped 10 periods", [][]float64{traj(0, 4, 50, 0, 10*math.Pi, fps)}, false, 2},
		{"three critical, distinct velocities", [][]float64{
			traj(c1, c0, 50, -200, 2, fps), traj(c1, c0, 50, -600, 2, fps), traj(c1, c0, 50, -1000, 2, fps)}, true, 0},
		{"three overdamped, distinct velocities", [][]float64{
			traj(o1, o0, 50, -200, 2, fps), traj(o1, o0, 50, -600, 2, fps), traj(o1, o0, 50, -1000, 2, fps)}, true, 0},
		{"three critical, no shared levels", [][]float64{
			traj(c1, c0, 50, 0, 2, fps), traj(c1, c0, 50, -100, 2, fps), traj(c1, c0, -50, 100, 2, fps)}, false, 2},
	}
	for _, c := range cases {
		cov := CoverageOf(NewTraceWhite(c.z, dt, 0), CoverageOptions{})
		if cov.Holds != c.holds {
			t.Errorf("%s: coverage %v, want %v (%+v)", c.name, cov.Holds, c.holds, cov)
		}
		if c.maxD > 0 && cov.MaxDistinct != c.maxD {
			t.Errorf("%s: %d distinct slopes at best, want %d", c.name, cov.MaxDistinct, c.maxD)
		}
		if !c.holds && c.maxD == 0 && cov.MaxDistinct > 2 && cov.Width >= cov.MinWidth {
			t.Errorf("%s: %d distinct slopes over %.3f of the samples", c.name, cov.MaxDistinct, cov.Width)
		}
		if c.holds && (cov.Rho <= 0 || cov.UpsStar <= 0 || !(cov.Hi > cov.Lo)) {
			t.Errorf("%s: coverage holds but U=[%g,%g], ρ=%g, υ⋆=%g", c.name, cov.Lo, cov.Hi, cov.Rho, cov.UpsStar)
		}
	}
}

func TestCoverageUndampedTwoSlopesPerLevel(t *testing.T) {
	// Each level inside the amplitude is crossed many times, with slopes
	// ±ω√(A²−u²) only.
	z := traj(0, 4, 1, 0, 6*math.Pi, 40)
	cr := Crossings([][]float64{z}, 1.0/40, 0.3)
	if len(cr) < 10 {
		t.Fatalf("%d crossings of 0.3 in 9 periods", len(cr))
	}
	want := 2 * math.Sqrt(1-0.09)
	for _, c := range cr {
		if math.Abs(math.Abs(c.Slope)-want) > 0.01*want {
			t.Errorf("slope %g at t=%.3f, want ±%g", c.Slope, c.Time, want)
		}
	}
}

func TestCoverageNoiseToleranceRejectsNoiseAsSlopes(t *testing.T) {
	// With latent noise declared, the undamped trajectory's jitter in
	// slope must not pass as a third distinct slope.
	z := traj(0, 4, 1, 0, 2.5*math.Pi, 20)
	// deterministic pseudo-noise of amplitude ~1e-3
	for k := range z {
		z[k] += 1e-3 * math.Sin(float64(k)*12.9898)
	}
	cov := CoverageOf(NewTraceWhite([][]float64{z}, 0.05, 1e-3), CoverageOptions{})
	if cov.Holds {
		t.Errorf("noisy undamped covered: %+v", cov)
	}
}

func TestConditioningLemma(t *testing.T) {
	u1, u0 := sim.GroundTruth(sim.RegimeUnderdamped)
	z := [][]float64{traj(u1, u0, 50, 0, 2.5*math.Pi, 20)}
	cov := CoverageOf(NewTraceWhite(z, 0.05, 0), CoverageOptions{})
	c := Condition(z, 0.05, nil, cov)
	if c.PsiMin < 0.5 {
		t.Errorf("underdamped 2.5π: normalised ψ_min %g", c.PsiMin)
	}
	// The lemma is a lower bound.
	if c.Bound > c.PsiMin+1e-12 {
		t.Errorf("bound %g exceeds ψ_min %g", c.Bound, c.PsiMin)
	}
	// The cross term is exactly the boundary term (centred stencil telescopes).
	if math.Abs(math.Abs(c.G12)-c.Boundary) > 1e-9*math.Max(1, c.Boundary) {
		t.Errorf("|G12| %g ≠ C_bd/L %g", math.Abs(c.G12), c.Boundary)
	}
	o1, o0 := sim.GroundTruth(sim.RegimeOverdamped)
	zo := [][]float64{traj(o1, o0, 50, 0, 3, 20)}
	co := Condition(zo, 0.05, nil, CoverageOf(NewTraceWhite(zo, 0.05, 0), CoverageOptions{}))
	if co.PsiMin > c.PsiMin {
		t.Errorf("overdamped single clip better conditioned (%g) than underdamped (%g)", co.PsiMin, c.PsiMin)
	}
}

// normalised maps a trajectory affinely onto [0.2, 1], as the paper's
// intensity generator does clip by clip.
func normalised(z []float64) []float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range z {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	out := make([]float64, len(z))
	for i, v := range z {
		out[i] = 0.2 + 0.8*(v-lo)/(hi-lo)
	}
	return out
}

// With one offset per clip a level needs two within-clip slope pairs of
// different sums: crossings of clips that cross it once prove nothing.
func TestCoverageClipOffsets(t *testing.T) {
	const fps = 10
	dt := 1.0 / fps
	c1, c0 := sim.GroundTruth(sim.RegimeCritical)
	o1, o0 := sim.GroundTruth(sim.RegimeOverdamped)
	u1, u0 := sim.GroundTruth(sim.RegimeUnderdamped)
	perClip := func(g1, g0, z0, dur float64, v0s ...float64) [][]float64 {
		var z [][]float64
		for _, v0 := range v0s {
			z = append(z, normalised(traj(g1, g0, z0, v0, dur, fps)))
		}
		return z
	}
	cases := []struct {
		name           string
		z              [][]float64
		shared, holds  bool // Def. 4.1 with one offset; with per-clip offsets
		minSums, maxPS int
	}{
		// The paper's intensity sets: each swinging clip crosses the middle
		// levels twice, fast one way and slow back.
		{"intensity critical (1; 0,-200,200)", perClip(c1, c0, 1, 2, 0, -200, 200), true, true, 2, 2},
		{"intensity overdamped (0.4; 0,-200,200)", perClip(o1, o0, 0.4, 2.2, 0, -200, 200), true, true, 2, 2},
		// Three decays crossing the upper levels once each: three distinct
		// slopes there, but each from another clip, absorbed by that clip's
		// offset (only the third clip's undershoot is crossed twice).
		{"three critical decays, one crossing each", [][]float64{traj(c1, c0, 1, 0, 2, fps), traj(c1, c0, 1, -2, 2, fps), traj(c1, c0, 1, -4, 2, fps)}, true, false, 0, 1},
		// One underdamped clip over two periods: three crossings of one clip.
		{"underdamped single, 3π", [][]float64{traj(u1, u0, 50, 0, 3*math.Pi, fps)}, true, true, 2, 2},
	}
	for _, c := range cases {
		sh := CoverageOf(NewTraceWhite(c.z, dt, 0), CoverageOptions{})
		pc := CoverageOf(NewTraceWhite(c.z, dt, 0), CoverageOptions{ClipOffsets: true})
		if sh.Holds != c.shared {
			t.Errorf("%s: one offset: coverage %v, want %v (%d distinct slopes, width %.3f)", c.name, sh.Holds, c.shared, sh.MaxDistinct, sh.Width)
		}
		if pc.Holds != c.holds || !pc.ClipOffsets || pc.MaxPairSums < c.minSums || pc.MaxPairSums > c.maxPS {
			t.Errorf("%s: per-clip offsets: coverage %v, want %v (%d distinct pair sums, want %d…%d; width %.3f)",
				c.name, pc.Holds, c.holds, pc.MaxPairSums, c.minSums, c.maxPS, pc.Width)
		}
	}
}
