package estimator

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ar1Latent is a damped cosine (the free response from (1, 0)) plus
// stationary AR(1) noise e_k = ρ e_{k−1} + √(1−ρ²) σ ε_k.
func ar1Latent(t testing.TB, rng *rand.Rand, g1, g0, dt, rho, sigma float64, n int) []float64 {
	t.Helper()
	phi, err := stateMap(g1, g0, dt)
	if err != nil {
		t.Fatal(err)
	}
	z := make([]float64, n)
	x := [2]float64{1, 0}
	e := sigma * rng.NormFloat64()
	for i := range z {
		if i > 0 {
			e = rho*e + math.Sqrt(1-rho*rho)*sigma*rng.NormFloat64()
		}
		z[i] = x[0] + e
		x = [2]float64{phi[0][0]*x[0] + phi[0][1]*x[1], phi[1][0]*x[0] + phi[1][1]*x[1]}
	}
	return z
}

// The bootstrap's 2σ interval must cover the true (γ1, γ0) about as
// often as a calibrated Gaussian's (95 %), with white and with strongly
// coloured noise: the block length follows the colour, and the noise the
// fit absorbs is measured (Shrinkage), not assumed white.
func TestBootstrapCoverage(t *testing.T) {
	const (
		g1, g0 = 0.2, 4.0
		dt     = 0.05
		n      = 400 // 20 s, six periods
		sigma  = 0.05
		B      = 50
	)
	draws := 200
	for _, rho := range []float64{0, 0.5, 0.9} {
		rng := rand.New(rand.NewPCG(2004, uint64(10*rho)))
		in1, in0 := 0, 0
		var block, shrink float64
		for range draws {
			z := ar1Latent(t, rng, g1, g0, dt, rho, sigma, n)
			tf, err := FitTrajectory([][]float64{z}, dt, g1, g0, SharedOffset)
			if err != nil {
				t.Fatal(err)
			}
			bs, err := bootstrapTrajectory(tf, dt, SharedOffset, B, 0)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(tf.Gamma1-g1) <= 2*bs.Sigma1 {
				in1++
			}
			if math.Abs(tf.Gamma0-g0) <= 2*bs.Sigma0 {
				in0++
			}
			block += float64(bs.Block) / float64(draws)
			shrink += bs.Shrinkage[1] / float64(draws)
		}
		c1, c0 := float64(in1)/float64(draws), float64(in0)/float64(draws)
		t.Logf("ρ = %.1f: |γ1 − γ1*| ≤ 2σ1 in %.1f %%, |γ0 − γ0*| ≤ 2σ0 in %.1f %% of %d draws; mean block %.1f, mean shrinkage (γ0) %.2f",
			rho, 100*c1, 100*c0, draws, block, shrink)
		for _, c := range []float64{c1, c0} {
			if c < 0.85 || c > 0.995 {
				t.Errorf("ρ = %.1f: coverage %.3f outside [0.85, 0.995]", rho, c)
			}
		}
	}
}

// The same latent gives the same σ: the random stream is seeded by the
// data, and the parallel refits write to their own slots.
func TestBootstrapDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	z := ar1Latent(t, rng, 0.2, 4, 0.05, 0.7, 0.05, 300)
	tf, err := FitTrajectory([][]float64{z}, 0.05, 0.2, 4, SharedOffset)
	if err != nil {
		t.Fatal(err)
	}
	a, err := bootstrapTrajectory(tf, 0.05, SharedOffset, 64, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bootstrapTrajectory(tf, 0.05, SharedOffset, 64, 0)
	if err != nil {
		t.Fatal(err)
	}
	if *a != *b {
		t.Errorf("two runs differ:\n%+v\n%+v", *a, *b)
	}
	if !(a.Sigma0 > 0 && a.Sigma1 > 0) || a.Failed != 0 {
		t.Errorf("σ (%g, %g), %d failed", a.Sigma1, a.Sigma0, a.Failed)
	}
}

// The Politis–White rule gives short blocks for white noise and long
// ones for noise correlated over many samples.
func TestPolitisWhiteBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, c := range []struct {
		rho    float64
		lo, hi int
	}{{0, 1, 4}, {0.9, 10, 200}} {
		s := make([]float64, 1500)
		var e float64
		for i := range s {
			e = c.rho*e + rng.NormFloat64()
			s[i] = e
		}
		b := politisWhite(s, []int{len(s)})
		t.Logf("AR(1) ρ = %.1f: block %d", c.rho, b)
		if b < c.lo || b > c.hi {
			t.Errorf("AR(1) ρ = %.1f: block %d, want %d…%d", c.rho, b, c.lo, c.hi)
		}
	}
}

// A failed replicate adds the largest successful deviation: failures
// never make σ smaller than the successes alone would, in the bootstrap
// (an average) or the jackknife (a sum over groups).
func TestFailedReplicatesDoNotShrinkSigma(t *testing.T) {
	reps := [][2]float64{{0, 1}, {0.1, 1.2}, {-0.1, 0.9}, {0.05, 1.05}, {9, 9}, {9, 9}}
	ok := []bool{true, true, true, true, false, false}
	good := sampleCov(reps[:4])
	bs, failed, err := bootstrapCov(reps, ok)
	if err != nil || failed != 2 {
		t.Fatalf("bootstrap: failed %d, err %v", failed, err)
	}
	jk, failed, err := jackknifeCov(reps, ok)
	if err != nil || failed != 2 {
		t.Fatalf("jackknife: failed %d, err %v", failed, err)
	}
	jkGood, _, _ := jackknifeCov(reps[:4], ok[:4])
	for a := range 2 {
		if !(bs[a][a] > good[a][a]) || !(jk[a][a] > jkGood[a][a]*6/4) {
			t.Errorf("coordinate %d: bootstrap %g (successes alone %g), jackknife %g (successes alone %g)", a, bs[a][a], good[a][a], jk[a][a], jkGood[a][a])
		}
	}
	if _, _, err := bootstrapCov(reps, []bool{true, false, false, false, false, false}); err == nil {
		t.Error("one success of six: want an error")
	}
}

// sampleCov is Σ (x − x̄)(x − x̄)ᵀ / (n − 1).
func sampleCov(xs [][2]float64) [2][2]float64 {
	var mean [2]float64
	for _, x := range xs {
		mean[0] += x[0] / float64(len(xs))
		mean[1] += x[1] / float64(len(xs))
	}
	var c [2][2]float64
	for _, x := range xs {
		for a := range 2 {
			for b := range 2 {
				c[a][b] += (x[a] - mean[a]) * (x[b] - mean[b]) / float64(len(xs)-1)
			}
		}
	}
	return c
}

// BenchmarkBootstrapTrajectory is the bootstrap's cost on a 1,500-sample
// latent (25 s at 60 fps) with strongly coloured noise, as on video.
func BenchmarkBootstrapTrajectory(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	const dt = 1.0 / 60
	z := ar1Latent(b, rng, 0.0115, 37.586, dt, 0.9, 0.03, 1500)
	tf, err := FitTrajectory([][]float64{z}, dt, 0.0115, 37.586, SharedOffset)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := bootstrapTrajectory(tf, dt, SharedOffset, bootstrapResamples, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// TestScoreLRVMatchesLagSum checks the windowed form of scoreLRV against
// the Bartlett-weighted sum over lags it replaces, on clips shorter and
// longer than the block, whose blocks are then cut to a third.
func TestScoreLRVMatchesLagSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	lens := []int{7, 40, 300}
	n := 0
	for _, l := range lens {
		n += l
	}
	jac := make([][2]float64, n)
	e := make([]float64, n)
	for i := range n {
		jac[i] = [2]float64{rng.NormFloat64(), 3 * rng.NormFloat64()}
		e[i] = 0.1*rng.NormFloat64() + 0.05*math.Sin(float64(i)/4)
	}
	for _, b := range []int{1, 2, 5, 17, 60} {
		var want [2]float64
		start := 0
		for _, l := range lens {
			bm := clipBlock(b, l)
			for k := range bm {
				w := 1 - float64(k)/float64(bm)
				if k > 0 {
					w *= 2
				}
				for i := start; i+k < start+l; i++ {
					for j := range 2 {
						want[j] += w * jac[i][j] * e[i] * jac[i+k][j] * e[i+k]
					}
				}
			}
			start += l
		}
		got := scoreLRV(jac, e, lens, b)
		for j := range 2 {
			if math.Abs(got[j]-want[j]) > 1e-12*math.Abs(want[j]) {
				t.Errorf("b = %d, j = %d: windowed %.17g, lag sum %.17g", b, j, got[j], want[j])
			}
		}
	}
}
