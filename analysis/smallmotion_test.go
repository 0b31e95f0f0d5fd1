package analysis

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/flow"
	"github.com/physd/physd/internal/shiftscene"
	"github.com/physd/physd/window"
)

// Sub-pixel free decays of a block over a texture, as the estimator reads
// them (64×64, 30 fps, 6 s): certified within the bar, with the amplitude
// told in source pixels; motion far below the noise is refused with the
// amplitude and the floor in the reason. No certificate is false.
func TestSmallMotionWindow(t *testing.T) {
	const dt, f, zeta, scale = 1.0 / 30, 2.0, 0.01, 5.0
	w := 2 * math.Pi * f
	g0, g1 := w*w, 2*zeta*w
	p, _ := estimator.LookupPreset(estimator.DefaultPreset)
	for _, tc := range []struct {
		name    string
		a, sd   float64 // frame px, noise
		certify bool
	}{
		{"2 frame px, past the linear model at first", 2, 0.005, true},
		{"0.2 frame px", 0.2, 0.005, true},
		{"0.06 frame px", 0.06, 0.005, true},
		{"0.002 frame px", 0.002, 0.01, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := shiftscene.Clip(64, 64, dt, shiftscene.Decay(180, dt, tc.a, f, zeta), 1, 0, tc.sd, 3)
			rep, err := Window(context.Background(), []estimator.Clip{c}, Options{Preset: p, Seed: 1, SourcePx: scale})
			if err != nil {
				t.Fatal(err)
			}
			r, v := rep.Result, rep.Verdict
			t.Logf("%s γ0 %.4g (truth %.4g) γ1 %.4g (truth %.4g) %s; amplitude %+v; %s", r.Readout, r.Gamma0, g0, r.Gamma1, g1, v.Status, rep.Amplitude, strings.Join(v.Reasons, "; "))
			if v.Certified && (math.Abs(r.Gamma0-g0) > 0.01*g0 || math.Abs(r.Gamma1-g1) > 0.2*g1+0.02) {
				t.Fatalf("false certificate: γ0 %.4g γ1 %.4g against %.4g, %.4g", r.Gamma0, r.Gamma1, g0, g1)
			}
			if v.Certified != tc.certify {
				t.Fatalf("certified %v, want %v", v.Certified, tc.certify)
			}
			if rep.Amplitude == nil {
				t.Fatal("no amplitude")
			}
			if tc.certify {
				// The reading's amplitude (√2 rms) of a decay from tc.a is
				// below tc.a; in source pixels it is scale times larger.
				if a := rep.Amplitude.Px; a < 0.5*tc.a*scale || a > 1.05*tc.a*scale {
					t.Errorf("amplitude %.3g source px for a decay from %.3g", a, tc.a*scale)
				}
				if r.Readout != flow.ReadoutFlow {
					t.Logf("reported readout %s", r.Readout)
				}
				return
			}
			if !hasCheck(v, window.CheckResolved) {
				t.Errorf("refused without the resolution check: %v", v.Reasons)
			}
		})
	}
}

func hasCheck(v window.Verdict, name string) bool {
	for _, c := range v.Checks {
		if c.Name == name && !c.Passed {
			return true
		}
	}
	return false
}
