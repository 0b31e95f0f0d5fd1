package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimStructure renders a small sub-pixel clip through the CLI and
// reads its ground truth back.
func TestSimStructure(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "cable.mp4")
	code, out, e := physd(t, "sim", "--system", "structure", "--object", "cable", "--width", "96", "--height", "64",
		"--duration", "2", "--fn", "1.5", "--zeta", "0.02", "--amplitude", "0.3", "--crf", "30", "--gop", "30", "--seed", "3", clip)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, e)
	}
	tp := filepath.Join(dir, "cable.truth.json")
	if !strings.Contains(out, tp) || !strings.Contains(out, "cable") {
		t.Errorf("stdout %q does not name the object and %s", out, tp)
	}
	b, err := os.ReadFile(tp)
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Video        string  `json:"video"`
		Object       string  `json:"object"`
		W            int     `json:"width"`
		Frames       int     `json:"frames"`
		FPS          float64 `json:"fps"`
		DirectionDeg float64 `json:"direction_deg"`
		Noise        float64 `json:"noise"`
		Gamma0       float64 `json:"gamma0"`
		Gamma1       float64 `json:"gamma1"`
		Modes        []struct {
			Fn     float64 `json:"fn_hz"`
			Zeta   float64 `json:"zeta"`
			Amp    float64 `json:"amplitude_px"`
			Gamma0 float64 `json:"gamma0"`
		} `json:"modes"`
		Encoding struct {
			Codec string `json:"codec"`
			CRF   int    `json:"crf"`
			GOP   int    `json:"gop"`
		} `json:"encoding"`
		D []float64 `json:"displacement_px"`
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	w := 2 * math.Pi * 1.5
	if truth.Video != clip || truth.Object != "cable" || truth.W != 96 || truth.Frames != 60 || truth.FPS != 30 ||
		truth.DirectionDeg != 90 || truth.Noise != 0.01 || len(truth.Modes) != 1 || truth.Modes[0].Amp != 0.3 ||
		math.Abs(truth.Gamma0-w*w) > 1e-9 || math.Abs(truth.Gamma1-2*0.02*w) > 1e-12 ||
		truth.Encoding.Codec != "h264" || truth.Encoding.CRF != 30 || truth.Encoding.GOP != 30 ||
		len(truth.D) != 60 || truth.D[0] != 0.3 {
		t.Errorf("truth:\n%s", b)
	}
	if _, err := exec.LookPath("ffprobe"); err == nil {
		got, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames",
			"-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0", clip).Output()
		if err != nil || strings.TrimSpace(string(got)) != "h264,96,64,60" {
			t.Errorf("ffprobe: %q %v, want h264,96,64,60", got, err)
		}
	}

	// Several modes, H.265 if this ffmpeg has it, or y4m.
	y := filepath.Join(dir, "two.y4m")
	if code, _, e := physd(t, "sim", "--system", "structure", "--object", "beam", "--modes", "1.2:0.01:0.5,3.1:0.02:0.2:1.5",
		"--width", "64", "--height", "48", "--duration", "1", "--noise", "0", "--y4m", y); code != exitOK {
		t.Fatalf("--modes --y4m: exit %d: %s", code, e)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "two.truth.json"))
	var two map[string]any
	if err := json.Unmarshal(b, &two); err != nil {
		t.Fatal(err)
	}
	if m, _ := two["modes"].([]any); len(m) != 2 || two["gamma0"] != nil || two["encoding"] != nil || two["noise"] != 0.0 {
		t.Errorf("two modes, y4m, no noise: %s", b)
	}
}

// TestSimStructureExcitation renders a short ambient clip with every
// other part of the excitation through the CLI and reads them back from
// the ground truth.
func TestSimStructureExcitation(t *testing.T) {
	dir := t.TempDir()
	clip := filepath.Join(dir, "amb.mp4")
	code, out, e := physd(t, "sim", "--system", "structure", "--width", "64", "--height", "64", "--duration", "3",
		"--fn", "1.5", "--zeta", "0.02", "--excitation", "ambient:0.4", "--forcing", "harmonic:5:0.3",
		"--coloured", "0.1:1", "--impulses", "30:0.2", "--seed", "4", clip)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, e)
	}
	if !strings.Contains(out, "ambient excitation") || !strings.Contains(out, "forcing 5 Hz") || !strings.Contains(out, "rms=0.4") {
		t.Errorf("stdout %q does not say the excitation", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "amb.truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Excitation string `json:"excitation"`
		Modes      []struct {
			Amp float64 `json:"amplitude_px"`
		} `json:"modes"`
		Forcing *struct {
			Hz    float64  `json:"hz"`
			Amp   float64  `json:"amplitude_px"`
			Phase *float64 `json:"phase_rad"`
		} `json:"forcing"`
		Coloured *struct {
			RMS    float64 `json:"rms_px"`
			Corner float64 `json:"corner_hz"`
		} `json:"coloured"`
		Impulses *struct {
			PerMinute float64   `json:"per_minute"`
			Amp       float64   `json:"amplitude_px"`
			Knocks    []float64 `json:"knock_times_s"`
		} `json:"impulses"`
		Encoding *struct{} `json:"encoding"`
		D        []float64 `json:"displacement_px"`
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if truth.Excitation != "ambient" || len(truth.Modes) != 1 || truth.Modes[0].Amp != 0.4 ||
		truth.Forcing == nil || truth.Forcing.Hz != 5 || truth.Forcing.Amp != 0.3 || truth.Forcing.Phase == nil ||
		truth.Coloured == nil || truth.Coloured.RMS != 0.1 || truth.Coloured.Corner != 1 ||
		truth.Impulses == nil || truth.Impulses.PerMinute != 30 || truth.Impulses.Amp != 0.2 ||
		truth.Encoding == nil || len(truth.D) != 90 {
		t.Errorf("truth:\n%s", b)
	}
	// The stationary start: the first displacement is not the free
	// decay's d(0) = A.
	if truth.D[0] == 0.4+0.3 {
		t.Errorf("d(0) = %v, a free decay's", truth.D[0])
	}

	// A free clip says so and carries no excitation parts.
	free := filepath.Join(dir, "free.y4m")
	if code, out, e := physd(t, "sim", "--system", "structure", "--width", "64", "--height", "48", "--duration", "1", "--y4m", free); code != exitOK ||
		!strings.Contains(out, "free excitation") {
		t.Fatalf("free: exit %d, %q: %s", code, out, e)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "free.truth.json"))
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["excitation"] != "free" || m["forcing"] != nil || m["coloured"] != nil || m["impulses"] != nil {
		t.Errorf("free truth: %s", b)
	}
}

// TestSimStructureBadFlags: each mistake is a usage error naming its flag.
func TestSimStructureBadFlags(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.mp4")
	st := []string{"sim", "--system", "structure", "--width", "64", "--height", "48", "--duration", "1"}
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{append(st, "--zeta", "1.5"), "--zeta"},
		{append(st, "--zeta", "-0.1"), "--zeta"},
		{append(st, "--fn", "20"), "--fn"},
		{append(st, "--fn", "0"), "--fn"},
		{append(st, "--amplitude", "100"), "--amplitude"},
		{append(st, "--amplitude", "nan"), "--amplitude"},
		{append(st, "--object", "bridge"), "--object"},
		{append(st, "--object", "beam", "--object-size", "3"), "--object-size"},
		{append(st, "--object-size", "500"), "--object-size"},
		{append(st, "--direction", "inf"), "--direction"},
		{append(st, "--noise", "-1"), "--noise"},
		{append(st, "--noise", "0.9"), "--noise"},
		{append(st, "--texture", "0.9"), "--texture"},
		{append(st, "--blur", "-1"), "--blur"},
		{append(st, "--width", "8"), "--width"},
		{append(st, "--height", "0"), "--height"},
		{append(st, "--fps", "-1"), "--fps"},
		{append(st, "--duration", "0.01"), "--duration"},
		{append(st, "--codec", "vp9"), "--codec"},
		{append(st, "--crf", "60"), "--crf"},
		{append(st, "--gop", "-1"), "--gop"},
		{append(st, "--modes", "2:0.01"), "--modes"},
		{append(st, "--modes", "2:0.01:x"), "--modes"},
		{append(st, "--modes", "2:0.01:1,20:0.01:1"), "--modes"},
		{append(st, "--modes", "2:0.01:1", "--fn", "3"), "--fn"},
		{append(st, "--mode", "2:0.01"), "--mode"},
		{append(st, "--mode", "2:0.01:1", "--mode", "20:0.01:1"), "--mode"},
		{append(st, "--mode", "2:0.01:1,3:0.01:1"), "--mode"},
		{append(st, "--mode", "2:0.01:1", "--modes", "3:0.01:1"), "--mode"},
		{append(st, "--mode", "2:0.01:1", "--zeta", "0.02"), "--zeta"},
		{append(st, "--size", "64"), "--size"},
		{append(st, "--nuisance", "jitter:1"), "--nuisance"},
		{append(st, "--y4m", "--gop", "30"), "--gop"},
		{[]string{"sim", "--object", "cable"}, "--object"},
		{[]string{"sim", "--amplitude", "0.5"}, "--amplitude"},
		{append(st, "--excitation", "forced"), "--excitation"},
		{append(st, "--excitation", "ambient:x"), "--excitation"},
		{append(st, "--excitation", "ambient:-1"), "--excitation"},
		{append(st, "--excitation", "free:1"), "--excitation"},
		{append(st, "--excitation", "ambient", "--zeta", "0"), "--zeta"},
		{append(st, "--excitation", "ambient:0.5", "--amplitude", "0.3"), "--amplitude"},
		{append(st, "--forcing", "harmonic"), "--forcing"},
		{append(st, "--forcing", "sine:5"), "--forcing"},
		{append(st, "--forcing", "harmonic:5:1:2:3"), "--forcing"},
		{append(st, "--forcing", "harmonic:20"), "--forcing"},
		{append(st, "--forcing", "harmonic:5:-1"), "--forcing"},
		{append(st, "--coloured", "1"), "--coloured"},
		{append(st, "--coloured", "0.1:0"), "--coloured"},
		{append(st, "--impulses", "-1:1"), "--impulses"},
		{append(st, "--impulses", "2:nan"), "--impulses"},
		{[]string{"sim", "--forcing", "harmonic:5"}, "--forcing"},
		{[]string{"sim", "--excitation", "ambient"}, "--excitation"},
	} {
		args := append(append([]string(nil), tc.args...), out)
		code, _, e := physd(t, args...)
		if code != exitUsage || !strings.Contains(e, tc.flag) {
			t.Errorf("%v: exit %d, stderr %q; want %d naming %s", tc.args[1:], code, e, exitUsage, tc.flag)
		}
	}
	if code, _, e := physd(t, append(st, out, filepath.Join(dir, "y.mp4"))...); code != exitUsage || !strings.Contains(e, "one clip") {
		t.Errorf("two outputs: exit %d, %s", code, e)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed run left %s: %v", out, err)
	}
}

// TestSimEncodingFlagsKeepPaperClips: the paper's systems still write the
// same bytes, and --codec h264 --gop 0 spelled out changes nothing.
func TestSimEncodingFlagsKeepPaperClips(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.mp4"), filepath.Join(dir, "b.mp4"), filepath.Join(dir, "c.mp4")
	for _, args := range [][]string{
		{"sim", "--duration", "1", "--crf", "23", a},
		{"sim", "--duration", "1", "--crf", "23", "--codec", "h264", "--gop", "0", b},
		{"sim", "--duration", "1", "--crf", "23", "--gop", "5", c},
	} {
		if code, _, e := physd(t, args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	cb, _ := os.ReadFile(c)
	if len(ab) == 0 || !bytes.Equal(ab, bb) || bytes.Equal(ab, cb) {
		t.Errorf("default %d bytes, spelled-out default %d (want equal), --gop 5 %d (want different)", len(ab), len(bb), len(cb))
	}
	if _, err := exec.LookPath("ffprobe"); err == nil {
		out, err := exec.Command("ffprobe", "-v", "error", "-show_frames", "-select_streams", "v",
			"-show_entries", "frame=key_frame", "-of", "csv=p=0", c).Output()
		if err != nil {
			t.Fatal(err)
		}
		keys := 0
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "1") {
				keys++
			}
		}
		if keys != 4 { // 20 frames at 20 fps, a keyframe every 5
			t.Errorf("--gop 5 over 20 frames: %d key frames, want 4", keys)
		}
	}
}

// --mode, repeated, gives the same scene as --modes with the same items.
func TestSimModeFlagRepeatable(t *testing.T) {
	dir := t.TempDir()
	truthOf := func(args ...string) string {
		clip := filepath.Join(dir, fmt.Sprintf("m%d.mp4", len(args)))
		full := append([]string{"sim", "--system", "structure", "--width", "64", "--height", "48", "--duration", "1", "--y4m"}, args...)
		if code, _, e := physd(t, append(full, clip)...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
		b, err := os.ReadFile(strings.TrimSuffix(clip, ".mp4") + ".truth.json")
		if err != nil {
			t.Fatal(err)
		}
		var tr struct {
			Modes json.RawMessage `json:"modes"`
		}
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatal(err)
		}
		return string(tr.Modes)
	}
	one := truthOf("--mode", "1:0.01:3", "--mode", "2.7:0.02:1:0.5")
	two := truthOf("--modes", "1:0.01:3,2.7:0.02:1:0.5")
	if one != two || !strings.Contains(one, "2.7") {
		t.Errorf("--mode ×2 gave modes %s, --modes %s", one, two)
	}
}
