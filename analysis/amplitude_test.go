package analysis

import (
	"context"
	"math"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/flow"
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

// A small-motion readout fitted from where its reading enters the linear
// model (the reading itself past it at the start) tells its amplitude by
// its fit, in source pixels.
func TestAmplitudeOfAFlowReadoutFittedWhereLinear(t *testing.T) {
	const dt, n = 1.0 / 30, 240
	z := make([]float64, n)
	for i := range z {
		tt := float64(i) * dt
		z[i] = 2 * math.Exp(-0.25*tt) * math.Cos(4*math.Pi*tt)
	}
	rd := &flow.Reading{Z: z, Noise: 0.01, Binned: 2, Explained: 0.9, Moving: 100, Pixels: 400}
	from := rd.LinearFrom()
	if rd.Linear() || from == 0 {
		t.Fatalf("the reading: linear %v from %d; want past the model at first", rd.Linear(), from)
	}
	r, err := estimator.FitRuns(context.Background(), flow.ReadoutFlow, [][]float64{z[from:]}, estimator.Runs{Clip: []int{0}, First: []int{from}}, dt, estimator.Preset{Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	amp := amplitudeOf(r, r, rd, nil, 3)
	if amp == nil || amp.Readout != flow.ReadoutFlow {
		t.Fatalf("amplitude %+v: want the flow readout's", amp)
	}
	// √2 × the rms of the fitted decay from 1.5 frame px on, × 3.
	if amp.Px < 3*0.5*1.5 || amp.Px > 3*1.5 {
		t.Errorf("amplitude %.3g source px: want 2.25–4.5", amp.Px)
	}
}
