//go:build !nocv

package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/modes"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/wire"
)

// TestRTSPTwoModes: a block released in two modes at once (1.5 Hz at
// ζ = 1 %, 0.6 px; 4 Hz at ζ = 2 %, 0.4 px; 320×240, 30 fps, a 16 s
// decay), H.264 at CRF 18 published in a loop to a real RTSP server on
// loopback, read by the whole daemon with no region configured and 8 s
// windows. Each certified mode's estimate arrives on its mode's subject
// — the lower mode on physd.<camera>.estimate, the upper on
// physd.modes.<camera>.estimate.m2 — within the bar of that mode (γ0 1 %, ζ
// 25 %); at least two of the lower and one of the upper before the
// deadline, and no estimate outside the bar.
func TestRTSPTwoModes(t *testing.T) {
	if testing.Short() {
		t.Skip("streams for tens of seconds")
	}
	if raceEnabled {
		t.Skip("a real-time stream: under the race detector the estimator falls behind it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	truth := []sim.Mode{{Fn: 1.5, Zeta: 0.01, AmplitudePx: 0.6, Phase: 0.3}, {Fn: 4, Zeta: 0.02, AmplitudePx: 0.4, Phase: 1.9}}
	url := rtspScene(ctx, t, "two", sim.Structure{Duration: 16, Seed: 9, Object: sim.ObjectBlock, Modes: truth}, 18)
	cam := rtspCamera("two", url)
	cam.Window = config.WindowOverride{Length: 8 * time.Second, Hop: time.Second}
	cfg := testConfig()
	cfg.Cameras = []config.Camera{cam}
	r := start(t, cfg, t.TempDir())
	c := collect(t, r.d)
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
				t.Logf("window %s: %s, γ0 %v, modes %+v, %v", d.WindowStart.Format("15:04:05"), d.Verdict, valueOr(d.Gamma0), d.Modes, d.Reasons)
			}
		}
	}()
	bySubject := func() (lower, upper []*modeEstimate) {
		for _, m := range c.kind(wire.KindEstimate) {
			e, err := wire.DecodeEstimate(m.Data)
			if err != nil {
				t.Fatalf("%s: %v", m.Subject, err)
			}
			switch m.Subject {
			case "physd.two.estimate":
				lower = append(lower, &modeEstimate{m.Subject, e})
			case "physd.modes.two.estimate.m2":
				upper = append(upper, &modeEstimate{m.Subject, e})
			default:
				t.Errorf("an estimate on %s", m.Subject)
			}
		}
		return lower, upper
	}
	waitFor(t, 150*time.Second, "two estimates of the lower mode and one of the upper", func() bool {
		lo, up := bySubject()
		return len(lo) >= 2 && len(up) >= 1
	})
	lo, up := bySubject()
	// /metrics carries each mode's latest certified estimate by label.
	m := scrape(t, "http://"+r.d.HTTPAddr())
	for i, mode := range truth {
		key := fmt.Sprintf(`physd_mode_natural_frequency_hz{camera="two",mode="%d"}`, i+1)
		fn, ok := m[key]
		t.Logf("%s %v", key, fn)
		if !ok || math.Abs(fn/mode.Fn-1) > 0.005 {
			t.Errorf("/metrics %s = %v (present %v), want within 0.5 %% of %g", key, fn, ok, mode.Fn)
		}
	}
	for i, group := range [][]*modeEstimate{lo, up} {
		g1, g0 := truth[i].Gammas()
		zeta := g1 / (2 * math.Sqrt(g0))
		for _, m := range group {
			e := m.e
			label := 1
			if e.Mode != nil {
				label = e.Mode.Label
			}
			inBar := math.Abs(e.Gamma0/g0-1) <= 0.01 && math.Abs(e.Zeta/zeta-1) <= 0.25
			t.Logf("%s: mode label %d (%+v): %.4f Hz ζ %.4f (truth %.4f Hz ζ %.4f), in the bar %v", m.subject, label, e.Mode, e.Fn, e.Zeta, truth[i].Fn, truth[i].Zeta, inBar)
			if !inBar {
				t.Errorf("false certificate on %s: γ0 %.4f ζ %.4f against %.4f, %.4f", m.subject, e.Gamma0, e.Zeta, g0, zeta)
			}
			if label != i+1 {
				t.Errorf("%s carries mode label %d", m.subject, label)
			}
		}
	}
}

// modeEstimate is an estimate with the subject it came on.
type modeEstimate struct {
	subject string
	e       *wire.Estimate
}

// On a line that has read two modes, a window's one-mode estimate takes
// the label of the mode it reads — the upper one once the lower has died
// down — and a line that never read two keeps estimates without a mode.
func TestLabelOneFollowsTheModes(t *testing.T) {
	c := &reporter{log: slog.New(slog.DiscardHandler)}
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	one := func(at time.Time, hz float64) *wire.Mode {
		return c.labelOne(job{end: at}, &estimator.Result{Physics: estimator.Physics{FreqN: hz}})
	}
	if m := one(t0, 2); m != nil {
		t.Errorf("a line without modes labelled an estimate %+v", m)
	}
	c.modes.Observe(t0, []modes.Sighting{{Hz: 1.5, Certified: true}, {Hz: 4, Certified: true}})
	for _, tc := range []struct {
		hz    float64
		label int
	}{{4.01, 2}, {1.49, 1}, {2.5, 3}} {
		m := one(t0.Add(time.Minute), tc.hz)
		if m == nil || m.Label != tc.label {
			t.Errorf("a one-mode estimate at %g Hz: %+v, want label %d", tc.hz, m, tc.label)
		}
	}
}
