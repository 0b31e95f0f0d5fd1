package analysis

import (
	"context"
	"math"
	"testing"

	"github.com/physd/physd/estimator"
)

// A swing too large for the small-motion readout, reported by the
// encoder, is still told in pixels when an object was followed through
// it: from the followed path that one free response describes best.
func TestAmplitudeFromAFollowedObject(t *testing.T) {
	const dt, n = 0.05, 200
	path := func(a, wobble float64) *estimator.Result {
		z := make([]float64, n)
		for i := range z {
			tt := float64(i) * dt
			z[i] = a*math.Exp(-0.04*tt)*math.Cos(2*tt) + wobble*math.Sin(7.3*tt)
		}
		r, err := estimator.FitLatents(context.Background(), "tracked", [][]float64{z}, nil, dt, estimator.Preset{Exact: true})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	good, poor := path(6, 0), path(3, 1)
	enc := &estimator.Result{Readout: estimator.ReadoutEncoder}
	amp := amplitudeOf(enc, nil, nil, []*estimator.Result{poor, good}, 2)
	if amp == nil {
		t.Fatal("no amplitude from the followed objects")
	}
	// √2 × the rms of a decay from 6 frame px over 10 s, in source px.
	if amp.Px < 2*0.6*6 || amp.Px > 2*6 || amp.NoisePx > 0.01 {
		t.Errorf("amplitude %.3g px (noise %.3g): want the best-fitted path's, 7.2–12", amp.Px, amp.NoisePx)
	}
	if got := amplitudeOf(enc, nil, nil, nil, 2); got != nil {
		t.Errorf("nothing followed, no reading: amplitude %+v, want none", got)
	}
}
