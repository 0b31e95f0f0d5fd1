package estimator

import (
	"context"
	"testing"

	"github.com/physd/physd/sim"
)

// scaleClips renders the paper's scale three-clip set (z0; 0, −200, 200)
// clip by clip, each normalised over itself as the authors' generator does.
func scaleClips(t *testing.T, reg sim.Regime, z0 float64) []Clip {
	t.Helper()
	g1, g0 := sim.GroundTruth(reg)
	var scenes []sim.Scene
	for _, v0 := range []float64{0, -200, 200} {
		scenes = append(scenes, sim.Scene{System: sim.SystemScale, Gamma1: g1, Gamma0: g0, Z0: z0, V0: v0,
			Duration: 2.5, FPS: sim.DefaultFPS(sim.SystemScale), Size: 64, Seed: 1})
	}
	fs, err := sim.RenderEach(context.Background(), scenes)
	if err != nil {
		t.Fatal(err)
	}
	clips := make([]Clip, len(fs))
	for m, f := range fs {
		clips[m] = Clip{W: 64, H: 64, Dt: 1 / scenes[m].FPS}
		for _, im := range f {
			px := make([]float64, len(im.Pix))
			for i, v := range im.Pix {
				px[i] = float64(v) / 255
			}
			clips[m].Frames = append(clips[m].Frames, px)
		}
	}
	return clips
}

// Training minimises the stencil's residual; the estimate is read from
// the output-error fit. On the scale sets the stencil's training can make
// the latent worse for the latter: Fit must then keep the encoder it
// started from, so training never leaves the output error above its start.
func TestFitKeepsEncoderWhenTrainingHurts(t *testing.T) {
	p, err := LookupPreset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	p.Loss.Offset = ClipOffsets
	reverted := 0
	for _, reg := range []sim.Regime{sim.RegimeCritical, sim.RegimeOverdamped} {
		for _, z0 := range []float64{3, 5, 7, 9} {
			clips := scaleClips(t, reg, z0)
			p0 := p
			p0.Steps = 0
			start, err := Fit(context.Background(), clips, Options{Preset: p0, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			got, err := Fit(context.Background(), clips, Options{Preset: p, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			e0 := outputError(start.Latents, start.Dt, p.Loss.Offset)
			e1 := outputError(got.Latents, got.Dt, p.Loss.Offset)
			if e1 > e0*(1+1e-9) {
				t.Errorf("%s z0=%g: output error %.5f after %d steps, %.5f before", reg, z0, e1, got.Steps, e0)
			}
			if got.Reverted {
				reverted++
				if got.Gamma0 != start.Gamma0 || got.Gamma1 != start.Gamma1 {
					t.Errorf("%s z0=%g: reverted, yet γ (%g, %g) differs from the start's (%g, %g)",
						reg, z0, got.Gamma1, got.Gamma0, start.Gamma1, start.Gamma0)
				}
			}
			t.Logf("%s z0=%g: γ0 %.4f γ1 %.4f, output error %.4f → %.4f, reverted %v", reg, z0, got.Gamma0, got.Gamma1, e0, e1, got.Reverted)
		}
	}
	if reverted == 0 {
		t.Error("training never made the output error worse here: the test no longer exercises the revert")
	}
}
