package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

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
			cfg, err := config.Parse([]byte(realConfig(9100, 4300, layout, 2)), "bench")
			if err != nil {
				t.Fatalf("%s: %v\n%s", source, err, realConfig(9100, 4300, layout, 2))
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

// The ambient rows' configurations are valid and say what the rows claim:
// one ambient camera with the row's record and lags, the bench's
// calibration and hop.
func TestAmbientConfigs(t *testing.T) {
	rows, err := parseAmbientRows("10m/60s,30m/60s,2m/20s")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		text := ambientConfig(9100, 4300, []realCamera{ambientCamera("rtsp://127.0.0.1:8554/cam", row)})
		cfg, err := config.Parse([]byte(text), "bench")
		if err != nil {
			t.Fatalf("%v: %v\n%s", row, err, text)
		}
		if len(cfg.Cameras) != 1 {
			t.Fatalf("%d cameras, want 1", len(cfg.Cameras))
		}
		c := cfg.Cameras[0]
		want := config.Ambient{Record: row.record, MaxLag: row.maxLag, Calibrate: ambientCalibrate}
		if c.Mode != config.ModeAmbient || c.Ambient != want || c.Window.Hop != ambientHop {
			t.Errorf("%v: mode %q, ambient %+v, hop %v; want %q, %+v, %v\n%s", row, c.Mode, c.Ambient, c.Window.Hop, config.ModeAmbient, want, ambientHop, text)
		}
	}
	if got := yamlDuration(10 * time.Minute); got != "10m" {
		t.Errorf("yamlDuration(10m) = %q", got)
	}
	if got := yamlDuration(20 * time.Second); got != "20s" {
		t.Errorf("yamlDuration(20s) = %q", got)
	}
}
