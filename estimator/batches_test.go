package estimator

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// A long free decay read through a gain that grows with the amplitude
// (a codec that leaves small motion behind) decays faster early than
// late: the damping fitted through both is off by more than the
// residual bootstrap's σ says, and the parts fitted on their own
// disagree by as much. The reported σ adds their spread and covers the
// error; read linearly, the parts agree and σ stays the bootstrap's.
func TestBatchesSeeAnAmplitudeDependentGain(t *testing.T) {
	const dt, g1, g0 = 1.0 / 30, 0.3, 160.0 // 2 Hz, ζ 1.2 %: 60 periods in 30 s
	p := Preset{Exact: true, Loss: LossConfig{Offset: SharedOffset}}
	for _, tc := range []struct {
		name string
		gain float64 // z·(1 + gain·|z|/z0)
	}{
		{"linear", 0},
		{"gain grows with amplitude", 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := freeResponse(t, g1, g0, dt, 1, 0, 0, 600)
			rng := rand.New(rand.NewPCG(3, 7))
			for i, v := range z {
				z[i] = v*(1+tc.gain*math.Abs(v)) + 0.01*rng.NormFloat64()
			}
			r, err := FitRuns(context.Background(), "flow", [][]float64{z}, Runs{Clip: []int{0}, First: []int{0}}, dt, p)
			if err != nil {
				t.Fatal(err)
			}
			u := r.Uncertainty
			if u.Source != "bootstrap+batches" || u.Batches == nil {
				t.Fatalf("σ from %s (%s), want bootstrap+batches", u.Source, u.Note)
			}
			e := math.Abs(r.Gamma1 - g1)
			t.Logf("γ1 %.4f ± %.4f (bootstrap %.4f, parts %v, Q %.3g): off by %.1fσ", r.Gamma1, r.Sigma1, u.Bootstrap.Sigma1, u.Batches.Gamma, u.Batches.Q[0], e/r.Sigma1)
			if e > 2*r.Sigma1 {
				t.Errorf("γ1 off by %.4f = %.1fσ", e, e/r.Sigma1)
			}
			if tc.gain == 0 {
				if u.Batches.Sigma1 > u.Bootstrap.Sigma1 {
					t.Errorf("linear reading: parts add σ(γ1) %.4g, more than the bootstrap's %.4g", u.Batches.Sigma1, u.Bootstrap.Sigma1)
				}
				return
			}
			if e <= 2*u.Bootstrap.Sigma1 {
				t.Errorf("the bootstrap alone covers the error (%.4f ≤ 2 × %.4f): the case does not test the parts", e, u.Bootstrap.Sigma1)
			}
		})
	}
}

// A run shorter than two periods a part is not cut: σ is the bootstrap's.
func TestBatchesNeedTwoPeriodsAPart(t *testing.T) {
	const dt, g1, g0 = 0.05, 0.08, 4.0016 // a period is 63 frames
	z := freeResponse(t, g1, g0, dt, 2, 0, 0, 200)
	r, err := FitRuns(context.Background(), "flow", [][]float64{z}, Runs{Clip: []int{0}, First: []int{0}}, dt, Preset{Exact: true, Loss: LossConfig{Offset: SharedOffset}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := batchMeans(r, SharedOffset); err != errNoBatches {
		t.Errorf("200 frames of a 63-frame period: %v, want errNoBatches", err)
	}
}
