package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/physd/physd/config"
	"github.com/physd/physd/wire"
)

// The --scale-… flags make the config's scale, either way, and are
// refused as the config refuses it, naming the flags.
func TestEstimateScaleFlags(t *testing.T) {
	for _, tc := range []struct {
		f    scaleFlags
		want float64
	}{
		{scaleFlags{}, 0},
		{scaleFlags{points: "0,0,300,400", mm: 250}, 0.5},
		{scaleFlags{points: " 10.5, 20 ,10.5,22", mm: 3}, 1.5},
		{scaleFlags{distM: 10, focalMM: 8, pixelUM: 2.9}, 3.625},
	} {
		s, err := tc.f.scale()
		if err != nil || math.Abs(s.MMPerPx()-tc.want) > 1e-12 {
			t.Errorf("%+v: %v mm/px, %v; want %v", tc.f, s.MMPerPx(), err, tc.want)
		}
	}
	for _, tc := range []struct {
		f    scaleFlags
		want []string
	}{
		{scaleFlags{points: "1,2,3", mm: 5}, []string{`--scale-points: is "1,2,3", want x1,y1,x2,y2`}},
		{scaleFlags{points: "1,2,3,x", mm: 5}, []string{`--scale-points: is "1,2,3,x"`}},
		{scaleFlags{points: "7,8,7,8", mm: 5}, []string{"--scale-points: are the same point [7, 8] twice"}},
		{scaleFlags{points: "0,0,-3,4", mm: 5}, []string{"--scale-points: point 2 (x2,y2) is [-3, 4], want x and y ≥ 0"}},
		{scaleFlags{points: "0,0,3,4"}, []string{"--scale-mm: is 0, want the distance between the two points"}},
		{scaleFlags{points: "0,0,3,4", mm: -1}, []string{"--scale-mm: is -1"}},
		{scaleFlags{mm: 5}, []string{"--scale-points: has 0 points"}},
		{scaleFlags{distM: 10, pixelUM: math.NaN()}, []string{
			"--scale-focal-mm: is 0, want the lens's focal length, in millimetres, > 0 (the pinhole scale needs --scale-distance-m, --scale-focal-mm and --scale-pixel-um)",
			"--scale-pixel-um: is NaN"}},
		{scaleFlags{distM: math.Inf(1), focalMM: 8, pixelUM: 3}, []string{"--scale-distance-m: is +Inf"}},
		{scaleFlags{points: "0,0,3,4", mm: 5, focalMM: 8}, []string{"--scale-focal-mm: is set, but so is the two-point scale: a scale is given by --scale-points and --scale-mm or by --scale-distance-m, --scale-focal-mm and --scale-pixel-um, not both"}},
	} {
		_, err := tc.f.scale()
		if err == nil {
			t.Errorf("%+v: accepted", tc.f)
			continue
		}
		var se *config.ScaleError
		if !errors.As(err, &se) || !strings.HasPrefix(se.Field, "--scale-") {
			t.Errorf("%+v: %v is not a *config.ScaleError naming a flag", tc.f, err)
		}
		lines := strings.Split(err.Error(), "; --scale-")
		for i := 1; i < len(lines); i++ {
			lines[i] = "--scale-" + lines[i]
		}
		if len(lines) != len(tc.want) {
			t.Errorf("%+v: %d problems, want %d:\n%v", tc.f, len(lines), len(tc.want), err)
			continue
		}
		for i, w := range tc.want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("%+v: problem %d is %q, want it to start with %q", tc.f, i, lines[i], w)
			}
		}
	}
}

// A bad scale is a usage error, found before any video is read.
func TestEstimateScaleUsage(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.mp4")
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--scale-points", "5,5,5,5", "--scale-mm", "10"}, "--scale-points: are the same point"},
		{[]string{"--scale-distance-m", "4", "--scale-focal-mm", "8"}, "--scale-pixel-um: is 0"},
		{[]string{"--scale-distance-m", "4", "--scale-focal-mm", "8", "--scale-pixel-um", "3", "--scale-mm", "2"}, "not both"},
		{[]string{"--scale-mm", "abc"}, "scale-mm"},
	} {
		code, _, e := physd(t, append(append([]string{"estimate"}, tc.args...), missing)...)
		if code != exitUsage || !strings.Contains(e, tc.msg) || strings.Contains(e, "missing.mp4") {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tc.args, code, exitUsage, tc.msg, e)
		}
	}
}

// The amplitude in physd watch's line, physd estimate's summary and its
// JSON: pixels, and millimetres with a scale.
func TestAmplitudeOutput(t *testing.T) {
	end := time.Date(2026, 3, 1, 12, 0, 10, 0, time.UTC)
	e := &wire.Estimate{Node: "b1", Camera: "bridge", Zone: "left", WindowEnd: end, Gamma0: 4, Gamma0Sigma: 0.01, Gamma1: 0.08, Gamma1Sigma: 0.002,
		Fn: 0.3183, FnSigma: 0.0008, Zeta: 0.02, ZetaSigma: 0.001, Regime: "underdamped"}
	for _, tc := range []struct {
		a    *wire.Amplitude
		want string
	}{
		{nil, "-"},
		{wire.NewAmplitude(4, 0.1, "flow", 0), "4.00 px (noise 0.100)"},
		{wire.NewAmplitude(4, 0.1, "flow", 0.5), "4.00 px (noise 0.100) = 2.00 mm (noise 0.0500)"},
		{wire.NewAmplitude(1234, 0.00004, "flow", 12.5), "1234 px (noise 4e-05) = 15425 mm (noise 0.000500)"},
		{&wire.Amplitude{Px: 0.2, NoisePx: 0.04, Readout: "flow", HeldShare: 0.43}, "0.200 px (noise 0.0400), codec held 43%"},
	} {
		e.Amplitude = tc.a
		row := watchRow(e)
		if strings.Contains(row, "\n") || !strings.HasSuffix(row, "underdamped "+tc.want) || !strings.HasPrefix(row, "b1               bridge.left") {
			t.Errorf("watch row %q, want one line ending with %q", row, "underdamped "+tc.want)
		}
		// The columns line up with the header, the amplitude's included.
		h := utf8.RuneCountInString(watchHeader[:strings.Index(watchHeader, "AMPLITUDE")])
		if r := []rune(row); len(r) < h || r[h-1] != ' ' || !strings.HasPrefix(string(r[h:]), tc.want) {
			t.Errorf("watch row %q: the amplitude is not under its header (rune %d)", row, h)
		}
	}

	rep := estimateReport{Preset: "edge", Offsets: "shared", Amplitude: wire.NewAmplitude(4, 0.1, "flow", 0.5)}
	var out bytes.Buffer
	printSummary(&out, rep)
	if !strings.Contains(out.String(), "amplitude 4.00 px (noise 0.100) = 2.00 mm (noise 0.0500), read by flow; scale 0.500 mm/px\n") {
		t.Errorf("summary:\n%s", out.String())
	}
	b, err := json.Marshal(jsonSafe(rep))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"amplitude":{"px":4,"noise_px":0.1,"mm":2,"noise_mm":0.05,"mm_per_px":0.5,"readout":"flow"}`) {
		t.Errorf("JSON %s", b)
	}
	rep.Amplitude = nil
	out.Reset()
	printSummary(&out, rep)
	if !strings.Contains(out.String(), "amplitude not measured\n") {
		t.Errorf("summary without an amplitude:\n%s", out.String())
	}
	if b, _ := json.Marshal(jsonSafe(rep)); strings.Contains(string(b), "amplitude") {
		t.Errorf("JSON without an amplitude has the key: %s", b)
	}
}
