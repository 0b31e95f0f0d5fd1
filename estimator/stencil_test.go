package estimator

import (
	"math"
	"testing"
)

func TestStencilPolynomialExact(t *testing.T) {
	// Centred differences are exact on quadratics.
	dt := 0.1
	z := make([]float64, 10)
	for k := range z {
		x := float64(k) * dt
		z[k] = 3*x*x - 2*x + 1
	}
	d1, d2 := Stencil(z, dt)
	if len(d1) != 8 || len(d2) != 8 {
		t.Fatalf("lengths %d, %d; want 8", len(d1), len(d2))
	}
	for i := range d1 {
		x := float64(i+1) * dt
		if math.Abs(d1[i]-(6*x-2)) > 1e-9 || math.Abs(d2[i]-6) > 1e-7 {
			t.Errorf("k=%d: d1 %g want %g, d2 %g want 6", i+1, d1[i], 6*x-2, d2[i])
		}
	}
	if a, b := Stencil([]float64{1, 2}, dt); a != nil || b != nil {
		t.Error("two samples must give no interior differences")
	}
}

func TestStencilSecondOrder(t *testing.T) {
	// Halving Δt divides the error on sin by ~4.
	errAt := func(dt float64) float64 {
		z := make([]float64, 3)
		for k := range z {
			z[k] = math.Sin(1 + float64(k-1)*dt)
		}
		d1, d2 := Stencil(z, dt)
		return math.Abs(d1[0]-math.Cos(1)) + math.Abs(d2[0]+math.Sin(1))
	}
	r := errAt(0.1) / errAt(0.05)
	if r < 3.8 || r > 4.2 {
		t.Errorf("error ratio %g, want ≈ 4", r)
	}
}

func sampled(g1, g0, z0, v0, dt float64, n int) []float64 {
	// Exact solution via the companion matrix exponential, stepped.
	z := make([]float64, n)
	x, v := z0, v0
	h := dt / 200
	for k := range n {
		z[k] = x
		for range 200 { // RK4 substeps: accurate to ~1e-12 here
			f := func(x, v float64) (float64, float64) { return v, -g1*v - g0*x }
			k1x, k1v := f(x, v)
			k2x, k2v := f(x+h/2*k1x, v+h/2*k1v)
			k3x, k3v := f(x+h/2*k2x, v+h/2*k2v)
			k4x, k4v := f(x+h*k3x, v+h*k3v)
			x += h / 6 * (k1x + 2*k2x + 2*k3x + k4x)
			v += h / 6 * (k1v + 2*k2v + 2*k3v + k4v)
		}
	}
	return z
}

func TestFitODEAndExactMap(t *testing.T) {
	dt := 0.05
	for _, c := range []struct{ g1, g0 float64 }{{0.08, 4.0016}, {0, 4}, {4, 4}, {5, 4}} {
		z := sampled(c.g1, c.g0, 1, -3, dt, 120)
		for k := range z {
			z[k] += 0.7 // an equilibrium offset the intercept must absorb
		}
		f, err := FitODE([][]float64{z}, dt, SharedOffset)
		if err != nil {
			t.Fatal(err)
		}
		// The stencil is biased by O(Δt²)…
		if d := math.Abs(f.Gamma0 - c.g0); d < 1e-6 && c.g0 > 0 && c.g1 < 1 {
			t.Errorf("stencil γ0 %g suspiciously exact", f.Gamma0)
		}
		// …the exact map is not.
		g1, g0, err := Exact(f.Gamma1, f.Gamma0, dt)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(g1-c.g1) > 1e-6 || math.Abs(g0-c.g0) > 1e-6 {
			t.Errorf("γ=(%g,%g): exact map gives (%.9g, %.9g), stencil (%.6g, %.6g)", c.g1, c.g0, g1, g0, f.Gamma1, f.Gamma0)
		}
		if f.RelResidual() > 1e-6 {
			t.Errorf("noise-free fit has relative residual %g", f.RelResidual())
		}
	}
}

func TestExactUndampedClosedForm(t *testing.T) {
	// For an undamped sinusoid the stencil gives γ0^Δ = (2/Δt)² sin²(ωΔt/2).
	dt, w := 0.1, 2.0
	g0d := math.Pow(2/dt*math.Sin(w*dt/2), 2)
	g1, g0, err := Exact(0, g0d, dt)
	if err != nil || math.Abs(g1) > 1e-12 || math.Abs(g0-w*w) > 1e-10 {
		t.Errorf("Exact(0, %g) = (%g, %g, %v), want (0, 4)", g0d, g1, g0, err)
	}
	if _, _, err := Exact(0, 5/(dt*dt), dt); err == nil {
		t.Error("a negative real root must have no continuous-time model")
	}
}

func TestFitODEDegenerate(t *testing.T) {
	if _, err := FitODE([][]float64{{1, 1, 1, 1, 1, 1, 1, 1}}, 0.1, SharedOffset); err == nil {
		t.Error("constant latent must be degenerate")
	}
	if _, err := FitODE([][]float64{{1, 2, 3}}, 0.1, SharedOffset); err == nil {
		t.Error("three samples must be too few")
	}
}

func TestDerivePhysics(t *testing.T) {
	p := Derive(0.08, 4.0016, [2][2]float64{{1e-8, 0}, {0, 1e-8}})
	if p.Regime != Underdamped || math.Abs(p.OmegaN-math.Sqrt(4.0016)) > 1e-12 ||
		math.Abs(p.Zeta-0.02) > 1e-3 || math.Abs(p.FreqN-math.Sqrt(4.0016)/(2*math.Pi)) > 1e-12 {
		t.Errorf("underdamped: %+v", p)
	}
	if p.FreqD >= p.FreqN || p.FreqD <= 0 {
		t.Errorf("damped frequency %g vs natural %g", p.FreqD, p.FreqN)
	}
	if p := Derive(5, 4, [2][2]float64{}); p.Regime != Overdamped {
		t.Errorf("overdamped: %v", p.Regime)
	}
	if p := Derive(4, 4, [2][2]float64{}); p.Regime != Critical {
		t.Errorf("critical: %v", p.Regime)
	}
	if p := Derive(0.001, 4, [2][2]float64{{1e-4, 0}, {0, 1e-4}}); p.Regime != Undamped {
		t.Errorf("undamped within noise: %v", p.Regime)
	}
	if p := Derive(1, -1, [2][2]float64{}); p.Regime != Unstable {
		t.Errorf("γ0<0: %v", p.Regime)
	}
	// σ_ζ = 0.01/(2·2) = 0.0025: undamped from −3σ to +2σ, unstable below.
	cov := [2][2]float64{{1e-4, 0}, {0, 0}}
	for _, c := range []struct {
		g1   float64
		want Regime
	}{{0.025, Underdamped}, {0.0075, Undamped}, {-0.025, Undamped}, {-0.035, Unstable}} {
		if p := Derive(c.g1, 4, cov); p.Regime != c.want {
			t.Errorf("γ1 = %g ± 0.01 (ζ %.2gσ): %v, want %v", c.g1, p.Zeta/p.SigmaZ, p.Regime, c.want)
		}
	}
	// ζ = 0.76 ± 1.6 spans both boundaries: the nearer, critical.
	if p := Derive(8.2455, 29.399, [2][2]float64{{46.8, 0}, {0, 0}}); p.Regime != Critical {
		t.Errorf("ζ %.2g ± %.2g: %v, want critical", p.Zeta, p.SigmaZ, p.Regime)
	}
}

// Three clips of one ODE, each seen through its own affine map (a scale
// and an offset, as per-clip normalisation gives): ClipOffsets recovers γ
// and every clip's own equilibrium exactly; one shared offset cannot.
func TestFitODEClipOffsets(t *testing.T) {
	dt := 0.05
	g1, g0 := 4.0, 4.0
	offsets := []float64{0.7, -2, 5}
	var lat [][]float64
	for m, v0 := range []float64{0, -20, 20} {
		z := sampled(g1, g0, 1, v0, dt, 40)
		for k := range z {
			z[k] = (1+float64(m))*z[k] + offsets[m]
		}
		lat = append(lat, z)
	}
	f, err := FitODE(lat, dt, ClipOffsets)
	if err != nil {
		t.Fatal(err)
	}
	e1, e0, err := Exact(f.Gamma1, f.Gamma0, dt)
	if err != nil || math.Abs(e1-g1) > 1e-6 || math.Abs(e0-g0) > 1e-6 {
		t.Errorf("exact map gives (%.9g, %.9g, %v), want (%g, %g)", e1, e0, err, g1, g0)
	}
	for m, c := range offsets {
		// The equilibrium is where the residual's constant balances γ0 z.
		if eq := -f.OffsetOf(m) / f.Gamma0; math.Abs(eq-c) > 1e-6 {
			t.Errorf("clip %d: equilibrium %g, want %g", m, eq, c)
		}
	}
	if f.RelResidual() > 1e-6 {
		t.Errorf("noise-free fit has relative residual %g", f.RelResidual())
	}
	shared, err := FitODE(lat, dt, SharedOffset)
	if err != nil {
		t.Fatal(err)
	}
	if shared.RelResidual() < 1e-3 {
		t.Errorf("one shared offset fits clips with three equilibria to %g", shared.RelResidual())
	}
}
