package flow

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/internal/shiftscene"
)

// A free decay released beyond the readout's linear model (2 frame px,
// past the binned frames' 1.5) is read from where its swing enters the
// model: the fit's one run starts there, and (γ1, γ0) come out within the
// sub-pixel sweep's bar. A swing that stays beyond the model past the
// window's middle is left to the other readouts.
func TestCandidateReadsADecayFromWhereItIsLinear(t *testing.T) {
	const dt, f, zeta = 1.0 / 30, 2.0, 0.02
	w := 2 * math.Pi * f
	g0, g1 := w*w*(1-zeta*zeta)+zeta*zeta*w*w, 2*zeta*w
	p, _ := estimator.LookupPreset(estimator.DefaultPreset)
	c := shiftscene.Clip(64, 64, dt, shiftscene.Decay(240, dt, 2, f, zeta), 1, 0, 0.005, 4)
	r, rd, err := Candidate(context.Background(), []estimator.Clip{c}, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	from := rd.LinearFrom()
	t.Logf("peak %.3g frame px (binned %d), linear from frame %d; γ0 %.4g (truth %.4g), γ1 %.4g (truth %.4g), runs %v",
		rd.Peak(), rd.Binned, from, r.Gamma0, g0, r.Gamma1, g1, r.First)
	if rd.Linear() || from == 0 || len(r.First) != 1 || r.First[0] != from {
		t.Fatalf("linear %v, from %d, runs %v: want a run from where the swing enters the model", rd.Linear(), from, r.First)
	}
	if math.Abs(r.Gamma0-g0) > 0.01*g0 || math.Abs(r.Gamma1-g1) > 0.2*g1+0.02 {
		t.Errorf("γ0 %.4g, γ1 %.4g against %.4g, %.4g", r.Gamma0, r.Gamma1, g0, g1)
	}
	slow := shiftscene.Clip(64, 64, dt, shiftscene.Decay(240, dt, 2, f, 0.005), 1, 0, 0.005, 4)
	if _, rd, err := Candidate(context.Background(), []estimator.Clip{slow}, p, nil); !errors.Is(err, ErrLarge) {
		t.Errorf("a swing beyond the model past the middle: err %v (linear from %d of %d), want ErrLarge", err, rd.LinearFrom(), len(rd.Z))
	}
}
