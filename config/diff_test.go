package config

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

// threeCameras returns a config with cameras a (single), b (events) and c.
func threeCameras() *Config {
	cfg := Default()
	cfg.Cameras = nil
	for _, name := range []string{"a", "b", "c"} {
		cam := DefaultCamera()
		cam.Name = name
		if name == "b" {
			cam.Mode = ModeEvents
		}
		cfg.Cameras = append(cfg.Cameras, cam)
	}
	return cfg
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		edit                    func(c *Config)
		added, removed, changed []string
		global                  []string
	}{
		{name: "identical", edit: func(c *Config) {}},
		{name: "add and remove", edit: func(c *Config) {
			d := DefaultCamera()
			d.Name = "d"
			c.Cameras = append(c.Cameras[1:], d)
		}, added: []string{"d"}, removed: []string{"a"}},
		{name: "reorder is no change", edit: func(c *Config) {
			slices.Reverse(c.Cameras)
		}},
		{name: "one camera's source", edit: func(c *Config) {
			c.Cameras[2].Source.Synthetic.Z0 = 30
		}, changed: []string{"c"}},
		{name: "one camera's secret url", edit: func(c *Config) {
			c.Cameras[0].Source.URL = NewSecret("rtsp://x/y")
		}, changed: []string{"a"}},
		{name: "camera window override equal to the global value", edit: func(c *Config) {
			c.Cameras[0].Window.Length = c.Windows.Length
		}},
		{name: "camera window override", edit: func(c *Config) {
			c.Cameras[0].Window.Hop = 3 * time.Second
		}, changed: []string{"a"}},
		{name: "global window hop changes every camera without an override", edit: func(c *Config) {
			c.Cameras[1].Window.Hop = time.Second
			c.Windows.Hop = 2 * time.Second
		}, changed: []string{"a", "c"}},
		{name: "events only reach events-mode cameras", edit: func(c *Config) {
			c.Events.Keep = 9
		}, changed: []string{"b"}},
		{name: "estimator changes all", edit: func(c *Config) {
			c.Estimator.StepsPerWindow = 25
		}, changed: []string{"a", "b", "c"}},
		{name: "nats and http are global", edit: func(c *Config) {
			c.NATS.Token = NewSecret("t")
			c.HTTP.Listen = ":9000"
		}, global: []string{"http", "nats"}},
		{name: "state_dir and log", edit: func(c *Config) {
			c.StateDir = "/x"
			c.Log.Level = "debug"
		}, global: []string{"state_dir", "log"}},
		{name: "nil and empty url lists are equal", edit: func(c *Config) {
			c.NATS.URLs = nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, cur := threeCameras(), threeCameras()
			cur.NATS.URLs = []string{}
			tc.edit(cur)
			added, removed, changed := Diff(old, cur)
			if !reflect.DeepEqual(added, tc.added) || !reflect.DeepEqual(removed, tc.removed) || !reflect.DeepEqual(changed, tc.changed) {
				t.Errorf("Diff = %v, %v, %v; want %v, %v, %v", added, removed, changed, tc.added, tc.removed, tc.changed)
			}
			if got := GlobalChanged(old, cur); !reflect.DeepEqual(got, tc.global) {
				t.Errorf("GlobalChanged = %v, want %v", got, tc.global)
			}
		})
	}
}

func TestDiffFromFiles(t *testing.T) {
	t.Setenv("PHYSD_TEST_CAM_URL", "rtsp://u:one@cam/x")
	before := "cameras:\n  - name: a\n  - name: r\n    source: {kind: rtsp, url: env:PHYSD_TEST_CAM_URL}\n"
	oldCfg, errs := loadText(t, before)
	if errs != nil {
		t.Fatal(errs)
	}
	// The same file after the secret changed: only r changed.
	t.Setenv("PHYSD_TEST_CAM_URL", "rtsp://u:two@cam/x")
	newCfg, errs := loadText(t, before+"  - name: n\n")
	if errs != nil {
		t.Fatal(errs)
	}
	added, removed, changed := Diff(oldCfg, newCfg)
	if !reflect.DeepEqual(added, []string{"n"}) || removed != nil || !reflect.DeepEqual(changed, []string{"r"}) {
		t.Errorf("Diff = %v, %v, %v", added, removed, changed)
	}
	if g := GlobalChanged(oldCfg, newCfg); g != nil {
		t.Errorf("GlobalChanged = %v", g)
	}
}

func TestDiffNil(t *testing.T) {
	added, removed, changed := Diff(nil, Default())
	if !reflect.DeepEqual(added, []string{"pendulum"}) || removed != nil || changed != nil {
		t.Errorf("Diff(nil, Default()) = %v, %v, %v", added, removed, changed)
	}
	added, removed, changed = Diff(Default(), nil)
	if added != nil || !reflect.DeepEqual(removed, []string{"pendulum"}) || changed != nil {
		t.Errorf("Diff(Default(), nil) = %v, %v, %v", added, removed, changed)
	}
	if g := GlobalChanged(nil, Default()); g != nil {
		t.Errorf("GlobalChanged(nil, Default()) = %v", g)
	}
}

// Reloadable takes everything a reload applies from the new configuration
// and every section that needs a restart from the old one: exactly the
// sections GlobalChanged reports.
func TestReloadable(t *testing.T) {
	old, next := Default(), Default()
	next.StateDir, next.Log.Level, next.HTTP.Listen = "/elsewhere", "debug", "127.0.0.1:1"
	next.NATS.SubjectPrefix, next.WebRTC.UDPPort = "other", 50000
	next.Windows.Hop, next.Estimator.Seed, next.Certify.MinPsi = 3*next.Windows.Hop, next.Estimator.Seed+1, 0.5
	next.Cameras = append(next.Cameras, DefaultCamera())
	next.Cameras[1].Name = "second"
	got := Reloadable(old, next)
	if g := GlobalChanged(old, got); len(g) != 0 {
		t.Errorf("reloaded configuration changes %v, which need a restart", g)
	}
	if g := GlobalChanged(old, next); len(g) != 5 {
		t.Errorf("GlobalChanged(old, next) = %v, want the 5 changed sections", g)
	}
	if got.Windows.Hop != next.Windows.Hop || got.Estimator.Seed != next.Estimator.Seed || got.Certify.MinPsi != 0.5 || len(got.Cameras) != 2 {
		t.Errorf("per-camera sections not taken from the new configuration: %+v %+v %+v %d cameras", got.Windows, got.Estimator, got.Certify, len(got.Cameras))
	}
	if next.StateDir != "/elsewhere" {
		t.Error("Reloadable changed its argument")
	}
}
