package window

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/physd/physd/estimator"
)

// resultOf fits one latent as estimator.Fit does (stencil, exact map,
// output-error fit) and reports the estimate with covariance cov.
func resultOf(t *testing.T, z []float64, dt float64, cov [2][2]float64) *estimator.Result {
	t.Helper()
	lat := [][]float64{z}
	f, err := estimator.FitODE(lat, dt, estimator.SharedOffset)
	if err != nil {
		t.Fatal(err)
	}
	g1, g0, err := estimator.Exact(f.Gamma1, f.Gamma0, dt)
	if err != nil {
		t.Fatal(err)
	}
	tf, err := estimator.FitTrajectory(lat, dt, g1, g0, estimator.SharedOffset)
	if err != nil {
		t.Fatal(err)
	}
	return &estimator.Result{Gamma0: tf.Gamma0, Gamma1: tf.Gamma1, Sigma0: math.Sqrt(cov[1][1]), Sigma1: math.Sqrt(cov[0][0]),
		Cov: cov, Stencil: f, Trajectory: tf, Latents: lat, Dt: dt, Physics: estimator.Derive(tf.Gamma1, tf.Gamma0, cov)}
}

// dampedSwing is 12.5 s of z” + 0.3 z' + 4 z = 0 from (1, 0) at 20 fps
// with white noise of 0.2 % of its amplitude (fixed seed).
func dampedSwing() ([]float64, float64) {
	const dt = 1.0 / 20
	rng := rand.New(rand.NewPCG(5, 6))
	var ts []float64
	for k := range 250 {
		ts = append(ts, float64(k)*dt)
	}
	z := exactSolution(0.3, 4, 1, 0, ts)
	for i := range z {
		z[i] += 0.002 * rng.NormFloat64()
	}
	return z, dt
}

// One clip whose levels are covered (a damped swing over several
// periods) is certified when its damping is resolved, and is refused as
// undamped-looking when the same fit's uncertainty cannot tell its
// damping from zero: one clip's distinct slopes at a level come from the
// amplitude's decay alone.
func TestCertifyOneClipNeedsResolvedDamping(t *testing.T) {
	z, dt := dampedSwing()
	tight := [2][2]float64{{1e-6, 0}, {0, 1e-6}}
	r := resultOf(t, z, dt, tight)
	v := Certify(r, Thresholds{}, nil)
	if !v.Coverage.Holds || r.Physics.Regime != estimator.Underdamped {
		t.Fatalf("damped swing: coverage %v, regime %s (γ1 %.4f γ0 %.4f)", v.Coverage.Holds, r.Physics.Regime, r.Gamma1, r.Gamma0)
	}
	if !v.Certified {
		t.Errorf("damped swing with resolved damping refused: %v", v.Reasons)
	}
	loose := [2][2]float64{{0.04, 0}, {0, 1e-6}} // σ(γ1) 0.2: ζ 0.075 ± 0.05
	r = resultOf(t, z, dt, loose)
	if r.Physics.Regime != estimator.Undamped {
		t.Fatalf("regime %s with σ(ζ) %.3g, want undamped", r.Physics.Regime, r.Physics.SigmaZ)
	}
	v = Certify(r, Thresholds{}, nil)
	if v.Certified || v.Status != UndampedDiscrete || !strings.Contains(strings.Join(v.Reasons, "; "), "not told from zero") {
		t.Errorf("damping not resolved: %s %v, want %s with the reason", v.Status, v.Reasons, UndampedDiscrete)
	}
}

// Runs of one clip (an object hidden for a while) are one trajectory:
// their distinct slopes at a level come from the decay alone, as one
// clip's do, so unresolved damping leaves them undamped-looking however
// many runs there are.
func TestRunsOfOneClipAreOneClip(t *testing.T) {
	z, dt := dampedSwing()
	lat := [][]float64{z[:100], z[120:]}
	runs := &estimator.Runs{Clip: []int{0, 0}, First: []int{0, 120}}
	f, err := estimator.FitODE(lat, dt, estimator.SharedOffset)
	if err != nil {
		t.Fatal(err)
	}
	g1, g0, err := estimator.Exact(f.Gamma1, f.Gamma0, dt)
	if err != nil {
		t.Fatal(err)
	}
	tf, err := estimator.FitTrajectoryRuns(lat, runs, dt, g1, g0, estimator.SharedOffset)
	if err != nil {
		t.Fatal(err)
	}
	loose := [2][2]float64{{0.04, 0}, {0, 1e-6}}
	r := &estimator.Result{Gamma0: tf.Gamma0, Gamma1: tf.Gamma1, Sigma0: 1e-3, Sigma1: 0.2, Cov: loose, Stencil: f, Trajectory: tf,
		Latents: lat, First: runs.First, Clips: runs.Clip, Dt: dt, Physics: estimator.Derive(tf.Gamma1, tf.Gamma0, loose)}
	v := Certify(r, Thresholds{}, nil)
	if !v.Coverage.Holds {
		t.Fatalf("runs of a damped swing: no coverage: %v", v.Reasons)
	}
	if v.Certified || v.Status != UndampedDiscrete {
		t.Errorf("two runs of one clip with unresolved damping: %s %v, want %s", v.Status, v.Reasons, UndampedDiscrete)
	}
}
