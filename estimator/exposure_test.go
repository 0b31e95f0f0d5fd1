package estimator

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/physd/physd/sim"
)

// renderClip renders one scene as a clip of gray frames in [0, 1].
func renderClip(t *testing.T, s sim.Scene) Clip {
	t.Helper()
	fs, _, err := sim.Render(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	c := Clip{W: s.Size, H: s.Size, Dt: 1 / s.FPS}
	for _, im := range fs {
		px := make([]float64, len(im.Pix))
		for i, v := range im.Pix {
			px[i] = float64(v) / 255
		}
		c.Frames = append(c.Frames, px)
	}
	return c
}

// exposureTransient is a camera's automatic exposure reacting to
// something: the gain dips by depth around t0 and recovers (the dev set's
// ballOil.mp4 has one of about 18 % after a hand leaves the scene).
func exposureTransient(c Clip, depth, t0, width float64) Clip {
	out := Clip{W: c.W, H: c.H, Dt: c.Dt}
	for k, f := range c.Frames {
		x := (float64(k)*c.Dt - t0) / width
		g := 1 - depth*math.Exp(-x*x)
		px := make([]float64, len(f))
		for i, v := range f {
			px[i] = g * v
		}
		out.Frames = append(out.Frames, px)
	}
	return out
}

func TestNormalizeExposureUndoesGain(t *testing.T) {
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	clean := renderClip(t, sim.Scene{System: sim.SystemPendulum, Gamma1: g1, Gamma0: g0, Z0: 50, Duration: 1.5 * math.Pi, FPS: 20, Size: 64, Seed: 1})
	dark := exposureTransient(clean, 0.3, 1, 0.4)
	got, e := NormalizeExposure([]Clip{dark})
	if !e.Applied {
		t.Fatalf("a 30 %% exposure dip was not undone: %+v", e)
	}
	if e.MinGain > 0.75 || e.MaxGain < 0.99 {
		t.Errorf("gains [%.3f, %.3f], want about [0.70, 1]", e.MinGain, e.MaxGain)
	}
	// Each frame comes back to the clean one up to one overall factor
	// (the reference is the median frame, not the undimmed one).
	var worst float64
	for k, f := range got[0].Frames {
		for i, v := range f {
			worst = math.Max(worst, math.Abs(v-clean.Frames[k][i]*e.MaxGain))
		}
	}
	if worst > 0.02 {
		t.Errorf("normalised frames differ from the clean ones by up to %.3f of full scale", worst)
	}
	if &dark.Frames[0][0] == &got[0].Frames[0][0] {
		t.Error("the caller's frames were written")
	}
}

// A scene whose brightness is the state (the paper's intensity system: a
// bright polygon on black) must not be normalised: that would erase it.
// Neither is a scene whose exposure does not change.
func TestNormalizeExposureLeavesStateAlone(t *testing.T) {
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	for _, s := range []sim.Scene{
		{System: sim.SystemIntensity, Gamma1: g1, Gamma0: g0, Z0: 50, Duration: 1.5 * math.Pi, FPS: 10, Size: 64, Seed: 1},
		{System: sim.SystemScale, Gamma1: g1, Gamma0: g0, Z0: 50, Duration: 2.5, FPS: 10, Size: 64, Seed: 1},
		{System: sim.SystemPendulum, Gamma1: g1, Gamma0: g0, Z0: 50, Duration: 1.5 * math.Pi, FPS: 20, Size: 64, Seed: 1},
	} {
		c := renderClip(t, s)
		got, e := NormalizeExposure([]Clip{c})
		if e.Applied || &got[0].Frames[0][0] != &c.Frames[0][0] {
			t.Errorf("%s: frames changed: %+v", s.System, e)
		}
		if e.Why == "" {
			t.Errorf("%s: no reason given for leaving the frames alone", s.System)
		}
	}
}

// The estimate through an exposure transient: with the normalisation the
// estimate is the clean one's; without it the latent follows the light.
func TestFitThroughExposureTransient(t *testing.T) {
	if testing.Short() {
		t.Skip("two fits")
	}
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	clip := exposureTransient(renderClip(t, sim.Scene{System: sim.SystemPendulum, Gamma1: g1, Gamma0: g0, Z0: 50, Duration: 1.5 * math.Pi, FPS: 20, Size: 64, Seed: 1}), 0.3, 1, 0.4)
	p, err := LookupPreset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Exposure {
		t.Fatalf("preset %s does not normalise exposure", p.Name)
	}
	r, err := Fit(context.Background(), []Clip{clip}, Options{Preset: p, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("normalised: γ0 %.4f γ1 %.4f (truth %.4f, %.2f); exposure %+v", r.Gamma0, r.Gamma1, g0, g1, *r.Exposure)
	if math.Abs(r.Gamma0-g0) > 0.005*g0 || math.Abs(r.Gamma1-g1) > 0.004 {
		t.Errorf("through an exposure dip: γ0 %.4f γ1 %.4f, want (%.4f, %.2f) within the paper's bar", r.Gamma0, r.Gamma1, g0, g1)
	}
	p.Exposure = false
	raw, err := Fit(context.Background(), []Clip{clip}, Options{Preset: p, Seed: 1})
	if err != nil {
		t.Logf("without normalisation: %v", err)
		return
	}
	t.Logf("without normalisation: γ0 %.4f γ1 %.4f", raw.Gamma0, raw.Gamma1)
	if math.Abs(raw.Gamma0-g0) <= 0.005*g0 && math.Abs(raw.Gamma1-g1) <= 0.004 {
		t.Error("the transient does not disturb the fit without normalisation: the scene tests nothing")
	}
}

// A view that goes black for a few frames (a lens cap, a dropped feed, a
// recording's cut to black) is counted, not normalised: a black frame has
// no gain to undo, and the certificate refuses the window (window.Certify).
func TestNormalizeExposureCountsDarkFrames(t *testing.T) {
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	c := renderClip(t, sim.Scene{System: sim.SystemPendulum, Gamma1: g1, Gamma0: g0, Z0: 50, Duration: 1.5 * math.Pi, FPS: 20, Size: 64, Seed: 1})
	for _, k := range []int{40, 41, 90} {
		c.Frames[k] = make([]float64, len(c.Frames[k]))
	}
	got, e := NormalizeExposure([]Clip{c})
	if e.DarkFrames != 3 || e.Applied || &got[0].Frames[0][0] != &c.Frames[0][0] {
		t.Errorf("three black frames: %+v (frames replaced: %v)", e, &got[0].Frames[0][0] != &c.Frames[0][0])
	}
	p, err := LookupPreset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Fit(context.Background(), []Clip{c}, Options{Preset: p, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Exposure == nil || r.Exposure.DarkFrames != 3 {
		t.Errorf("the fit's exposure record: %+v", r.Exposure)
	}
}

// BenchmarkNormalizeExposure times one window's exposure normalisation
// at the size of a real camera's region (181 frames of 209×20 pixels,
// the gains varying by 1 %): the median reference frame and one gain a
// frame.
func BenchmarkNormalizeExposure(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	const w, h, n = 209, 20, 181
	scene := make([]float64, w*h)
	for j := range scene {
		scene[j] = 0.2 + 0.6*rng.Float64()
	}
	frames := make([][]float64, n)
	for k := range frames {
		g := 1 + 0.01*math.Sin(float64(k)/10)
		f := make([]float64, w*h)
		for j := range f {
			f[j] = g*scene[j] + 0.005*rng.NormFloat64()
		}
		frames[k] = f
	}
	clips := []Clip{{W: w, H: h, Frames: frames, Dt: 1.0 / 30}}
	for b.Loop() {
		if _, e := NormalizeExposure(clips); !e.Applied {
			b.Fatal("not applied:", e.Why)
		}
	}
}
