package window

import (
	"github.com/physd/physd/estimator"
	"math/rand/v2"
	"strings"
	"testing"
)

// swing is a damped swing (γ1, γ0) over 250 frames at 20 fps with a
// little noise, and its time step.
func swing(g1, g0 float64, seed uint64) ([]float64, float64) {
	const dt = 1.0 / 20
	rng := rand.New(rand.NewPCG(seed, 6))
	var ts []float64
	for k := range 250 {
		ts = append(ts, float64(k)*dt)
	}
	z := exactSolution(g1, g0, 1, 0, ts)
	for i := range z {
		z[i] += 0.002 * rng.NormFloat64()
	}
	return z, dt
}

var tight = [2][2]float64{{1e-6, 0}, {0, 1e-6}}

// Choose reports the certified candidate that fits best, refuses the
// window when two certified candidates disagree, and reports the first
// (the encoder's) when none is certified.
func TestChoose(t *testing.T) {
	za, dt := swing(0.3, 4, 1)
	zb, _ := swing(0.3, 4, 2)
	enc := resultOf(t, za, dt, tight)
	enc.Readout = "encoder"
	// The same swing read with more noise: certified, a worse fit.
	noisy := append([]float64(nil), zb...)
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range noisy {
		noisy[i] += 0.02 * rng.NormFloat64()
	}
	worse := resultOf(t, noisy, dt, tight)
	worse.Readout = "tracked"
	if !Certify(enc, Thresholds{}, nil).Certified || !Certify(worse, Thresholds{}, nil).Certified {
		t.Fatalf("both swings should certify alone: %v / %v", Certify(enc, Thresholds{}, nil).Reasons, Certify(worse, Thresholds{}, nil).Reasons)
	}
	i, v := Choose([]*estimator.Result{worse, enc}, Thresholds{}, nil)
	if i != 1 || !v.Certified || v.Readout != "encoder" || len(v.Alternatives) != 1 || v.Alternatives[0].Readout != "tracked" {
		t.Fatalf("agreeing candidates: picked %d (%s, certified %v), alternatives %+v", i, v.Readout, v.Certified, v.Alternatives)
	}
	// An alternative carries its own σ: a subscriber weighing it needs it.
	if a := v.Alternatives[0]; a.Sigma0 != worse.Sigma0 || a.Sigma1 != worse.Sigma1 || !(a.Sigma0 > 0) {
		t.Errorf("alternative σ (%g, %g), want the tracked candidate's (%g, %g)", a.Sigma0, a.Sigma1, worse.Sigma0, worse.Sigma1)
	}

	// Another oscillator: certified too, at another frequency.
	zc, _ := swing(0.3, 6, 3)
	other := resultOf(t, zc, dt, tight)
	other.Readout = "tracked"
	i, v = Choose([]*estimator.Result{enc, other}, Thresholds{}, nil)
	if v.Certified || v.Status != NotCertified || !strings.Contains(strings.Join(v.Reasons, "; "), "two readouts certify different answers") {
		t.Fatalf("disagreeing candidates: picked %d, status %s, reasons %v", i, v.Status, v.Reasons)
	}

	// Nothing certified: the first candidate's verdict.
	flat := resultOf(t, za[:30], dt, tight)
	flat.Readout = "encoder"
	i, v = Choose([]*estimator.Result{flat, flat}, Thresholds{}, nil)
	if i != 0 || v.Certified {
		t.Fatalf("nothing certified: picked %d, certified %v", i, v.Certified)
	}
	if _, v := Choose(nil, Thresholds{}, nil); v.Certified {
		t.Fatal("no candidates certified")
	}
}
