package modes

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/physd/physd/window"
)

// twoModes is the pair, 1.0 Hz at ζ = 1 % and 2.7 Hz at ζ = 2 %,
// of amplitudes a1 and a2, read through g with white noise of rms noise
// (seeded), 20 s at 30 fps.
func twoModes(seed uint64, a1, a2, noise float64, g func(float64) float64) (x []float64, truth []Term, dt float64) {
	dt = 1.0 / 30
	truth = []Term{
		{Sigma: 2 * math.Pi * 1.0 * 0.01, Omega: 2 * math.Pi * 1.0 * math.Sqrt(1-0.01*0.01), A: a1 * 0.8, B: a1 * 0.6},
		{Sigma: 2 * math.Pi * 2.7 * 0.02, Omega: 2 * math.Pi * 2.7 * math.Sqrt(1-0.02*0.02), A: -a2 * 0.6, B: a2 * 0.8},
	}
	rng := rand.New(rand.NewPCG(seed, 46))
	x = make([]float64, 600)
	for n := range x {
		t := float64(n) * dt
		x[n] = 0.1 + g(truth[0].At(t)+truth[1].At(t)) + noise*rng.NormFloat64()
	}
	return x, truth, dt
}

// A readout with a cubic error (a gain that grows 10 % at the swing's
// peak, with a quadratic part) puts combination tones in every mode's
// band and biases its damping; FitReadout fits g with the modes and reads
// both modes' (f_n, ζ) as on a linear readout, with a small Shift. The
// linear fit's errors are logged for comparison.
func TestFitReadoutTakesOutACubicReadout(t *testing.T) {
	g := func(u float64) float64 { return u + 0.02*u*u + 0.1*u*u*u }
	for seed := uint64(1); seed <= 5; seed++ {
		x, truth, dt := twoModes(seed, 1, 0.35, 0.005, g)
		omegas := []float64{2 * math.Pi * 1.01, 2 * math.Pi * 2.68}
		lin, err := Fit(x, dt, omegas, startZeta)
		if err != nil {
			t.Fatal(err)
		}
		m, err := FitReadout(x, dt, omegas, startZeta)
		if err != nil {
			t.Fatal(err)
		}
		if m.Nonlinear != "" || len(m.Poly) != 2 || len(m.Shift) != 2 {
			t.Fatalf("seed %d: not fitted through g: %q, poly %v, shift %v", seed, m.Nonlinear, m.Poly, m.Shift)
		}
		t.Logf("seed %d: g fitted c2 %.4f c3 %.4f (truth 0.02, 0.1)", seed, m.Poly[0], m.Poly[1])
		for i, w := range truth {
			tm, l := m.Terms[i], lin.Terms[i]
			t.Logf("  mode %d: %.5f Hz ζ %.5f (linear fit %.5f Hz ζ %.5f), shift γ1 %.2g γ0 %.2g; truth %.5f Hz ζ %.5f",
				i+1, tm.Hz(), tm.Zeta(), l.Hz(), l.Zeta(), m.Shift[i][0], m.Shift[i][1], w.Hz(), w.Zeta())
			if math.Abs(tm.Hz()/w.Hz()-1) > 1e-3 || math.Abs(tm.Zeta()/w.Zeta()-1) > 0.05 {
				t.Errorf("seed %d mode %d: %.5f Hz ζ %.5f, want %.5f Hz ζ %.5f within 0.1 %% and 5 %%", seed, i+1, tm.Hz(), tm.Zeta(), w.Hz(), w.Zeta())
			}
			if g1, _ := w.Gammas(); m.Shift[i][0] > 0.05*g1 {
				t.Errorf("seed %d mode %d: γ1 shifts %.3g with g's degree, want within 5 %% of %.3g", seed, i+1, m.Shift[i][0], g1)
			}
		}
	}
}

// A linear readout is read as one: g fitted near the identity and the
// modes where Fit puts them.
func TestFitReadoutLinearReadout(t *testing.T) {
	x, _, dt := twoModes(3, 1, 0.35, 0.005, func(u float64) float64 { return u })
	omegas := []float64{2 * math.Pi * 1.01, 2 * math.Pi * 2.68}
	lin, _ := Fit(x, dt, omegas, startZeta)
	m, err := FitReadout(x, dt, omegas, startZeta)
	if err != nil || m.Nonlinear != "" {
		t.Fatalf("%v %q", err, m.Nonlinear)
	}
	if math.Abs(m.Poly[0]) > 0.01 || math.Abs(m.Poly[1]) > 0.01 {
		t.Errorf("g's c2, c3 = %v for a linear readout", m.Poly)
	}
	for i := range m.Terms {
		if d := math.Abs(m.Terms[i].Zeta()/lin.Terms[i].Zeta() - 1); d > 0.02 {
			t.Errorf("mode %d: ζ %.5f through g, %.5f linear", i+1, m.Terms[i].Zeta(), lin.Terms[i].Zeta())
		}
	}
}

// A readout that saturates over the swing (tanh: its gain falls to a
// tenth at 3 units) is not a small-motion one: FitReadout says so and
// returns the linear fit, and Separate refuses every mode it finds (the
// two, and the tanh's 3f line beside them) with the check
// readout-linear.
func TestFitReadoutSaturated(t *testing.T) {
	x, _, dt := twoModes(1, 3, 1, 0.005, math.Tanh)
	m, err := FitReadout(x, dt, []float64{2 * math.Pi * 1.01, 2 * math.Pi * 2.68}, startZeta)
	if err != nil {
		t.Fatal(err)
	}
	if m.Nonlinear == "" || m.Poly != nil {
		t.Fatalf("a saturated readout read as a small-motion one: poly %v", m.Poly)
	}
	t.Log(m.Nonlinear)
	ms, err := Separate(context.Background(), "tanh", x, dt, options(t))
	if err != nil || len(ms) < 2 {
		t.Fatalf("Separate: %d modes, %v", len(ms), err)
	}
	for _, md := range ms {
		held := false
		for _, c := range md.Verdict.Checks {
			held = held || (c.Name == window.CheckReadoutLinear && !c.Passed)
		}
		if md.Verdict.Certified || !held {
			t.Errorf("mode %d of a saturated readout: certified %v, readout-linear held %v", md.Index, md.Verdict.Certified, held)
		}
	}
}

// A cable's harmonics f, 2f, 3f are each other's combination tones: the
// readout's g is not told from them, and FitReadout reads the readout as
// linear (Fit's model, no g, no Nonlinear); the pair is not.
func TestTonesOnModes(t *testing.T) {
	const dt, n = 1.0 / 30, 600
	term := func(hz float64) Term { return Term{Omega: 2 * math.Pi * hz} }
	for _, c := range []struct {
		hz   []float64
		want bool
	}{
		{[]float64{1.3, 2.6, 3.9}, true},
		{[]float64{1.3, 2.6}, true},
		{[]float64{1.3, 3.9}, true},
		{[]float64{1.0, 2.7}, false},
		{[]float64{1.2, 3.7}, false},
		{[]float64{1.0, 1.7, 2.7}, true}, // 2.7 − 1.7
		{[]float64{4, 11}, true},         // 4 + 4 + 11 = 19 folds to 11 at 15 Hz Nyquist
	} {
		var ts []Term
		for _, hz := range c.hz {
			ts = append(ts, term(hz))
		}
		if got := tonesOnModes(ts, dt, n); got != c.want {
			t.Errorf("%v Hz: tones on modes %v, want %v", c.hz, got, c.want)
		}
	}
}
