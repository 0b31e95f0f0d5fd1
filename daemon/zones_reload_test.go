package daemon

import (
	"reflect"
	"testing"
	"time"

	"github.com/physd/physd/config"
)

// A reload that changes one zone restarts that zone's line only: the
// camera's source keeps running (no reconnect, its frame count keeps
// growing), the unchanged zone keeps its line, the changed one gets a new
// line that receives frames, an added zone starts and a removed one stops.
func TestZoneReloadRestartsOnlyThatZone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon")
	}
	cfg := testConfig()
	cam := config.DefaultCamera()
	cam.Name = "syn"
	cam.Zones = []config.Zone{
		{Name: "a", ROI: config.ROI{X: 0, Y: 0, W: 64, H: 64}},
		{Name: "b", ROI: config.ROI{X: 0, Y: 0, W: 64, H: 48}},
	}
	cfg.Cameras = []config.Camera{cam}
	r := start(t, cfg, t.TempDir())
	lines := func() map[string]*line {
		r.d.mu.Lock()
		defer r.d.mu.Unlock()
		out := map[string]*line{}
		for k, c := range r.d.lines {
			out[k] = c
		}
		return out
	}
	frames := func(key string) int64 { return r.d.Statuses()[key].Frames }
	waitFor(t, 20*time.Second, "frames in both zones", func() bool { return frames("syn.a") > 5 && frames("syn.b") > 5 })
	before := lines()

	next := testConfig()
	cam2 := cam
	cam2.Zones = []config.Zone{
		{Name: "a", ROI: config.ROI{X: 0, Y: 0, W: 64, H: 64}},
		{Name: "b", ROI: config.ROI{X: 0, Y: 16, W: 64, H: 48}},
		{Name: "c", ROI: config.ROI{X: 8, Y: 8, W: 48, H: 48}},
	}
	next.Cameras = []config.Camera{cam2}
	sourceFrames := frames("syn")
	r.d.Reload(next)
	after := lines()
	if after["syn"] != before["syn"] || after["syn.a"] != before["syn.a"] {
		t.Errorf("the camera or its unchanged zone restarted")
	}
	if after["syn.b"] == nil || after["syn.b"] == before["syn.b"] || after["syn.c"] == nil {
		t.Fatalf("zone b not restarted or zone c not started: %v", after)
	}
	if got := after["syn.b"].spec.cut.ROI; got.Y != 16 {
		t.Errorf("zone b cuts %+v after the reload", got)
	}
	waitFor(t, 20*time.Second, "frames in the restarted and the added zone", func() bool { return frames("syn.b") > 5 && frames("syn.c") > 5 })
	if frames("syn") <= sourceFrames || r.d.Statuses()["syn"].Reconnects != 0 {
		t.Errorf("the source restarted: %d frames before the reload, %+v after", sourceFrames, r.d.Statuses()["syn"])
	}

	// Removing zone c stops its line; a and b run on.
	cam3 := cam2
	cam3.Zones = cam2.Zones[:2]
	last := testConfig()
	last.Cameras = []config.Camera{cam3}
	r.d.Reload(last)
	final := lines()
	if final["syn.c"] != nil || final["syn.a"] != before["syn.a"] || final["syn.b"] != after["syn.b"] {
		t.Errorf("removing zone c: lines %v", final)
	}

	// Removing the camera removes its zones' lines with it.
	none := testConfig()
	none.Cameras = nil
	r.d.Reload(none)
	if left := lines(); len(left) != 0 {
		t.Errorf("after removing the camera: lines %v", left)
	}
}

// A zone's estimator, certify and alerts overrides reach its line (its
// learner's preset, its certificate's limits, its alerter) and only its
// line; a reload that changes only one zone's override restarts only
// that zone, which runs with the new value.
func TestZoneReloadOverrides(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon")
	}
	cfg := testConfig()
	cam := config.DefaultCamera()
	cam.Name = "syn"
	cam.Zones = []config.Zone{
		{Name: "a", ROI: config.ROI{X: 0, Y: 0, W: 64, H: 64},
			Estimator: config.EstimatorOverride{Tau: 0.5},
			Certify:   config.Certify{MaxRevisit: 3},
			Alerts:    config.AlertsOverride{FnDrift: 0.02}},
		{Name: "b", ROI: config.ROI{X: 0, Y: 0, W: 64, H: 48}},
	}
	cfg.Cameras = []config.Camera{cam}
	r := start(t, cfg, t.TempDir())
	line := func(key string) *line {
		r.d.mu.Lock()
		defer r.d.mu.Unlock()
		return r.d.lines[key]
	}
	frames := func(key string) int64 { return r.d.Statuses()[key].Frames }
	waitFor(t, 20*time.Second, "frames in both zones", func() bool { return frames("syn.a") > 2 && frames("syn.b") > 2 })

	a, b, src := line("syn.a"), line("syn.b"), line("syn")
	wantCertify := cfg.Certify
	wantCertify.MaxRevisit = 3
	wantAlerts := cfg.Alerts
	wantAlerts.FnDrift = 0.02
	if a.spec.thresholds != thresholds(wantCertify) || !reflect.DeepEqual(a.spec.alerts, wantAlerts) || !reflect.DeepEqual(a.reporter().alerts.cfg, wantAlerts) {
		t.Errorf("zone a runs with certify %+v, alerts %+v (alerter %+v), want %+v and %+v",
			a.spec.thresholds, a.spec.alerts, a.reporter().alerts.cfg, wantCertify, wantAlerts)
	}
	if a.spec.learn.Tau != 0.5 || a.spec.preset.Loss.Tau != 0.5 || a.spec.preset.Loss.Lambda != cfg.Estimator.Lambda {
		t.Errorf("zone a: estimator τ %v, preset τ %v λ %v, want τ 0.5 and the global λ",
			a.spec.learn.Tau, a.spec.preset.Loss.Tau, a.spec.preset.Loss.Lambda)
	}
	// The sections a zone cannot override are the global ones.
	if a.spec.window != cam.EffectiveWindow(cfg.Windows) || a.spec.events != cfg.Events || a.spec.heartbeat != cfg.NATS.Heartbeat {
		t.Errorf("zone a's windows, events or NATS differ from the global ones")
	}
	if b.spec.thresholds != thresholds(cfg.Certify) || !reflect.DeepEqual(b.spec.alerts, cfg.Alerts) ||
		b.spec.learn != cfg.Estimator || b.spec.preset.Loss.Tau != cfg.Estimator.Tau {
		t.Errorf("zone b runs with certify %+v, alerts %+v, estimator %+v, preset τ %v; want the global ones",
			b.spec.thresholds, b.spec.alerts, b.spec.learn, b.spec.preset.Loss.Tau)
	}
	if src.spec.preset.Loss.Tau != cfg.Estimator.Tau {
		t.Errorf("the camera's preset τ is %v, want the global %v", src.spec.preset.Loss.Tau, cfg.Estimator.Tau)
	}

	next := testConfig()
	cam2 := cam
	cam2.Zones = append([]config.Zone(nil), cam.Zones...)
	cam2.Zones[0].Certify.MaxRevisit = 2.5
	next.Cameras = []config.Camera{cam2}
	r.d.Reload(next)
	a2 := line("syn.a")
	if line("syn") != src || line("syn.b") != b {
		t.Errorf("the camera or the unchanged zone b restarted")
	}
	if a2 == nil || a2 == a {
		t.Fatalf("zone a not restarted")
	}
	if a2.spec.thresholds.MaxRevisit != 2.5 || a2.spec.alerts.FnDrift != 0.02 || a2.spec.preset.Loss.Tau != 0.5 {
		t.Errorf("zone a after the reload: certify %+v, alerts %+v, preset τ %v",
			a2.spec.thresholds, a2.spec.alerts, a2.spec.preset.Loss.Tau)
	}
	waitFor(t, 20*time.Second, "frames in the restarted zone", func() bool { return frames("syn.a") > 2 })
}
