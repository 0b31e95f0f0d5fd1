package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/physd/physd/config"
)

// The configurations the real-stream runs write are valid, and the zones
// layout watches the same regions as the cameras layout.
func TestRealConfigs(t *testing.T) {
	clip := filepath.Join(t.TempDir(), "clip.mp4")
	if err := os.WriteFile(clip, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, source := range []string{
		`{kind: rtsp, url: "rtsp://127.0.0.1:8554/cam"}`,
		fmt.Sprintf("{kind: file, path: %q, realtime: true, loop: true}", clip),
	} {
		zoned, separate := zoneLayouts(source)
		var want []config.ROI
		for _, layout := range [][]realCamera{zoned, separate} {
			cfg, err := config.Parse([]byte(realConfig(9100, 4300, layout)), "bench")
			if err != nil {
				t.Fatalf("%s: %v\n%s", source, err, realConfig(9100, 4300, layout))
			}
			var got []config.ROI
			for _, c := range cfg.Cameras {
				if len(c.Zones) == 0 {
					got = append(got, c.ROI)
				}
				for _, z := range c.Zones {
					got = append(got, z.ROI)
				}
			}
			if len(got) != 2 {
				t.Fatalf("%s: %d lines, want 2", source, len(got))
			}
			if want == nil {
				want = got
			} else if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: the cameras watch %v, the zones %v", source, got, want)
			}
		}
	}
}
