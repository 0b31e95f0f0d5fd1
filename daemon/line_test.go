package daemon

import (
	"testing"

	"github.com/physd/physd/config"
)

// A zone's line and a camera's line are built alike (newLine): both hold
// the daemon's gate on windows estimated at once and caches of their own
// for the camera-motion test and the tracker. (Zones used to be built by
// a struct literal of their own that left all three out.)
func TestZoneLinesLikeCameraLines(t *testing.T) {
	cfg := testConfig()
	zoned := cfg.Cameras[0]
	zoned.Name = "zoned"
	zoned.Zones = []config.Zone{
		{Name: "left", ROI: config.ROI{X: 0, Y: 0, W: 32, H: 64}},
		{Name: "right", ROI: config.ROI{X: 32, Y: 0, W: 32, H: 64}},
	}
	cfg.Cameras = append(cfg.Cameras, zoned)
	r := start(t, cfg, t.TempDir())
	d := r.d
	d.mu.Lock()
	defer d.mu.Unlock()
	lines := []string{cfg.Cameras[0].Name, "zoned.left", "zoned.right"}
	seen := map[any]string{}
	for _, key := range lines {
		l := d.lines[key]
		if l == nil {
			t.Fatalf("no line %q among %d", key, len(d.lines))
		}
		if l.gate == nil || l.gate != d.gate {
			t.Errorf("%s: not the daemon's gate", key)
		}
		if l.motionCache == nil || l.trackCache == nil {
			t.Errorf("%s: caches %v, %v", key, l.motionCache != nil, l.trackCache != nil)
		}
		for _, c := range []any{l.motionCache, l.trackCache} {
			if other, ok := seen[c]; ok {
				t.Errorf("%s shares a cache with %s", key, other)
			}
			seen[c] = key
		}
		if l.key() != key {
			t.Errorf("line %q calls itself %q", key, l.key())
		}
	}
}
