package modes

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
)

// The analytic Jacobian agrees with central finite differences, for a
// linear readout and for g of degree 3 and 5.
func TestJacobianMatchesFiniteDifferences(t *testing.T) {
	terms := []float64{0.12, 6.3, 2.0, -0.7, 0.35, 17.1, 0.4, 0.9, 0.05}
	const dt, n = 1.0 / 30, 90
	for _, deg := range []int{1, 3, 5} {
		th := append(slices.Clone(terms), []float64{0.08, -0.05, 0.02, 0.01}[:deg-1]...)
		J := mat.NewDense(n, len(th), nil)
		jacobian(J, th, dt, deg)
		x := make([]float64, n) // model(t) = −residual with x = 0
		r := make([]float64, n)
		var num mat.Dense
		num.ReuseAs(n, len(th))
		fd.Jacobian(&num, func(y, p []float64) {
			residual(r, p, x, dt, deg)
			for i := range y {
				y[i] = -r[i]
			}
		}, th, &fd.JacobianSettings{Formula: fd.Central})
		for i := range n {
			for j := range th {
				if d := math.Abs(J.At(i, j) - num.At(i, j)); d > 1e-6*(1+math.Abs(num.At(i, j))) {
					t.Fatalf("degree %d: ∂model(t_%d)/∂θ_%d: analytic %g, finite differences %g", deg, i, j, J.At(i, j), num.At(i, j))
				}
			}
		}
	}
}

// Fit recovers two noisy damped terms from starting frequencies a bin off.
func TestFitTwoTerms(t *testing.T) {
	const dt = 1.0 / 30
	truth := []Term{{Sigma: 2 * math.Pi * 0.01, Omega: 2 * math.Pi * 1.0, A: 3, B: 0.5}, {Sigma: 2 * math.Pi * 2.7 * 0.02, Omega: 2 * math.Pi * 2.7, A: -0.4, B: 0.9}}
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 600)
	for n := range x {
		x[n] = 0.2 + 0.05*rng.NormFloat64()
		for _, tm := range truth {
			x[n] += tm.At(float64(n) * dt)
		}
	}
	m, err := Fit(x, dt, []float64{2 * math.Pi * 1.03, 2 * math.Pi * 2.66}, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	for i, tm := range m.Terms {
		w := truth[i]
		t.Logf("term %d: %.4f Hz ζ %.4f A %.3f (truth %.4f Hz ζ %.4f A %.3f)", i, tm.Hz(), tm.Zeta(), tm.Amplitude(), w.Hz(), w.Zeta(), w.Amplitude())
		if math.Abs(tm.Hz()/w.Hz()-1) > 1e-3 || math.Abs(tm.Zeta()/w.Zeta()-1) > 0.1 {
			t.Errorf("term %d: %.4f Hz ζ %.4f, want %.4f Hz ζ %.4f", i, tm.Hz(), tm.Zeta(), w.Hz(), w.Zeta())
		}
	}
	if math.Abs(m.RMS-0.05) > 0.01 {
		t.Errorf("residual rms %.4f, want the noise's 0.05", m.RMS)
	}
}

// HzSigmas is the spread of the fitted frequency over noise draws: one
// damped term (1.3 Hz, ζ = 2 %, amplitude 1, white noise 0.2, 10 s at
// 30 fps), 200 seeds; the mean σ within 15 % of the standard deviation
// of the fitted frequencies.
func TestHzSigmasMatchesTheSpread(t *testing.T) {
	const dt, n, seeds = 1.0 / 30, 300, 200
	tm := Term{Sigma: 2 * math.Pi * 1.3 * 0.02, Omega: 2 * math.Pi * 1.3, A: 0.6, B: 0.8}
	var fs []float64
	var sig float64
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 11))
		x := make([]float64, n)
		for k := range x {
			x[k] = tm.At(float64(k)*dt) + 0.2*rng.NormFloat64()
		}
		m, err := Fit(x, dt, []float64{2 * math.Pi * 1.31}, 0.01)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, m.Terms[0].Omega/(2*math.Pi))
		sig += m.HzSigmas(n, dt)[0] / seeds
	}
	var mean, v float64
	for _, f := range fs {
		mean += f / seeds
	}
	for _, f := range fs {
		v += (f - mean) * (f - mean) / (seeds - 1)
	}
	t.Logf("fitted frequency: spread %.5f Hz, mean σ %.5f Hz", math.Sqrt(v), sig)
	if r := sig / math.Sqrt(v); r < 0.85 || r > 1.15 {
		t.Errorf("mean σ %.5f Hz against a spread of %.5f Hz (ratio %.2f)", sig, math.Sqrt(v), r)
	}
}
