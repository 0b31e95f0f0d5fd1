package config

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestScaleMMPerPx: both ways, by hand. Two points (0, 0) and (300, 400)
// are 500 px apart, 250 mm on the structure: 0.5 mm/px. A camera 10 m
// away with an 8 mm lens and 2.9 µm pixels: one pixel spans
// 10 000 mm × 0.0029 mm / 8 mm = 3.625 mm.
func TestScaleMMPerPx(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Scale
		want float64
	}{
		{"zero", Scale{}, 0},
		{"empty points", Scale{Points: [][]float64{}}, 0},
		{"points", Scale{Points: [][]float64{{0, 0}, {300, 400}}, DistanceMM: 250}, 0.5},
		{"points reversed", Scale{Points: [][]float64{{300, 400}, {0, 0}}, DistanceMM: 250}, 0.5},
		{"points fractional", Scale{Points: [][]float64{{10.5, 20}, {10.5, 22}}, DistanceMM: 3}, 1.5},
		{"pinhole", Scale{DistanceM: 10, FocalMM: 8, PixelUM: 2.9}, 3.625},
		{"pinhole near", Scale{DistanceM: 0.5, FocalMM: 25, PixelUM: 5}, 0.1},
	} {
		if err := tc.s.Check(); err != nil {
			t.Errorf("%s: Check: %v", tc.name, err)
		}
		if got := tc.s.MMPerPx(); math.Abs(got-tc.want) > 1e-12*math.Max(1, tc.want) {
			t.Errorf("%s: MMPerPx = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestScaleCheck: every problem is a *ScaleError naming its field,
// values YAML cannot hold (NaN, ±Inf: physd estimate's flags) included.
func TestScaleCheck(t *testing.T) {
	pts := func(p ...[]float64) [][]float64 { return p }
	for _, tc := range []struct {
		name   string
		s      Scale
		fields []string
	}{
		{"identical points", Scale{Points: pts([]float64{5, 5}, []float64{5, 5}), DistanceMM: 10}, []string{"points"}},
		{"one point", Scale{Points: pts([]float64{5, 5}), DistanceMM: 10}, []string{"points"}},
		{"three points", Scale{Points: pts([]float64{5, 5}, []float64{6, 6}, []float64{7, 7}), DistanceMM: 10}, []string{"points"}},
		{"three coordinates", Scale{Points: pts([]float64{5, 5, 5}, []float64{6, 6}), DistanceMM: 10}, []string{"points[0]"}},
		{"negative coordinate", Scale{Points: pts([]float64{5, 5}, []float64{-1, 6}), DistanceMM: 10}, []string{"points[1]"}},
		{"NaN coordinate", Scale{Points: pts([]float64{math.NaN(), 5}, []float64{1, 6}), DistanceMM: 10}, []string{"points[0]"}},
		{"no distance", Scale{Points: pts([]float64{0, 0}, []float64{1, 1})}, []string{"distance_mm"}},
		{"negative distance", Scale{Points: pts([]float64{0, 0}, []float64{1, 1}), DistanceMM: -3}, []string{"distance_mm"}},
		{"infinite distance", Scale{Points: pts([]float64{0, 0}, []float64{1, 1}), DistanceMM: math.Inf(1)}, []string{"distance_mm"}},
		{"distance without points", Scale{DistanceMM: 3}, []string{"points"}},
		{"pinhole without focal", Scale{DistanceM: 10, PixelUM: 3}, []string{"focal_mm"}},
		{"pinhole bad values", Scale{DistanceM: math.NaN(), FocalMM: -8, PixelUM: math.Inf(1)}, []string{"distance_m", "focal_mm", "pixel_um"}},
		{"pinhole pitch only", Scale{PixelUM: 3}, []string{"distance_m", "focal_mm"}},
		{"both ways", Scale{Points: pts([]float64{0, 0}, []float64{1, 1}), DistanceMM: 3, FocalMM: 8}, []string{"focal_mm"}},
	} {
		err := tc.s.Check()
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		var fields []string
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			var se *ScaleError
			if !errors.As(e, &se) {
				t.Fatalf("%s: %T is not a *ScaleError", tc.name, e)
			}
			if !strings.HasPrefix(se.Error(), se.Field+": ") {
				t.Errorf("%s: %q does not start with its field", tc.name, se.Error())
			}
			fields = append(fields, se.Field)
		}
		if !slices.Equal(fields, tc.fields) {
			t.Errorf("%s: fields %v, want %v (%v)", tc.name, fields, tc.fields, err)
		}
	}
	if err := (Scale{Points: [][]float64{}}).Check(); err != nil {
		t.Errorf("no scale: %v", err)
	}
}

const scaleText = `
cameras:
  - name: bridge
    source: {kind: rtsp, url: "rtsp://10.0.0.6/s"}
    scale: {points: [[0, 0], [300, 400]], distance_mm: 250}
    zones:
      - name: near
        roi: {x: 0, y: 0, w: 64, h: 64}
        scale: {distance_m: 10, focal_mm: 8, pixel_um: 2.9}
      - name: far
        roi: {x: 64, y: 0, w: 64, h: 64}
  - name: plain
`

// TestScaleLoad: a camera's scale reaches its zones unless they have
// their own, whole; a camera without one has none.
func TestScaleLoad(t *testing.T) {
	cfg, errs := loadText(t, scaleText)
	if errs != nil {
		t.Fatal(errs)
	}
	cam := cfg.Cameras[0]
	want := Scale{Points: [][]float64{{0, 0}, {300, 400}}, DistanceMM: 250}
	if !reflect.DeepEqual(cam.Scale, want) {
		t.Errorf("camera scale %+v, want %+v", cam.Scale, want)
	}
	for _, tc := range []struct {
		camera, zone string
		mmPerPx      float64
	}{{"bridge", "", 0.5}, {"bridge", "near", 3.625}, {"bridge", "far", 0.5}, {"plain", "", 0}} {
		s, ok := cfg.LineScale(tc.camera, tc.zone)
		if !ok || math.Abs(s.MMPerPx()-tc.mmPerPx) > 1e-12 {
			t.Errorf("LineScale(%s, %s) = %+v %v: %v mm/px, want %v", tc.camera, tc.zone, s, ok, s.MMPerPx(), tc.mmPerPx)
		}
	}
	if z := cam.ZoneCamera(cam.Zones[0]); len(z.Scale.Points) != 0 {
		t.Errorf("zone near mixes its camera's points into its pinhole scale: %+v", z.Scale)
	}
	if _, ok := cfg.LineScale("bridge", "nope"); ok {
		t.Error("LineScale found a zone that is not there")
	}
	if _, ok := cfg.LineScale("nope", ""); ok {
		t.Error("LineScale found a camera that is not there")
	}
}

// TestScaleErrors: physd config check refuses a bad scale at the field,
// naming the camera (and the zone).
func TestScaleErrors(t *testing.T) {
	text := "" +
		"cameras:\n" +
		"  - name: same\n" +
		"    scale: {points: [[10, 20], [10, 20]], distance_mm: 5}\n" + // 3
		"  - name: negative\n" +
		"    scale: {points: [[0, 0], [3, 4]], distance_mm: -5}\n" + // 5
		"  - name: both\n" +
		"    scale: {points: [[0, 0], [3, 4]], distance_mm: 5, distance_m: 2, focal_mm: 8, pixel_um: 3}\n" + // 7
		"  - name: pinhole\n" +
		"    scale: {distance_m: 0, focal_mm: 8, pixel_um: -3}\n" + // 9
		"  - name: shape\n" +
		"    scale:\n" +
		"      points: [[0, 0, 1], [3, 4]]\n" + // 12
		"      distance_mm: 5\n" +
		"  - name: inf\n" +
		"    scale: {distance_m: .inf, focal_mm: 8, pixel_um: 3}\n" + // 15
		"  - name: zoned\n" +
		"    zones:\n" +
		"      - name: z\n" +
		"        roi: {x: 0, y: 0, w: 8, h: 8}\n" +
		"        scale: {points: [[0, 0]], distance_mm: 5}\n" // 20
	_, got := loadText(t, text)
	want := []string{
		`physd.yaml:3:21: cameras[0].scale.points: are the same point [10, 20] twice, want two distinct points a known distance apart (camera "same")`,
		`physd.yaml:5:52: cameras[1].scale.distance_mm: is -5, want the distance between the two points on the structure, in millimetres, > 0 (camera "negative")`,
		`physd.yaml:7:67: cameras[2].scale.distance_m: is set, but so is the two-point scale: a scale is given by points and distance_mm or by distance_m, focal_mm and pixel_um, not both; remove one way (camera "both")`,
		`physd.yaml:9:25: cameras[3].scale.distance_m: is 0, want the distance from the camera to the structure, in metres, > 0 (the pinhole scale needs distance_m, focal_mm and pixel_um) (camera "pinhole")`,
		`physd.yaml:9:51: cameras[3].scale.pixel_um: is -3, want the sensor's pixel pitch, in micrometres, > 0 (the pinhole scale needs distance_m, focal_mm and pixel_um) (camera "pinhole")`,
		`physd.yaml:12:16: cameras[4].scale.points[0]: has 3 coordinates, want two, [x, y], in source pixels (camera "shape")`,
		`physd.yaml:15:25: cameras[5].scale.distance_m: want a finite number, got .inf`,
		`physd.yaml:20:25: cameras[6].zones[0].scale.points: has 1 point, want two, [[x1, y1], [x2, y2]], in source pixels (zone "z" of camera "zoned")`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestScaleReload: a scale change, a camera's or a zone's, restarts
// nothing (Diff and ZoneDiff leave it out); LineScale gives the new one.
func TestScaleReload(t *testing.T) {
	old, errs := loadText(t, scaleText)
	if errs != nil {
		t.Fatal(errs)
	}
	next, errs := loadText(t, strings.NewReplacer("distance_mm: 250", "distance_mm: 500", "focal_mm: 8", "focal_mm: 16").Replace(scaleText)+
		"    scale: {distance_m: 1, focal_mm: 1, pixel_um: 1}\n")
	if errs != nil {
		t.Fatal(errs)
	}
	if a, r, c := Diff(old, next); a != nil || r != nil || c != nil {
		t.Errorf("Diff = %v %v %v, want nothing", a, r, c)
	}
	if a, r, c := ZoneDiff(old, next, "bridge"); a != nil || r != nil || c != nil {
		t.Errorf("ZoneDiff = %v %v %v, want nothing", a, r, c)
	}
	if z := ZonesChanged(old, next); z != nil {
		t.Errorf("ZonesChanged = %v", z)
	}
	for _, tc := range []struct {
		camera, zone string
		mmPerPx      float64
	}{{"bridge", "", 1}, {"bridge", "near", 1.8125}, {"bridge", "far", 1}, {"plain", "", 1}} {
		if s, _ := next.LineScale(tc.camera, tc.zone); math.Abs(s.MMPerPx()-tc.mmPerPx) > 1e-12 {
			t.Errorf("after the reload LineScale(%s, %s) = %v mm/px, want %v", tc.camera, tc.zone, s.MMPerPx(), tc.mmPerPx)
		}
	}
	// Anything else in the same camera still restarts it.
	next.Cameras[1].FPS = 30
	if _, _, c := Diff(old, next); !slices.Equal(c, []string{"plain"}) {
		t.Errorf("Diff with an fps change = %v, want [plain]", c)
	}
}
