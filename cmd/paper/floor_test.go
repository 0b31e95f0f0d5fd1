package main

import (
	"context"
	"math"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
)

// TestOracleReadout checks the floor's readout: it tracks the state of
// its own ramp, and it reads a scale clip it was not fitted on so that the
// trajectory fit recovers the ODE (the 94-frame underdamped clip, which
// physd itself fits to 0.07 %).
func TestOracleReadout(t *testing.T) {
	ctx := context.Background()
	or, worst, err := fitOracle(ctx, sim.SystemScale, sim.DefaultSize)
	if err != nil {
		t.Fatal(err)
	}
	if !(worst < 0.01) {
		t.Errorf("worst error on the ramp %.4f of the range, want < 0.01", worst)
	}
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	s := sim.Scene{System: sim.SystemScale, Gamma1: g1, Gamma0: g0, Z0: 3, V0: 0, Duration: 3 * math.Pi,
		FPS: sim.DefaultFPS(sim.SystemScale), Size: sim.DefaultSize, Seed: 1}
	frames, _, err := sim.Render(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	lat := make([]float64, len(frames))
	for k, f := range frames {
		lat[k] = or.read(f)
	}
	tf, err := estimator.FitTrajectory([][]float64{lat}, 1/s.FPS, 1, 1, estimator.SharedOffset)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ramp worst error %.4f of the range; γ0 %.4f (truth %.4f), γ1 %.4f (truth %.4f)", worst, tf.Gamma0, g0, tf.Gamma1, g1)
	if math.Abs(tf.Gamma0-g0) > 0.005*g0 || math.Abs(tf.Gamma1-g1) > 0.004 {
		t.Errorf("γ from the oracle's latent (%.4f, %.4f), truth (%.4f, %.4f)", tf.Gamma0, tf.Gamma1, g0, g1)
	}
}
