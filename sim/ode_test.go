package sim

import (
	"math"
	"testing"
)

// Eighth-order central finite-difference weights for the first and second
// derivative on a uniform grid (offsets −4..4).
var (
	fd1 = [9]float64{1.0 / 280, -4.0 / 105, 1.0 / 5, -4.0 / 5, 0, 4.0 / 5, -1.0 / 5, 4.0 / 105, -1.0 / 280}
	fd2 = [9]float64{-1.0 / 560, 8.0 / 315, -1.0 / 5, 8.0 / 5, -205.0 / 72, 8.0 / 5, -1.0 / 5, 8.0 / 315, -1.0 / 560}
)

type odeCase struct {
	name           string
	gamma1, gamma0 float64
	z0, v0         float64
}

func odeCases() []odeCase {
	var cs []odeCase
	for _, r := range Regimes() {
		g1, g0 := GroundTruth(r)
		cs = append(cs,
			odeCase{string(r) + "/(50,0)", g1, g0, 50, 0},
			odeCase{string(r) + "/(50,-200)", g1, g0, 50, -200},
			odeCase{string(r) + "/(0.4,200)", g1, g0, 0.4, 200},
		)
	}
	return append(cs,
		odeCase{"exactly critical 0.2", 0.2, 0.01, 1, -3},
		odeCase{"near critical above", 4 + 1e-7, 4, 1, 2},
		odeCase{"near critical below", 4 - 1e-7, 4, 1, 2},
		odeCase{"free motion", 0, 0, 1, 2},
		odeCase{"negative stiffness", 1, -2, 1, -1.5},
		odeCase{"stiff overdamped", 30, 4, -2, 7},
	)
}

func TestSolveSatisfiesODE(t *testing.T) {
	const n = 801
	for _, c := range odeCases() {
		t.Run(c.name, func(t *testing.T) {
			// Fine grid (t ∈ [0, 8] s unless the dynamics are fast).
			h := 1e-2
			if r := math.Abs(c.gamma1) + math.Sqrt(math.Abs(c.gamma0)); r > 4 {
				h = 4e-2 / r
			}
			ts := make([]float64, n)
			for i := range ts {
				ts[i] = float64(i) * h
			}
			z, v := Solve(c.gamma1, c.gamma0, c.z0, c.v0, ts)
			if len(z) != n || len(v) != n {
				t.Fatalf("got %d, %d values, want %d", len(z), len(v), n)
			}
			if math.Abs(z[0]-c.z0) > 1e-12*math.Max(1, math.Abs(c.z0)) {
				t.Errorf("z(0) = %.17g, want %g", z[0], c.z0)
			}
			if math.Abs(v[0]-c.v0) > 1e-12*math.Max(1, math.Abs(c.v0)) {
				t.Errorf("z'(0) = %.17g, want %g", v[0], c.v0)
			}
			// Scale of the terms, for a relative tolerance.
			scale := 0.0
			for i := range z {
				scale = math.Max(scale, math.Abs(z[i])*math.Max(1, math.Abs(c.gamma0)))
				scale = math.Max(scale, math.Abs(v[i])*math.Max(1, math.Abs(c.gamma1)))
			}
			worstODE, worstVel := 0.0, 0.0
			for i := 4; i < n-4; i++ {
				d1, d2 := 0.0, 0.0
				for k := -4; k <= 4; k++ {
					d1 += fd1[k+4] * z[i+k]
					d2 += fd2[k+4] * z[i+k]
				}
				d1 /= h
				d2 /= h * h
				worstODE = math.Max(worstODE, math.Abs(d2+c.gamma1*d1+c.gamma0*z[i]))
				worstVel = math.Max(worstVel, math.Abs(d1-v[i]))
			}
			if worstODE > 1e-9*scale {
				t.Errorf("max |z''+γ1 z'+γ0 z| = %g (scale %g)", worstODE, scale)
			}
			if worstVel > 1e-11*scale {
				t.Errorf("max |dz/dt − v| = %g (scale %g)", worstVel, scale)
			}
			// The returned velocity itself satisfies the ODE's first-order
			// form: dv/dt = −γ1 v − γ0 z.
			worstAcc := 0.0
			for i := 4; i < n-4; i++ {
				dv := 0.0
				for k := -4; k <= 4; k++ {
					dv += fd1[k+4] * v[i+k]
				}
				dv /= h
				worstAcc = math.Max(worstAcc, math.Abs(dv+c.gamma1*v[i]+c.gamma0*z[i]))
			}
			if worstAcc > 1e-9*scale {
				t.Errorf("max |dv/dt + γ1 v + γ0 z| = %g (scale %g)", worstAcc, scale)
			}
		})
	}
}

func TestSolveKnownValues(t *testing.T) {
	ts := []float64{0, 0.5, 1, 2.5}
	for _, tc := range []struct {
		name           string
		gamma1, gamma0 float64
		z0, v0         float64
		want           func(t float64) float64
	}{
		{"undamped", 0, 4, 50, 0, func(t float64) float64 { return 50 * math.Cos(2*t) }},
		{"underdamped", 0.08, 4.0016, 1, -0.04, func(t float64) float64 { return math.Exp(-0.04*t) * math.Cos(2*t) }},
		{"critical", 4, 4, 1, 0, func(t float64) float64 { return (1 + 2*t) * math.Exp(-2*t) }},
		{"overdamped", 5, 4, 1, -1, func(t float64) float64 { return math.Exp(-t) }},
	} {
		z, _ := Solve(tc.gamma1, tc.gamma0, tc.z0, tc.v0, ts)
		for i, ti := range ts {
			if w := tc.want(ti); math.Abs(z[i]-w) > 1e-12*math.Max(1, math.Abs(w)) {
				t.Errorf("%s: z(%g) = %.17g, want %.17g", tc.name, ti, z[i], w)
			}
		}
	}
}

func TestSolveContinuousAcrossCritical(t *testing.T) {
	ts := []float64{0.3, 1, 3, 7}
	zc, vc := Solve(4, 4, 1, -2, ts)
	for _, g1 := range []float64{4 - 1e-9, 4 + 1e-9, 4 - 1e-6, 4 + 1e-6} {
		z, v := Solve(g1, 4, 1, -2, ts)
		for i := range ts {
			tol := 10 * math.Abs(g1-4)
			if math.Abs(z[i]-zc[i]) > tol || math.Abs(v[i]-vc[i]) > tol {
				t.Errorf("γ1=%v t=%v: (%g, %g) vs critical (%g, %g)", g1, ts[i], z[i], v[i], zc[i], vc[i])
			}
		}
	}
}

func TestSolveNegativeTimeAndLongTimes(t *testing.T) {
	// Backwards in time: solving forward from the state at −T must return
	// to the initial condition.
	for _, c := range odeCases() {
		zb, vb := Solve(c.gamma1, c.gamma0, c.z0, c.v0, []float64{-1.5})
		z, v := Solve(c.gamma1, c.gamma0, zb[0], vb[0], []float64{1.5})
		tol := 1e-9 * math.Max(1, math.Abs(zb[0])+math.Abs(vb[0]))
		if math.Abs(z[0]-c.z0) > tol || math.Abs(v[0]-c.v0) > tol {
			t.Errorf("%s: round trip gives (%g, %g), want (%g, %g)", c.name, z[0], v[0], c.z0, c.v0)
		}
	}
	// Heavily overdamped, long times: no overflow or NaN.
	z, v := Solve(1e3, 1, 1, 0, []float64{1e3, 1e5})
	for i := range z {
		if !finite(z[i]) || !finite(v[i]) || z[i] <= 0 {
			t.Errorf("overdamped long time %d: z=%v v=%v", i, z[i], v[i])
		}
	}
}

func TestSolveNoPanic(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, g := range [][4]float64{{nan, 1, 1, 1}, {1, inf, 1, 1}, {1, 1, -inf, 1}, {-1e300, 1e300, 1, 1}, {0, 0, 0, 0}} {
		Solve(g[0], g[1], g[2], g[3], []float64{0, 1, inf, nan, -inf})
	}
	if z, v := Solve(1, 1, 1, 1, nil); len(z) != 0 || len(v) != 0 {
		t.Errorf("nil times gave %v %v", z, v)
	}
}

func TestGroundTruthRegimes(t *testing.T) {
	for _, r := range Regimes() {
		g1, g0 := GroundTruth(r)
		d := g1*g1 - 4*g0
		var ok bool
		switch r {
		case RegimeUnderdamped:
			ok = d < 0 && g1 > 0
		case RegimeUndamped:
			ok = g1 == 0 && g0 > 0
		case RegimeCritical:
			ok = d == 0
		case RegimeOverdamped:
			ok = d > 0
		}
		if !ok {
			t.Errorf("%s: (γ1, γ0) = (%v, %v) has discriminant %v", r, g1, g0, d)
		}
		if p, err := ParseRegime(string(r)); err != nil || p != r {
			t.Errorf("ParseRegime(%q) = %q, %v", r, p, err)
		}
	}
	if g1, g0 := GroundTruth("bogus"); !math.IsNaN(g1) || !math.IsNaN(g0) {
		t.Errorf("unknown regime gave (%v, %v)", g1, g0)
	}
	if _, err := ParseRegime("bogus"); err == nil {
		t.Error("ParseRegime accepted an unknown regime")
	}
	if g1, g0 := GroundTruth(RegimeUnderdamped); g1 != 0.08 || g0 != 4.0016 {
		t.Errorf("underdamped = (%v, %v)", g1, g0)
	}
}
