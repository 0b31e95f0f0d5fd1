package window

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
)

// fitScenes renders scenes (sharing one observation map), fits them with
// the default preset and certifies the result.
func fitScenes(t *testing.T, scenes []sim.Scene) (*estimator.Result, Verdict) {
	t.Helper()
	frames, _, err := sim.RenderSet(context.Background(), scenes)
	if err != nil {
		t.Fatal(err)
	}
	p, err := estimator.LookupPreset(estimator.DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	var clips []estimator.Clip
	for m, fs := range frames {
		c := estimator.Clip{W: p.Size, H: p.Size, Dt: 1 / scenes[m].FPS}
		for _, f := range fs {
			px := make([]float64, len(f.Pix))
			for i, v := range f.Pix {
				px[i] = float64(v) / 255
			}
			c.Frames = append(c.Frames, px)
		}
		clips = append(clips, c)
	}
	r, err := estimator.Fit(context.Background(), clips, estimator.Options{Preset: p, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return r, Certify(r, Thresholds{}, nil)
}

func pendulum(reg sim.Regime, z0, v0, dur float64) sim.Scene {
	g1, g0 := sim.GroundTruth(reg)
	return sim.Scene{System: sim.SystemPendulum, Gamma1: g1, Gamma0: g0, Z0: z0, V0: v0, Duration: dur, FPS: 20, Size: 64, Seed: 1}
}

func TestCertifyEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("renders and fits several clips")
	}
	cases := []struct {
		name   string
		scenes []sim.Scene
		want   Status
		reg    sim.Regime
		// or, for a window too short to tell light damping from none, the
		// other refusal: both say the window does not determine γ.
		or Status
	}{
		{"underdamped 1.5π", []sim.Scene{pendulum(sim.RegimeUnderdamped, 50, 0, 1.5*math.Pi)}, Certified, sim.RegimeUnderdamped, ""},
		{"underdamped 0.5π", []sim.Scene{pendulum(sim.RegimeUnderdamped, 50, 0, 0.5*math.Pi)}, NotCertified, "", UndampedDiscrete},
		{"critical single", []sim.Scene{pendulum(sim.RegimeCritical, 50, 0, 2)}, NotCertified, "", ""},
		{"overdamped single", []sim.Scene{pendulum(sim.RegimeOverdamped, 60, 0, 2)}, NotCertified, "", ""},
		{"undamped 2.5π", []sim.Scene{pendulum(sim.RegimeUndamped, 50, 0, 2.5*math.Pi)}, UndampedDiscrete, "", ""},
		{"three critical with coverage", []sim.Scene{
			pendulum(sim.RegimeCritical, 50, -200, 2), pendulum(sim.RegimeCritical, 50, -600, 2), pendulum(sim.RegimeCritical, 50, -1000, 2)},
			Certified, sim.RegimeCritical, ""},
		{"three critical without coverage", []sim.Scene{
			pendulum(sim.RegimeCritical, 50, 0, 2), pendulum(sim.RegimeCritical, 50, -100, 2), pendulum(sim.RegimeCritical, -50, 100, 2)},
			NotCertified, "", ""},
	}
	for _, c := range cases {
		r, v := fitScenes(t, c.scenes)
		t.Logf("%s: γ0 %.5f ± %.5f, γ1 %.5f ± %.5f; %s %v; cov %+v; ψ %.3g bound %.3g; rel %.3g revisit %+v",
			c.name, r.Gamma0, r.Sigma0, r.Gamma1, r.Sigma1, v.Status, v.Reasons, v.Coverage, v.Conditioning.PsiMin, v.Conditioning.Bound, v.RelResidual, v.Revisit)
		if v.Status != c.want && (c.or == "" || v.Status != c.or) {
			t.Errorf("%s: verdict %s, want %s (%v)", c.name, v.Status, c.want, v.Reasons)
		}
		if v.Certified != (v.Status == Certified) {
			t.Errorf("%s: Certified=%v with status %s", c.name, v.Certified, v.Status)
		}
		if c.reg != "" {
			g1, g0 := sim.GroundTruth(c.reg)
			tol1 := 0.004
			if g1 >= 1 {
				tol1 = 0.02 * g1
			}
			if math.Abs(r.Gamma0-g0) > 0.005*g0 || math.Abs(r.Gamma1-g1) > tol1 {
				t.Errorf("%s: (γ0, γ1) = (%.5f, %.5f), truth (%g, %g)", c.name, r.Gamma0, r.Gamma1, g0, g1)
			}
		}
	}
}

// A certified window whose view went black in some frames is refused:
// those frames show no object. The same estimate with a clean exposure
// record stays certified, so the refusal is the dark frames'.
func TestCertifyRefusesDarkFrames(t *testing.T) {
	r, v := fitScenes(t, []sim.Scene{pendulum(sim.RegimeUnderdamped, 50, 0, 1.5*math.Pi)})
	if !v.Certified {
		t.Fatalf("clean window: %s %v", v.Status, v.Reasons)
	}
	dark := *r
	dark.Exposure = &estimator.Exposure{Why: "2 frame(s) dark where the scene is bright", DarkFrames: 2}
	v = Certify(&dark, Thresholds{}, nil)
	if v.Certified || len(v.Reasons) != 1 || !strings.Contains(v.Reasons[0], "went dark in 2 frame") {
		t.Errorf("dark frames: %s %v", v.Status, v.Reasons)
	}
}

// Screen on CheckCoverage alone agrees with Certify's coverage test,
// refuses a missing estimate and ignores the other checks' failures.
func TestScreenCoverage(t *testing.T) {
	z, dt := swing(0.3, 4, 1)
	for _, r := range []*estimator.Result{resultOf(t, z, dt, tight), resultOf(t, z[:30], dt, tight)} {
		if got, want := Screen(r, Thresholds{}, nil, CheckCoverage), Certify(r, Thresholds{}, nil).Coverage.Holds; got != want {
			t.Errorf("%d frames: screened on coverage %v, Certify's coverage %v", len(r.Latents[0]), got, want)
		}
	}
	if !Screen(resultOf(t, z, dt, tight), Thresholds{}, nil, CheckCoverage) {
		t.Error("a damped swing of 250 frames not covered")
	}
	if Screen(nil, Thresholds{}, nil, CheckCoverage) || Screen(&estimator.Result{}, Thresholds{}, nil, CheckCoverage) {
		t.Error("no estimate covered")
	}
	dark := resultOf(t, z, dt, tight)
	dark.Exposure = &estimator.Exposure{DarkFrames: 2}
	if !Screen(dark, Thresholds{}, nil, CheckCoverage) || Screen(dark, Thresholds{}, nil) {
		t.Error("dark frames: refused by the whole screen only")
	}
}

// Screen passes what Certify certifies, and refuses only what Certify
// refuses for a reason σ does not enter: here coverage (a short clip) and
// dark frames.
func TestScreen(t *testing.T) {
	r, v := fitScenes(t, []sim.Scene{pendulum(sim.RegimeUnderdamped, 50, 0, 1.5*math.Pi)})
	if !v.Certified || !Screen(r, Thresholds{}, nil) {
		t.Fatalf("a certified window must pass the screen: %s %v", v.Status, v.Reasons)
	}
	dark := *r
	dark.Exposure = &estimator.Exposure{DarkFrames: 2}
	if Screen(&dark, Thresholds{}, nil) {
		t.Error("dark frames refuse a window whatever its σ: screened out")
	}
	z, dt := swing(0.3, 4, 1)
	short := resultOf(t, z[:30], dt, tight)
	if Certify(short, Thresholds{}, nil).Coverage.Holds || Screen(short, Thresholds{}, nil) {
		t.Error("a window without coverage passes the screen")
	}
	if Screen(nil, Thresholds{}, nil) {
		t.Error("no estimate passes the screen")
	}
}
