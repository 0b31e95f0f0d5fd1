package estimator

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// freeResponse samples the exact solution of z” + γ1 z' + γ0 z = 0 from
// (z0, v0) by the state map, plus an offset.
func freeResponse(t *testing.T, g1, g0, dt, z0, v0, off float64, n int) []float64 {
	t.Helper()
	phi, err := stateMap(g1, g0, dt)
	if err != nil {
		t.Fatal(err)
	}
	z := make([]float64, n)
	x := [2]float64{z0, v0}
	for i := range z {
		z[i] = x[0] + off
		x = [2]float64{phi[0][0]*x[0] + phi[0][1]*x[1], phi[1][0]*x[0] + phi[1][1]*x[1]}
	}
	return z
}

func TestFitTrajectoryRecoversExactSolutions(t *testing.T) {
	cases := []struct {
		name   string
		g1, g0 float64
		x0     [][2]float64
	}{
		{"underdamped", 0.08, 4.0016, [][2]float64{{1, 0}}},
		{"undamped", 0, 4, [][2]float64{{0.3, 1}}},
		{"critical three clips", 4, 4, [][2]float64{{1, 0}, {1, -20}, {1, 20}}},
		{"overdamped three clips", 5, 4, [][2]float64{{1, 0}, {1, -20}, {1, 20}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var lat [][]float64
			for _, x := range c.x0 {
				lat = append(lat, freeResponse(t, c.g1, c.g0, 0.05, x[0], x[1], 0.7, 60))
			}
			// Start 20 % off, as a stencil estimate on a noisy latent might be.
			f, err := FitTrajectory(lat, 0.05, c.g1+0.2*math.Max(c.g1, 0.5), 1.2*c.g0, SharedOffset)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(f.Gamma1-c.g1) > 1e-7 || math.Abs(f.Gamma0-c.g0) > 1e-7 {
				t.Errorf("got (%.10f, %.10f), want (%g, %g)", f.Gamma1, f.Gamma0, c.g1, c.g0)
			}
			if math.Abs(f.Offset-0.7) > 1e-7 || f.RelResidual() > 1e-7 {
				t.Errorf("offset %g (want 0.7), relative residual %g", f.Offset, f.RelResidual())
			}
			for m, x := range c.x0 {
				if math.Abs(f.X0[m][0]-x[0]) > 1e-6 || math.Abs(f.X0[m][1]-x[1]) > 1e-5 {
					t.Errorf("clip %d: initial state %v, want %v", m, f.X0[m], x)
				}
			}
		})
	}
}

// The sandwich σ of the output-error fit must match the spread of the
// estimates over independent white-noise draws (within sampling error),
// and the output error must beat the stencil's equation error by far.
func TestFitTrajectorySigmaMatchesMonteCarlo(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const runs, sigma = 200, 0.01
	clean := freeResponse(t, 0.08, 4.0016, 0.1, 1, 0, 0, 94)
	var sum, sum2, pred, stencilErr float64
	for range runs {
		z := make([]float64, len(clean))
		for i, v := range clean {
			z[i] = v + sigma*rng.NormFloat64()
		}
		f, err := FitTrajectory([][]float64{z}, 0.1, 0.08, 4.0016, SharedOffset)
		if err != nil {
			t.Fatal(err)
		}
		sum += f.Gamma0
		sum2 += f.Gamma0 * f.Gamma0
		pred += math.Sqrt(f.Cov[1][1]) / runs
		st, err := FitODE([][]float64{z}, 0.1, SharedOffset)
		if err != nil {
			t.Fatal(err)
		}
		if _, g0, err := Exact(st.Gamma1, st.Gamma0, 0.1); err == nil {
			stencilErr += (g0 - 4.0016) * (g0 - 4.0016) / runs
		}
	}
	mean := sum / runs
	sd := math.Sqrt(sum2/runs - mean*mean)
	t.Logf("γ0: mean %.5f, Monte Carlo sd %.5f, mean sandwich σ %.5f, stencil RMS error %.5f", mean, sd, pred, math.Sqrt(stencilErr))
	if r := pred / sd; r < 0.7 || r > 1.4 {
		t.Errorf("sandwich σ %.5f vs Monte Carlo sd %.5f (ratio %.2f)", pred, sd, r)
	}
	if math.Abs(mean-4.0016) > 3*sd/math.Sqrt(runs) {
		t.Errorf("biased: mean %.5f", mean)
	}
	if !(math.Sqrt(stencilErr) > 5*sd) {
		t.Errorf("stencil RMS error %.5f is not ≫ output-error sd %.5f", math.Sqrt(stencilErr), sd)
	}
}

// Per-clip offsets: each clip has its own equilibrium, and the fit
// recovers γ, the offsets and the initial states exactly.
func TestFitTrajectoryClipOffsets(t *testing.T) {
	offsets := []float64{0.7, -2, 5}
	x0 := [][2]float64{{1, 0}, {1, -20}, {1, 20}}
	var lat [][]float64
	for m, x := range x0 {
		lat = append(lat, freeResponse(t, 4, 4, 0.05, x[0], x[1], offsets[m], 60))
	}
	f, err := FitTrajectory(lat, 0.05, 4.8, 4.8, ClipOffsets)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.Gamma1-4) > 1e-7 || math.Abs(f.Gamma0-4) > 1e-7 || f.RelResidual() > 1e-7 {
		t.Errorf("got (%.10f, %.10f), relative residual %g; want (4, 4), 0", f.Gamma1, f.Gamma0, f.RelResidual())
	}
	for m, c := range offsets {
		if math.Abs(f.ClipOffsets[m]-c) > 1e-7 || math.Abs(f.X0[m][1]-x0[m][1]) > 1e-5 {
			t.Errorf("clip %d: offset %g, initial state %v; want %g, %v", m, f.ClipOffsets[m], f.X0[m], c, x0[m])
		}
	}
	if g, err := FitTrajectory(lat, 0.05, 4.8, 4.8, SharedOffset); err == nil && g.RelResidual() < 1e-3 {
		t.Errorf("one shared offset fits three equilibria to %g", g.RelResidual())
	}
}

func TestFitTrajectoryRejectsTooFewSamples(t *testing.T) {
	if _, err := FitTrajectory([][]float64{{1, 2, 3, 4}}, 0.1, 1, 4, SharedOffset); err == nil {
		t.Error("4 samples for 5 parameters: want an error")
	}
}

// The closed-form state map agrees with the matrix exponential across
// the regimes, through critical damping and for unstable coefficients.
func TestStateMapMatchesExp(t *testing.T) {
	for _, c := range [][3]float64{
		{0.08, 4.0016, 0.05}, {0, 4, 0.1}, {4, 4, 0.05}, {4 + 1e-9, 4, 0.05}, {4, 4 + 1e-7, 0.1},
		{5, 4, 0.05}, {0.0115, 37.586, 1.0 / 60}, {8.2, 29.4, 1.0 / 30}, {-0.3, 2, 0.1}, {1, -3, 0.1},
		{300, 1, 0.1}, {0.5, 1e-6, 0.02},
	} {
		got, err := stateMap(c[0], c[1], c[2])
		if err != nil {
			t.Fatal(err)
		}
		var e mat.Dense
		e.Exp(mat.NewDense(2, 2, []float64{0, c[2], -c[1] * c[2], -c[0] * c[2]}))
		for i := range 2 {
			for j := range 2 {
				if d := math.Abs(got[i][j] - e.At(i, j)); d > 1e-13*math.Max(1, math.Abs(e.At(i, j))) {
					t.Errorf("(γ1, γ0, Δt) = %v: Φ[%d][%d] = %.17g, e^{AΔt} has %.17g", c, i, j, got[i][j], e.At(i, j))
				}
			}
		}
	}
}
