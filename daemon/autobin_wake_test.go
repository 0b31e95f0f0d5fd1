//go:build !nocv

package daemon

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/wire"
)

// TestAutoBinWakes: a scene that stands still for 30 s, then rings in a
// 2.5 Hz mode (ζ 1 %, 3 px; sim.Structure, 320×240, 30 fps, H.264 CRF
// 18, a file camera in real time, 6 s windows). While it is still, the
// line certifies nothing and its readouts hold no spectral line, so after
// ten such windows auto bins it by window.BlindBin (3: the binned band
// still shows anything the full rate resolves). When the mode rises, the
// binned windows show its line, which three bins resolve in fewer than
// eight samples a period: the line goes back to the full rate and
// certifies the mode there, within the bar. No certified estimate is
// wrong.
func TestAutoBinWakes(t *testing.T) {
	if testing.Short() {
		t.Skip("streams for tens of seconds")
	}
	if raceEnabled {
		t.Skip("a real-time stream: under the race detector the estimator falls behind it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const still, ringing = 30.0, 16.0
	mode := sim.Mode{Fn: 2.5, Zeta: 0.01, AmplitudePx: 3}
	quiet, _, err := sim.RenderStructure(ctx, sim.Structure{Duration: still, Seed: 5, Object: sim.ObjectBlock})
	if err != nil {
		t.Fatal(err)
	}
	moving, _, err := sim.RenderStructure(ctx, sim.Structure{Duration: ringing, Seed: 5, Object: sim.ObjectBlock, Modes: []sim.Mode{mode}})
	if err != nil {
		t.Fatal(err)
	}
	clip := filepath.Join(t.TempDir(), "wake.mp4")
	if err := sim.WriteVideo(ctx, clip, append(quiet, moving...), 30, sim.Encoding{CRF: 18}); err != nil {
		t.Fatal(err)
	}
	cam := config.DefaultCamera()
	cam.Name = "mast"
	cam.Source.Kind, cam.Source.Path, cam.Source.Realtime = config.KindFile, clip, true
	cfg := testConfig()
	cfg.Windows.Length, cfg.Windows.Hop = 6*time.Second, time.Second
	cfg.Cameras = []config.Camera{cam}
	r := start(t, cfg, t.TempDir())
	c := collect(t, r.d)
	waitFor(t, 2*time.Minute, "the file to end", func() bool { return r.d.Statuses()["mast"].State == "ended" })
	g1, g0 := mode.Gammas()
	var first time.Time
	binnedStill, fullAfter, certified := 0, 0, 0
	for _, m := range c.kind(wire.KindDiagnostic) {
		var d wire.Diagnostic
		if err := json.Unmarshal(m.Data, &d); err != nil {
			t.Fatal(err)
		}
		if first.IsZero() {
			first = d.WindowStart
		}
		// Stream seconds, from the first window's start (the stream's).
		end := d.WindowEnd.Sub(first).Seconds()
		t.Logf("window ending %5.1f s: bin %d, %s, γ0 %v", end, max(d.Bin, 1), d.Verdict, valueOr(d.Gamma0))
		if end < still && d.Bin == 3 {
			binnedStill++
		}
		if d.WindowStart.Sub(first).Seconds() > still && d.Bin <= 1 {
			fullAfter++
		}
		if d.Certified {
			certified++
			if math.Abs(*d.Gamma0-g0) > 0.01*g0 || math.Abs(*d.Gamma1-g1) > 0.2*g1+0.02 {
				t.Errorf("a false certificate: γ0 %.4f γ1 %.4f, want (%.4f, %.4f) within the bar", *d.Gamma0, *d.Gamma1, g0, g1)
			}
		}
	}
	t.Logf("binned by 3 while still: %d windows; at the full rate once ringing: %d; certified %d", binnedStill, fullAfter, certified)
	if binnedStill == 0 {
		t.Error("the still scene was never binned by 3")
	}
	if fullAfter == 0 || certified == 0 {
		t.Errorf("the ringing mode: %d windows at the full rate, %d certified; want both", fullAfter, certified)
	}
}
