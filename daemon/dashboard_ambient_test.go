//go:build !nocv

package daemon

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/physd/physd/ambient"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/wire"
)

// An ambient record's plot is its correlation signature R(τ) from τ = Δt
// with the fitted free response beside it, point for point, and the page
// is told so (Signature), since its axis is a lag, not the window's time.
func TestDashboardAmbientSignature(t *testing.T) {
	s := sim.Structure{Seed: 3, FPS: 30, Duration: 600, W: 64, H: 64, Excitation: sim.ExcitationAmbient,
		Modes: []sim.Mode{{Fn: 2, Zeta: 0.02, AmplitudePx: 1}}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	d := s.Displacement(s.Times())
	c, err := ambient.NewCorrelation(300, len(d)/20, 20)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 1))
	for _, v := range d {
		c.Push(v + 0.05*rng.NormFloat64())
	}
	est, err := ambient.Identify(context.Background(), c, 1/s.FPS, ambient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	diag := &wire.Diagnostic{Verdict: string(est.Verdict.Status), Certified: est.Verdict.Certified, Ambient: &wire.Ambient{Record: est.Record}}
	det := dashDetailOf(diag, est.Result)
	if det == nil || !det.Signature {
		t.Fatalf("detail %+v: want the signature's plot", det)
	}
	if len(det.Latents) != 1 || len(det.Fitted) != 1 || len(det.Fitted[0]) != len(det.Latents[0]) {
		t.Fatalf("plot of %d curves and %d fits: want one signature and its fit, point for point", len(det.Latents), len(det.Fitted))
	}
	if n := len(det.Latents[0]) * det.Stride; n < est.Lags {
		t.Errorf("plot of %d points × stride %d for %d fitted lags", len(det.Latents[0]), det.Stride, est.Lags)
	}
	if det := dashDetailOf(&wire.Diagnostic{}, est.Result); det.Signature {
		t.Errorf("a window without ambient facts plotted as a signature")
	}
}
