//go:build !nocv

package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/physd/physd/analysis"
	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/modes"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/window"
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

// A line's modes outlive a restart: the labels it followed (modes.json)
// come back with their frequencies, so the same modes take the same
// labels — subjects and alerts — and a later label's alert baseline comes
// back with them; an unreadable file is set aside and the labels start
// afresh.
func TestModesKeptAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	two := func(lo, hi float64) *analysis.Modes {
		return &analysis.Modes{PxPerUnit: 1, Modes: []modes.Mode{
			{Index: 1, Term: modes.Term{Omega: 2 * math.Pi * lo}, Verdict: window.Verdict{Certified: true}},
			{Index: 2, Term: modes.Term{Omega: 2 * math.Pi * hi}, Verdict: window.Verdict{Certified: true}}}}
	}
	labels := func(ms labelledModes) []int {
		var out []int
		for _, m := range ms {
			out = append(out, m.wire.Label)
		}
		return out
	}
	first := &reporter{log: log, dir: dir, alerts: newAlerter("cam", config.Alerts{}, nil)}
	first.restoreModes(loadModeState(dir, log), t0)
	// A third mode showed once before the restart: labels are never
	// reused, so the next new one is 4.
	if got := labels(first.labelModes(job{end: t0}, two(1.5, 4))); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("labels %v, want [1 2]", got)
	}
	if got := labels(first.labelModes(job{end: t0.Add(time.Minute)}, two(1.5, 6))); !slices.Equal(got, []int{1, 3}) {
		t.Fatalf("labels %v, want [1 3]", got)
	}
	base := &wire.Baseline{Fn: 4.02, Zeta: 0.02, Windows: 5, Since: t0}
	first.modeAlerts = map[int]*alerter{2: newAlerter("cam", config.Alerts{}, base)}
	first.saveModes()

	again := &reporter{log: log, dir: dir, alerts: newAlerter("cam", config.Alerts{}, nil)}
	// Two hours down: no evidence the modes are gone.
	again.restoreModes(loadModeState(dir, log), t0.Add(3*time.Hour))
	got := labels(again.labelModes(job{end: t0.Add(3*time.Hour + time.Minute)}, two(1.505, 4.03)))
	t.Logf("labels after the restart: %v; state %+v", got, again.modes.State())
	if !slices.Equal(got, []int{1, 2}) {
		t.Errorf("labels after the restart %v, want [1 2]", got)
	}
	if al := again.modeAlerts[2]; al == nil || al.base == nil || *al.base != *base {
		t.Errorf("label 2's baseline after the restart: %+v, want %+v", again.modeAlerts[2], base)
	}
	if got := labels(again.labelModes(job{end: t0.Add(3*time.Hour + 2*time.Minute)}, two(1.5, 7))); !slices.Equal(got, []int{1, 4}) {
		t.Errorf("a new mode after the restart took %v, want [1 4]", got)
	}

	if err := os.WriteFile(filepath.Join(dir, "modes.json"), []byte(`{"tracker":{"next":1,"live":[{"label":2,"hz":3}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if st := loadModeState(dir, log); st != nil {
		t.Errorf("a label beyond next was restored: %+v", st)
	}
	if _, err := os.Stat(filepath.Join(dir, "modes.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the unreadable modes.json stayed in place: %v", err)
	}
}

// A later label's alert charts come back with its label after a restart
// (modes.json), learning or charting where they stood.
func TestModeChartsKeptAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	cfg := config.Default().Alerts
	cfg.Chart.Baseline, cfg.Chart.Interval = 4*time.Hour, time.Hour
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	two := &analysis.Modes{PxPerUnit: 1, Modes: []modes.Mode{
		{Index: 1, Term: modes.Term{Omega: 2 * math.Pi * 1.5}, Verdict: window.Verdict{Certified: true}},
		{Index: 2, Term: modes.Term{Omega: 2 * math.Pi * 4}, Verdict: window.Verdict{Certified: true}}}}
	first := &reporter{log: log, dir: dir, alerts: newAlerter("cam", cfg, nil)}
	first.labelModes(job{end: t0}, two)
	al := newAlerter("cam", cfg, nil)
	first.modeAlerts = map[int]*alerter{2: al}
	for k := range 30 * 6 { // past the baseline's 24 points (health.DefaultMinPoints)
		at := t0.Add(time.Duration(k) * 10 * time.Minute)
		al.observe(&wire.Estimate{WindowEnd: at, Fn: 4 + 0.001*math.Sin(float64(k)), FnSigma: 0.001, Zeta: 0.02, ZetaSigma: 0.001})
	}
	want := al.fn.Status()
	if want.State != "normal" {
		t.Fatalf("label 2's chart %+v, want its baseline established", want)
	}
	first.saveModes()
	again := &reporter{log: log, dir: dir, alerts: newAlerter("cam", cfg, nil)}
	again.restoreModes(loadModeState(dir, log), t0.Add(31*time.Hour))
	got := again.modeAlerts[2]
	if got == nil || got.fn == nil {
		t.Fatal("label 2's alerter did not come back")
	}
	if st := got.fn.Status(); st.State != want.State || st.BaselinePoints != want.BaselinePoints || st.Z != want.Z {
		t.Errorf("label 2's f_n chart after the restart %+v, want %+v", st, want)
	}
}
