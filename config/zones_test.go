package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

const zonesText = `
windows: {length: 6s, hop: 1s}
cameras:
  - name: bridge
    source: {kind: rtsp, url: "rtsp://10.0.0.6/s"}
    size: 48
    binarize: true
    mode: events
    window: {length: 10s}
    zones:
      - name: cable-east
        roi: {x: 120, y: 80, w: 256, h: 256}
      - name: cable-west
        roi: {x: 900, y: 60, w: 320, h: 320}
        size: 96
        window: {length: 20s, hop: 4s}
      - name: mount
        roi: {x: 0, y: 500, w: 64, h: 32}
        window: {hop: 3s}
  - name: plain
`

// TestZonesLoad: zones decode, and ZoneCamera runs a zone as its camera
// with the zone's region, size and window overrides.
func TestZonesLoad(t *testing.T) {
	cfg, errs := loadText(t, zonesText)
	if errs != nil {
		t.Fatal(errs)
	}
	cam := cfg.Cameras[0]
	want := []Zone{
		{Name: "cable-east", ROI: ROI{120, 80, 256, 256}},
		{Name: "cable-west", ROI: ROI{900, 60, 320, 320}, Size: 96, Window: WindowOverride{Length: 20 * time.Second, Hop: 4 * time.Second}},
		{Name: "mount", ROI: ROI{0, 500, 64, 32}, Window: WindowOverride{Hop: 3 * time.Second}},
	}
	if !reflect.DeepEqual(cam.Zones, want) {
		t.Fatalf("zones = %+v\nwant    %+v", cam.Zones, want)
	}
	if z := cfg.Cameras[1].Zones; z == nil || len(z) != 0 {
		t.Errorf("a camera without zones has Zones %#v, want empty", z)
	}

	east := cam.ZoneCamera(cam.Zones[0])
	wantEast := cam
	wantEast.ROI = cam.Zones[0].ROI
	wantEast.Zones = nil
	if !reflect.DeepEqual(east, wantEast) {
		t.Errorf("ZoneCamera(cable-east) = %+v\nwant %+v", east, wantEast)
	}
	if east.Name != "bridge" || east.Size != 48 || !east.Binarize || east.Mode != ModeEvents ||
		east.Source.URL.Value() != "rtsp://10.0.0.6/s" {
		t.Errorf("ZoneCamera(cable-east) lost the camera's settings: %+v", east)
	}
	for _, tc := range []struct {
		zone   int
		size   int
		window Windows
	}{
		{0, 48, Windows{Length: 10 * time.Second, Hop: time.Second, MaxGap: 1.5, Bin: BinAuto}},
		{1, 96, Windows{Length: 20 * time.Second, Hop: 4 * time.Second, MaxGap: 1.5, Bin: BinAuto}},
		{2, 48, Windows{Length: 10 * time.Second, Hop: 3 * time.Second, MaxGap: 1.5, Bin: BinAuto}},
	} {
		zc := cam.ZoneCamera(cam.Zones[tc.zone])
		if zc.ROI != cam.Zones[tc.zone].ROI || zc.Size != tc.size || zc.Zones != nil {
			t.Errorf("zone %d: roi %+v size %d zones %v", tc.zone, zc.ROI, zc.Size, zc.Zones)
		}
		if got := zc.EffectiveWindow(cfg.Windows); got != tc.window {
			t.Errorf("zone %d: window %+v, want %+v", tc.zone, got, tc.window)
		}
	}
	if len(cam.Zones) != 3 || cam.Zones[0].Name != "cable-east" {
		t.Error("ZoneCamera changed the camera's zones")
	}

	if z, ok := cam.Zone("mount"); !ok || z.ROI.Y != 500 {
		t.Errorf("Zone(mount) = %+v, %v", z, ok)
	}
	if _, ok := cam.Zone("nope"); ok {
		t.Error("Zone(nope) found a zone")
	}
}

// TestZonesErrors: each zone mistake is reported at its own key, with the
// zone's path.
func TestZonesErrors(t *testing.T) {
	zone := func(i int) string {
		return fmt.Sprintf("      - {name: z%d, roi: {x: 0, y: 0, w: 8, h: 8}}\n", i)
	}
	var many strings.Builder
	for i := range MaxZones + 1 {
		many.WriteString(zone(i))
	}
	for _, tc := range []struct {
		name string
		text string
		want []string
	}{
		{
			name: "names",
			text: "" +
				"cameras:\n" +
				"  - name: a\n" +
				"    zones:\n" +
				"      - roi: {x: 0, y: 0, w: 8, h: 8}\n" + // 4
				"      - name: \"cable 1\"\n" + // 5
				"        roi: {x: 0, y: 0, w: 8, h: 8}\n" +
				"      - name: c\n" + // 7
				"        roi: {x: 0, y: 0, w: 8, h: 8}\n" +
				"      - name: c\n" + // 9
				"        roi: {x: 8, y: 0, w: 8, h: 8}\n",
			want: []string{
				`physd.yaml:4:9: cameras[0].zones[0].name: a zone needs a name`,
				`physd.yaml:5:15: cameras[0].zones[1].name: is "cable 1", want 1 to 64 of A-Z a-z 0-9 _ - (it becomes a NATS subject token)`,
				`physd.yaml:9:15: cameras[0].zones[3].name: duplicate zone name "c" (cameras[0].zones[2], line 7)`,
			},
		},
		{
			name: "regions",
			text: "" +
				"cameras:\n" +
				"  - name: a\n" +
				"    zones:\n" +
				"      - name: none\n" + // 4
				"      - name: zero\n" +
				"        roi: {x: 0, y: 0, w: 0, h: 0}\n" + // 6
				"      - name: negative\n" +
				"        roi: {x: -1, y: 0, w: 8, h: 0}\n", // 8
			want: []string{
				`physd.yaml:4:9: cameras[0].zones[0].roi: a zone needs a roi: the part of the camera's picture it watches, in source pixels`,
				`physd.yaml:6:14: cameras[0].zones[1].roi: a zone needs a roi: the part of the camera's picture it watches, in source pixels`,
				`physd.yaml:8:14: cameras[0].zones[2].roi: x and y must be ≥ 0 (have -1, 0)`,
				`physd.yaml:8:14: cameras[0].zones[2].roi: w and h must be > 0 (have 8, 0)`,
			},
		},
		{
			name: "sizes",
			text: "" +
				"cameras:\n" +
				"  - name: a\n" +
				"    zones:\n" +
				"      - {name: small, size: 3, roi: {x: 0, y: 0, w: 8, h: 8}}\n" +
				"      - {name: large, size: 1025, roi: {x: 0, y: 0, w: 8, h: 8}}\n" +
				"      - {name: fine, size: 1024, roi: {x: 0, y: 0, w: 8, h: 8}}\n",
			want: []string{
				`physd.yaml:4:29: cameras[0].zones[0].size: is 3, want 4…1024 (or 0 for the camera's size)`,
				`physd.yaml:5:29: cameras[0].zones[1].size: is 1025, want 4…1024 (or 0 for the camera's size)`,
			},
		},
		{
			name: "windows",
			text: "" +
				"windows: {length: 6s, hop: 1s}\n" +
				"cameras:\n" +
				"  - name: a\n" +
				"    window: {hop: 2s}\n" +
				"    zones:\n" +
				"      - name: short\n" +
				"        roi: {x: 0, y: 0, w: 8, h: 8}\n" +
				"        window: {length: 100ms, hop: -1s}\n" + // 8
				"      - name: long-hop\n" +
				"        roi: {x: 0, y: 0, w: 8, h: 8}\n" +
				"        window: {hop: 7s}\n" + // 11: longer than the global 6s
				"      - name: short-length\n" +
				"        roi: {x: 0, y: 0, w: 8, h: 8}\n" +
				"        window: {length: 1s}\n" + // 14: shorter than the camera's 2s hop
				"      - name: fine\n" +
				"        roi: {x: 0, y: 0, w: 8, h: 8}\n" +
				"        window: {length: 1s, hop: 500ms}\n",
			want: []string{
				`physd.yaml:8:26: cameras[0].zones[0].window.length: is 100ms, want ≥ 400ms (or 0 for the camera's window length)`,
				`physd.yaml:8:38: cameras[0].zones[0].window.hop: is -1s, want > 0 (or 0 for the camera's hop)`,
				`physd.yaml:11:23: cameras[0].zones[1].window.hop: the zone's hop 7s is longer than its window length 6s`,
				`physd.yaml:14:26: cameras[0].zones[2].window.length: the zone's hop 2s is longer than its window length 1s`,
			},
		},
		{
			// The camera's own mistake is reported once, not again for
			// each zone that inherits it.
			name: "camera window invalid",
			text: "" +
				"cameras:\n" +
				"  - name: a\n" +
				"    window: {length: 1s, hop: 2s}\n" +
				"    zones:\n" +
				"      - {name: z, roi: {x: 0, y: 0, w: 8, h: 8}, window: {length: 1s}}\n",
			want: []string{
				`physd.yaml:3:31: cameras[0].window.hop: the camera's hop 2s is longer than its window length 1s`,
			},
		},
		{
			name: "camera roi with zones",
			text: "" +
				"cameras:\n" +
				"  - name: a\n" +
				"    roi: {x: 0, y: 0, w: 64, h: 64}\n" +
				"    zones:\n" +
				zone(0),
			want: []string{
				`physd.yaml:3:10: cameras[0].roi: a camera with zones has no roi of its own: each zone has one`,
			},
		},
		{
			name: "too many zones",
			text: "cameras:\n  - name: a\n  - name: b\n    zones:\n" + many.String(),
			want: []string{
				`physd.yaml:5:7: cameras[1].zones: has 17 zones, want at most 16: the picture is decoded once, but each zone runs a full estimator pipeline, too much for a small board beyond that`,
			},
		},
		{
			name: "zone names are per camera",
			text: "cameras:\n  - name: a\n    zones:\n" + zone(0) + "  - name: b\n    zones:\n" + zone(0),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := loadText(t, tc.text)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	// Every kind of source may have zones.
	for _, src := range []string{
		"{kind: synthetic}", "{kind: file, path: /x.mp4}", "{kind: v4l2, device: 0}",
		"{kind: whep, url: \"http://h/w\"}", "{kind: whip, token: t}",
	} {
		if _, errs := loadText(t, "cameras:\n  - name: a\n    source: "+src+"\n    zones:\n"+zone(0)); errs != nil {
			t.Errorf("zones on %s: %v", src, errs)
		}
	}
	// An empty zone list is no zones: the camera's roi is its own.
	if _, errs := loadText(t, "cameras:\n  - name: a\n    zones: []\n    roi: {x: 1, y: 1, w: 8, h: 8}\n"); errs != nil {
		t.Errorf("roi with an empty zone list: %v", errs)
	}
}

// zonedCameras returns a config with camera z (zones e and w), camera p
// (no zones) and camera v (zones a, in events mode).
func zonedCameras() *Config {
	cfg := Default()
	cfg.NATS.URLs = []string{}
	z, p, v := DefaultCamera(), DefaultCamera(), DefaultCamera()
	z.Name, p.Name, v.Name = "z", "p", "v"
	z.Zones = []Zone{
		{Name: "e", ROI: ROI{0, 0, 32, 32}},
		{Name: "w", ROI: ROI{32, 0, 32, 32}, Window: WindowOverride{Hop: 2 * time.Second}},
	}
	v.Mode = ModeEvents
	v.Zones = []Zone{{Name: "a", ROI: ROI{0, 0, 16, 16}}}
	cfg.Cameras = []Camera{z, p, v}
	return cfg
}

func TestZoneDiff(t *testing.T) {
	type zd struct{ added, removed, changed []string }
	for _, tc := range []struct {
		name    string
		edit    func(c *Config)
		changed []string      // Diff's changed
		zoned   []string      // ZonesChanged
		zones   map[string]zd // ZoneDiff per camera, where not empty
	}{
		{name: "identical", edit: func(c *Config) {}},
		{name: "one zone's roi", edit: func(c *Config) {
			c.Cameras[0].Zones[1].ROI.X = 40
		}, zoned: []string{"z"}, zones: map[string]zd{"z": {changed: []string{"w"}}}},
		{name: "one zone's window, to the camera's value", edit: func(c *Config) {
			c.Cameras[0].Zones[1].Window.Hop = 0
			c.Cameras[0].Window.Hop = 2 * time.Second
		}, changed: []string{"z"}, zones: map[string]zd{"z": {changed: []string{"e"}}}},
		{name: "zone override equal to the inherited value", edit: func(c *Config) {
			c.Cameras[0].Zones[0].Window.Length = c.Windows.Length
		}},
		{name: "one zone's certify override changes that zone only", edit: func(c *Config) {
			c.Cameras[0].Zones[1].Certify.MaxRevisit = 3
		}, zoned: []string{"z"}, zones: map[string]zd{"z": {changed: []string{"w"}}}},
		{name: "one zone's estimator and alerts overrides", edit: func(c *Config) {
			c.Cameras[0].Zones[0].Estimator.Tau = 0.5
			c.Cameras[2].Zones[0].Alerts.FnDrift = 0.02
		}, zoned: []string{"z", "v"}, zones: map[string]zd{"z": {changed: []string{"e"}}, "v": {changed: []string{"a"}}}},
		{name: "override equal to the global value", edit: func(c *Config) {
			c.Cameras[0].Zones[0].Alerts.FnDrift = c.Alerts.FnDrift
			c.Cameras[0].Zones[0].Estimator.StepsPerWindow = c.Estimator.StepsPerWindow
		}},
		{name: "add a zone", edit: func(c *Config) {
			c.Cameras[0].Zones = append(c.Cameras[0].Zones, Zone{Name: "n", ROI: ROI{0, 32, 32, 32}})
		}, zoned: []string{"z"}, zones: map[string]zd{"z": {added: []string{"n"}}}},
		{name: "remove a zone", edit: func(c *Config) {
			c.Cameras[0].Zones = c.Cameras[0].Zones[1:]
		}, zoned: []string{"z"}, zones: map[string]zd{"z": {removed: []string{"e"}}}},
		{name: "reorder zones is no change", edit: func(c *Config) {
			zs := c.Cameras[0].Zones
			zs[0], zs[1] = zs[1], zs[0]
		}},
		{name: "global windows change every zone, not the zoned cameras", edit: func(c *Config) {
			c.Windows.Length = 6 * time.Second
		}, changed: []string{"p"}, zoned: []string{"z", "v"}, zones: map[string]zd{
			"z": {changed: []string{"e", "w"}}, "v": {changed: []string{"a"}},
		}},
		{name: "events reach the zones of events-mode cameras", edit: func(c *Config) {
			c.Events.Keep = 9
		}, zoned: []string{"v"}, zones: map[string]zd{"v": {changed: []string{"a"}}}},
		{name: "estimator changes every zone and the plain camera", edit: func(c *Config) {
			c.Estimator.StepsPerWindow = 25
		}, changed: []string{"p"}, zoned: []string{"z", "v"}, zones: map[string]zd{
			"z": {changed: []string{"e", "w"}}, "v": {changed: []string{"a"}},
		}},
		{name: "the camera's own settings change the camera", edit: func(c *Config) {
			c.Cameras[0].Source.Synthetic.Z0 = 30
			c.Cameras[0].Zones[0].ROI.W = 30
		}, changed: []string{"z"}, zones: map[string]zd{"z": {changed: []string{"e", "w"}}}},
		{name: "first zone is a camera change", edit: func(c *Config) {
			c.Cameras[1].Zones = []Zone{{Name: "q", ROI: ROI{0, 0, 8, 8}}}
		}, changed: []string{"p"}, zones: map[string]zd{"p": {added: []string{"q"}}}},
		{name: "last zone removed is a camera change", edit: func(c *Config) {
			c.Cameras[2].Zones = nil
		}, changed: []string{"v"}, zones: map[string]zd{"v": {removed: []string{"a"}}}},
		{name: "removed camera's zones are removed", edit: func(c *Config) {
			c.Cameras = c.Cameras[1:]
		}, zones: map[string]zd{"z": {removed: []string{"e", "w"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, cur := zonedCameras(), zonedCameras()
			tc.edit(cur)
			_, _, changed := Diff(old, cur)
			if !reflect.DeepEqual(changed, tc.changed) {
				t.Errorf("Diff's changed = %v, want %v", changed, tc.changed)
			}
			if got := ZonesChanged(old, cur); !reflect.DeepEqual(got, tc.zoned) {
				t.Errorf("ZonesChanged = %v, want %v", got, tc.zoned)
			}
			for _, name := range []string{"z", "p", "v"} {
				var got zd
				got.added, got.removed, got.changed = ZoneDiff(old, cur, name)
				if want := tc.zones[name]; !reflect.DeepEqual(got, want) {
					t.Errorf("ZoneDiff(%s) = %+v, want %+v", name, got, want)
				}
			}
		})
	}
}

// TestZoneDiffNil: a nil Config has no cameras, so no zones.
func TestZoneDiffNil(t *testing.T) {
	added, removed, changed := ZoneDiff(nil, zonedCameras(), "z")
	if !reflect.DeepEqual(added, []string{"e", "w"}) || removed != nil || changed != nil {
		t.Errorf("ZoneDiff(nil, cfg) = %v, %v, %v", added, removed, changed)
	}
	added, removed, changed = ZoneDiff(zonedCameras(), nil, "z")
	if added != nil || !reflect.DeepEqual(removed, []string{"e", "w"}) || changed != nil {
		t.Errorf("ZoneDiff(cfg, nil) = %v, %v, %v", added, removed, changed)
	}
	if got := ZonesChanged(nil, zonedCameras()); got != nil {
		t.Errorf("ZonesChanged(nil, cfg) = %v", got)
	}
}

// TestZonesReload: a file edited to move one zone reloads that zone only.
func TestZonesReload(t *testing.T) {
	old, errs := loadText(t, zonesText)
	if errs != nil {
		t.Fatal(errs)
	}
	cur, errs := loadText(t, strings.Replace(zonesText, "{x: 900, y: 60,", "{x: 880, y: 60,", 1))
	if errs != nil {
		t.Fatal(errs)
	}
	if a, r, c := Diff(old, cur); a != nil || r != nil || c != nil {
		t.Errorf("Diff = %v, %v, %v; want nothing", a, r, c)
	}
	if got := ZonesChanged(old, cur); !reflect.DeepEqual(got, []string{"bridge"}) {
		t.Errorf("ZonesChanged = %v", got)
	}
	if a, r, c := ZoneDiff(old, cur, "bridge"); a != nil || r != nil || !reflect.DeepEqual(c, []string{"cable-west"}) {
		t.Errorf("ZoneDiff = %v, %v, %v", a, r, c)
	}
}

const overridesText = `
estimator: {tau: 1, lambda: 1}
certify: {min_psi: 0.15}
alerts: {fn_drift: 0.05, consecutive: 3}
cameras:
  - name: bridge
    source: {kind: rtsp, url: "rtsp://10.0.0.6/s"}
    zones:
      - name: cable-east
        roi: {x: 120, y: 80, w: 256, h: 256}
        estimator: {steps_per_window: 20, max_window_time: 3s, replay: 2, tau: 0.5, lambda: 2, lr_encoder: 1e-4}
        certify: {max_revisit: 1.5, min_width: 0.1}
        alerts: {baseline_windows: 8, fn_drift: 0.02, zeta_drift: 0.3}
      - name: cable-west
        roi: {x: 900, y: 60, w: 320, h: 320}
`

// TestZoneOverridesLoad: a zone's estimator, certify and alerts overrides
// decode, and ZoneConfig applies a zone's non-zero ones over the global
// sections and nothing else.
func TestZoneOverridesLoad(t *testing.T) {
	cfg, errs := loadText(t, overridesText)
	if errs != nil {
		t.Fatal(errs)
	}
	east, west := cfg.Cameras[0].Zones[0], cfg.Cameras[0].Zones[1]
	wantEst := EstimatorOverride{StepsPerWindow: 20, MaxWindowTime: 3 * time.Second, Replay: 2, Tau: 0.5, Lambda: 2, LREncoder: 1e-4}
	if east.Estimator != wantEst || east.Certify != (Certify{MaxRevisit: 1.5, MinWidth: 0.1}) ||
		east.Alerts != (AlertsOverride{BaselineWindows: 8, FnDrift: 0.02, ZetaDrift: 0.3}) {
		t.Fatalf("cable-east decoded as %+v", east)
	}
	if west.Estimator != (EstimatorOverride{}) || west.Certify != (Certify{}) || west.Alerts != (AlertsOverride{}) {
		t.Fatalf("cable-west has overrides: %+v", west)
	}
	before := *cfg
	ec := cfg.ZoneConfig(east)
	want := *cfg
	want.Estimator.StepsPerWindow, want.Estimator.MaxWindowTime, want.Estimator.Replay = 20, 3*time.Second, 2
	want.Estimator.Tau, want.Estimator.Lambda, want.Estimator.LREncoder = 0.5, 2, 1e-4
	want.Certify = Certify{MinPsi: 0.15, MaxRevisit: 1.5, MinWidth: 0.1}
	want.Alerts.BaselineWindows, want.Alerts.FnDrift, want.Alerts.ZetaDrift = 8, 0.02, 0.3
	if !reflect.DeepEqual(*ec, want) {
		t.Errorf("ZoneConfig(cable-east) =\n%+v\nwant\n%+v", *ec, want)
	}
	if wc := cfg.ZoneConfig(west); !reflect.DeepEqual(*wc, *cfg) || wc == cfg {
		t.Errorf("ZoneConfig(cable-west) is not a copy of the global config: %+v", *wc)
	}
	if !reflect.DeepEqual(*cfg, before) {
		t.Errorf("ZoneConfig changed the config")
	}
	// The seed, preset and checkpoint period stay the camera's.
	if ec.Estimator.Preset != cfg.Estimator.Preset || ec.Estimator.Seed != cfg.Estimator.Seed ||
		ec.Estimator.CheckpointEvery != cfg.Estimator.CheckpointEvery || ec.Windows != cfg.Windows {
		t.Errorf("ZoneConfig changed more than the overrides: %+v", ec)
	}
}

// TestZoneOverrideErrors: each override field is checked by its global
// field's rule, at the zone's path; a 0 is always fine.
func TestZoneOverrideErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want []string
	}{
		{
			name: "zeros are fine",
			text: "" +
				"cameras:\n" +
				"  - name: a\n" +
				"    zones:\n" +
				"      - name: z\n" +
				"        roi: {x: 0, y: 0, w: 8, h: 8}\n" +
				"        estimator: {steps_per_window: 0, max_window_time: 0, replay: 0, tau: 0, lambda: 0, lr_encoder: 0}\n" +
				"        certify: {min_psi: 0, max_rel_residual: 0, max_revisit: 0, min_width: 0}\n" +
				"        alerts: {baseline_windows: 0, fn_drift: 0, zeta_drift: 0, consecutive: 0}\n",
		},
		{
			name: "estimator",
			text: "" +
				"cameras:\n" +
				"  - name: a\n" +
				"    zones:\n" +
				"      - name: z\n" +
				"        roi: {x: 0, y: 0, w: 8, h: 8}\n" +
				"        estimator:\n" +
				"          steps_per_window: -1\n" + // 7
				"          max_window_time: -1s\n" +
				"          replay: -2\n" +
				"          tau: -0.5\n" + // 10
				"          lambda: -1\n" +
				"          lr_encoder: -1e-5\n",
			want: []string{
				`physd.yaml:7:29: cameras[0].zones[0].estimator.steps_per_window: is -1, want ≥ 0 (or 0 for estimator.steps_per_window)`,
				`physd.yaml:8:28: cameras[0].zones[0].estimator.max_window_time: is -1s, want > 0 (or 0 for estimator.max_window_time)`,
				`physd.yaml:9:19: cameras[0].zones[0].estimator.replay: is -2, want ≥ 0 (or 0 for estimator.replay)`,
				`physd.yaml:10:16: cameras[0].zones[0].estimator.tau: is -0.5, want > 0 (or 0 for estimator.tau)`,
				`physd.yaml:11:19: cameras[0].zones[0].estimator.lambda: is -1, want ≥ 0 (or 0 for estimator.lambda)`,
				`physd.yaml:12:23: cameras[0].zones[0].estimator.lr_encoder: is -1e-05, want ≥ 0 (or 0 for estimator.lr_encoder)`,
			},
		},
		{
			name: "certify and alerts",
			text: "" +
				"cameras:\n" +
				"  - name: a\n" +
				"    zones:\n" +
				"      - name: fine\n" +
				"        roi: {x: 0, y: 0, w: 8, h: 8}\n" +
				"        certify: {min_psi: 1, max_revisit: 3}\n" +
				"      - name: z\n" +
				"        roi: {x: 0, y: 0, w: 8, h: 8}\n" +
				"        certify: {min_psi: 1.5, max_rel_residual: -1, max_revisit: -2, min_width: 2}\n" + // 9
				"        alerts: {baseline_windows: -1, fn_drift: -0.1, zeta_drift: -1, consecutive: -3}\n", // 10
			want: []string{
				`physd.yaml:9:28: cameras[0].zones[1].certify.min_psi: is 1.5, want in (0, 1] (or 0 for certify.min_psi)`,
				`physd.yaml:9:51: cameras[0].zones[1].certify.max_rel_residual: is -1, want > 0 (or 0 for certify.max_rel_residual)`,
				`physd.yaml:9:68: cameras[0].zones[1].certify.max_revisit: is -2, want > 0 (or 0 for certify.max_revisit)`,
				`physd.yaml:9:83: cameras[0].zones[1].certify.min_width: is 2, want in (0, 1] (or 0 for certify.min_width)`,
				`physd.yaml:10:36: cameras[0].zones[1].alerts.baseline_windows: is -1, want ≥ 1 (or 0 for alerts.baseline_windows)`,
				`physd.yaml:10:50: cameras[0].zones[1].alerts.fn_drift: is -0.1, want > 0 (or 0 for alerts.fn_drift)`,
				`physd.yaml:10:68: cameras[0].zones[1].alerts.zeta_drift: is -1, want > 0 (or 0 for alerts.zeta_drift)`,
				`physd.yaml:10:85: cameras[0].zones[1].alerts.consecutive: is -3, want ≥ 1 (or 0 for alerts.consecutive)`,
			},
		},
		{
			// A zone that trains where the global estimator does not
			// needs a learning rate of its own.
			name: "steps without a learning rate",
			text: "" +
				"estimator: {steps_per_window: 0, lr_encoder: 0}\n" +
				"cameras:\n" +
				"  - name: a\n" +
				"    zones:\n" +
				"      - name: z\n" +
				"        roi: {x: 0, y: 0, w: 8, h: 8}\n" +
				"        estimator: {steps_per_window: 5}\n" + // 7
				"      - name: ok\n" +
				"        roi: {x: 0, y: 0, w: 8, h: 8}\n" +
				"        estimator: {steps_per_window: 5, lr_encoder: 1e-5}\n",
			want: []string{
				`physd.yaml:7:39: cameras[0].zones[0].estimator.steps_per_window: is 5 but estimator.lr_encoder is 0, want the zone's lr_encoder > 0 (or no steps_per_window)`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := loadText(t, tc.text)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestZoneOverrideReload: a file edited to change one zone's certify
// override reloads that zone only.
func TestZoneOverrideReload(t *testing.T) {
	old, errs := loadText(t, overridesText)
	if errs != nil {
		t.Fatal(errs)
	}
	cur, errs := loadText(t, strings.Replace(overridesText, "max_revisit: 1.5", "max_revisit: 1.8", 1))
	if errs != nil {
		t.Fatal(errs)
	}
	if a, r, c := Diff(old, cur); a != nil || r != nil || c != nil {
		t.Errorf("Diff = %v, %v, %v; want nothing", a, r, c)
	}
	if got := ZonesChanged(old, cur); !reflect.DeepEqual(got, []string{"bridge"}) {
		t.Errorf("ZonesChanged = %v", got)
	}
	if a, r, c := ZoneDiff(old, cur, "bridge"); a != nil || r != nil || !reflect.DeepEqual(c, []string{"cable-east"}) {
		t.Errorf("ZoneDiff = %v, %v, %v", a, r, c)
	}
}
