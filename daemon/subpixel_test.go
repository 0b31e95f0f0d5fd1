//go:build !nocv

package daemon

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/wire"
)

// TestRTSPSubPixel: a block swinging 0.5 px at most over a textured
// background (sim.Structure, 320×240, 30 fps, 1 % noise; 2 Hz, ζ 1 %, an
// 8 s free decay), H.264 at CRF 18 published in a loop to a real RTSP server on loopback, read by physd
// through its whole daemon with no region configured and a scale of
// 0.5 mm a pixel. Every certified estimate must be within the bar (γ0
// 1 %, γ1 20 % + 0.02) and carry the amplitude in px and in mm; at least
// two must come before the deadline. Windows across the loop's seam, or
// after the swing has decayed below what the video resolves, are refused.
func TestRTSPSubPixel(t *testing.T) {
	if testing.Short() {
		t.Skip("streams for tens of seconds")
	}
	if raceEnabled {
		t.Skip("a real-time stream: under the race detector the estimator falls behind it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	mode := sim.Mode{Fn: 2, Zeta: 0.01, AmplitudePx: 0.5}
	url := rtspScene(ctx, t, "block", sim.Structure{Duration: 8, Seed: 7, Object: sim.ObjectBlock, Modes: []sim.Mode{mode}}, 18)
	const mmPerPx = 0.5
	cam := rtspCamera("block", url)
	cam.Scale = config.Scale{Points: [][]float64{{10, 10}, {110, 10}}, DistanceMM: 100 * mmPerPx}
	cfg := testConfig()
	cfg.Cameras = []config.Camera{cam}
	r := start(t, cfg, t.TempDir())
	c := collect(t, r.d)
	g1, g0 := mode.Gammas()
	defer func() {
		if !t.Failed() {
			return
		}
		for i, m := range c.kind(wire.KindDiagnostic) {
			if i >= 40 {
				break
			}
			var d wire.Diagnostic
			if json.Unmarshal(m.Data, &d) == nil {
				rd := ""
				if d.Certificate != nil {
					rd = d.Certificate.Readout
				}
				t.Logf("window %s: %s, readout %s, γ0 %v, amplitude %+v, %v", d.WindowStart.Format("15:04:05"), d.Verdict, rd, valueOr(d.Gamma0), d.Amplitude, d.Reasons)
			}
		}
	}()
	waitFor(t, 150*time.Second, "two certified estimates of the 0.5 px swing", func() bool {
		return len(c.kind(wire.KindEstimate)) >= 2
	})
	for _, e := range estimates(t, c) {
		inBar := math.Abs(e.Gamma0-g0) <= 0.01*g0 && math.Abs(e.Gamma1-g1) <= 0.2*g1+0.02
		t.Logf("certified γ0 %.4f (truth %.4f) γ1 %.4f (truth %.4f), readout %s, amplitude %+v", e.Gamma0, g0, e.Gamma1, g1, e.Certificate.Readout, e.Amplitude)
		if !inBar {
			t.Errorf("false certificate: γ0 %.4f γ1 %.4f against %.4f, %.4f", e.Gamma0, e.Gamma1, g0, g1)
		}
		a := e.Amplitude
		if a == nil {
			t.Errorf("a certified estimate without its amplitude")
			continue
		}
		if !(a.Px > 0 && a.Px <= 0.6) || a.MM == nil || math.Abs(*a.MM-mmPerPx*a.Px) > 1e-9*a.Px {
			t.Errorf("amplitude %+v: want 0 < px ≤ 0.6 (the swing is 0.5 px at most) and mm = %g × px", a, mmPerPx)
		}
	}
}

func valueOr(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
