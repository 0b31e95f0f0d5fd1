package daemon

import (
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
	lines := func() map[string]*camera {
		r.d.mu.Lock()
		defer r.d.mu.Unlock()
		out := map[string]*camera{}
		for k, c := range r.d.cameras {
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
	if got := after["syn.b"].cut.ROI; got.Y != 16 {
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
