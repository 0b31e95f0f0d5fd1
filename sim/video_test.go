package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func needFFmpeg(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"ffmpeg", "ffprobe"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed: %v", bin, err)
		}
	}
}

// probe returns ffprobe's stream fields for the first video stream.
func probe(t *testing.T, path string) map[string]string {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames",
		"-show_entries", "stream=codec_name,width,height,nb_read_frames,r_frame_rate,avg_frame_rate,pix_fmt",
		"-of", "default=noprint_wrappers=1", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

// decodeGray decodes a video back into w×h 8-bit gray frames.
func decodeGray(t *testing.T, path string, w, h int) [][]byte {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "gray", "-").Output()
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	var frames [][]byte
	for len(out) >= w*h {
		frames = append(frames, out[:w*h])
		out = out[w*h:]
	}
	return frames
}

func TestWriteMP4(t *testing.T) {
	needFFmpeg(t)
	ctx := context.Background()
	dir := t.TempDir()
	s := pendulumScene()
	s.Duration = 3
	fs, _ := mustRender(t, s)
	path := filepath.Join(dir, "pendulum.mp4")
	if err := WriteMP4(ctx, path, fs, 20); err != nil {
		t.Fatal(err)
	}
	m := probe(t, path)
	if m["codec_name"] != "h264" || m["nb_read_frames"] != strconv.Itoa(len(fs)) ||
		m["r_frame_rate"] != "20/1" || m["avg_frame_rate"] != "20/1" ||
		m["width"] != "64" || m["height"] != "64" || m["pix_fmt"] != "yuv420p" {
		t.Errorf("ffprobe: %v, want h264 64×64 yuv420p, %d frames at 20/1", m, len(fs))
	}
	// The decoded frames are close to the originals (lossy, limited range).
	dec := decodeGray(t, path, 64, 64)
	if len(dec) != len(fs) {
		t.Fatalf("decoded %d frames, want %d", len(dec), len(fs))
	}
	worst := 0.0
	for k := range dec {
		sum := 0.0
		for i, v := range dec[k] {
			sum += math.Abs(float64(v) - float64(fs[k].Pix[i]))
		}
		worst = math.Max(worst, sum/float64(len(dec[k])))
	}
	if worst > 2 {
		t.Errorf("decoded frames differ from the originals by %.2f gray levels on average", worst)
	}
	// Deterministic output.
	again := filepath.Join(dir, "again.mp4")
	if err := WriteMP4(ctx, again, fs, 20); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(again)
	if !bytes.Equal(a, b) {
		t.Error("encoding the same frames twice gave different files")
	}
}

func TestWriteMP4OddSizeAndRate(t *testing.T) {
	needFFmpeg(t)
	fs, _ := mustRender(t, Scene{System: SystemScale, Gamma0: 4, Z0: 1, Duration: 1, Size: 17, FPS: 12.5})
	path := filepath.Join(t.TempDir(), "odd.mp4")
	if err := WriteMP4(context.Background(), path, fs, 12.5); err != nil {
		t.Fatal(err)
	}
	m := probe(t, path)
	if m["codec_name"] != "h264" || m["nb_read_frames"] != strconv.Itoa(len(fs)) || m["r_frame_rate"] != "25/2" ||
		m["width"] != "18" || m["height"] != "18" {
		t.Errorf("ffprobe: %v, want 18×18 (padded) h264 at 25/2", m)
	}
	// Odd names that ffmpeg would otherwise misread.
	dir := t.TempDir()
	for _, name := range []string{"-dash.mp4", "co:lon.mp4"} {
		p := filepath.Join(dir, name)
		if err := WriteMP4(context.Background(), p, fs, 10); err != nil {
			t.Errorf("%s: %v", name, err)
		} else if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestWriteMP4Errors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	g := image.NewGray(image.Rect(0, 0, 16, 16))
	for _, tc := range []struct {
		name   string
		frames []*image.Gray
		fps    float64
	}{
		{"no frames", nil, 20},
		{"nil frame", []*image.Gray{g, nil}, 20},
		{"size mismatch", []*image.Gray{g, image.NewGray(image.Rect(0, 0, 16, 18))}, 20},
		{"zero fps", []*image.Gray{g}, 0},
		{"NaN fps", []*image.Gray{g}, math.NaN()},
		{"empty frame", []*image.Gray{image.NewGray(image.Rect(0, 0, 0, 0))}, 20},
		{"short buffer", []*image.Gray{{Pix: make([]byte, 10), Stride: 1 << 20, Rect: image.Rect(0, 0, 1<<20, 1<<20)}}, 20},
		{"bad stride", []*image.Gray{{Pix: make([]byte, 256), Stride: 4, Rect: image.Rect(0, 0, 16, 16)}}, 20},
	} {
		if err := WriteMP4(ctx, filepath.Join(dir, "x.mp4"), tc.frames, tc.fps); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
		if err := WriteY4M(filepath.Join(dir, "x.y4m"), tc.frames, tc.fps); err == nil {
			t.Errorf("%s: WriteY4M no error", tc.name)
		}
	}
	needFFmpeg(t)
	// ffmpeg's own failure is reported with its stderr.
	bad := filepath.Join(dir, "missing-dir", "x.mp4")
	err := WriteMP4(ctx, bad, []*image.Gray{g, g, g}, 20)
	if err == nil || !strings.Contains(err.Error(), "stderr:") {
		t.Errorf("unwritable path: %v", err)
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		t.Errorf("error %v does not wrap the *exec.ExitError", err)
	}
	// A cancelled context is reported as such.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := WriteMP4(cctx, filepath.Join(dir, "c.mp4"), []*image.Gray{g, g, g}, 20); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.mp4")); !os.IsNotExist(err) {
		t.Errorf("partial file left behind: %v", err)
	}
}

func TestWriteY4M(t *testing.T) {
	fs, _ := mustRender(t, Scene{System: SystemIntensity, Gamma0: 4, Z0: 1, Duration: 1, Size: 33, Seed: 4})
	// A sub-image with a non-zero origin and a wider stride is written by
	// its own bounds.
	big := image.NewGray(image.Rect(0, 0, 40, 40))
	for i := range big.Pix {
		big.Pix[i] = 7
	}
	sub := big.SubImage(image.Rect(5, 6, 38, 39)).(*image.Gray)
	for y := 0; y < 33; y++ {
		copy(big.Pix[big.PixOffset(5, 6+y):], fs[0].Pix[y*33:(y+1)*33])
	}
	frames := append([]*image.Gray{sub}, fs...)

	path := filepath.Join(t.TempDir(), "clip.y4m")
	if err := WriteY4M(path, frames, 10); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	header := "YUV4MPEG2 W33 H33 F10:1 Ip A1:1 C420jpeg XCOLORRANGE=FULL\n"
	if !strings.HasPrefix(string(data), header) || Y4MHeader(33, 33, 10) != header {
		t.Fatalf("header %q, want %q", string(data[:min(len(data), 80)]), header)
	}
	frameLen := len("FRAME\n") + 33*33 + 2*17*17
	if want := len(header) + len(frames)*frameLen; len(data) != want {
		t.Fatalf("file is %d bytes, want %d", len(data), want)
	}
	for k, f := range frames {
		rec := data[len(header)+k*frameLen:]
		if string(rec[:6]) != "FRAME\n" {
			t.Fatalf("frame %d marker %q", k, rec[:6])
		}
		b := f.Bounds()
		for y := 0; y < 33; y++ {
			row := f.Pix[f.PixOffset(b.Min.X, b.Min.Y+y):][:33]
			if !bytes.Equal(rec[6+y*33:6+(y+1)*33], row) {
				t.Fatalf("frame %d row %d differs", k, y)
			}
		}
		for _, c := range rec[6+33*33 : frameLen] {
			if c != 128 {
				t.Fatalf("frame %d chroma %d, want 128", k, c)
			}
		}
	}
	if _, err := exec.LookPath("ffprobe"); err == nil {
		m := probe(t, path)
		if m["nb_read_frames"] != strconv.Itoa(len(frames)) || m["width"] != "33" || m["r_frame_rate"] != "10/1" {
			t.Errorf("ffprobe of the y4m: %v", m)
		}
	}
}

func TestRationalFPS(t *testing.T) {
	for _, tc := range []struct {
		fps      float64
		num, den int64
	}{
		{20, 20, 1}, {10, 10, 1}, {12.5, 25, 2}, {29.97, 2997, 100},
		{30000.0 / 1001, 30000, 1001}, {24000.0 / 1001, 24000, 1001}, {0.1, 1, 10},
	} {
		if n, d := rationalFPS(tc.fps); n != tc.num || d != tc.den {
			t.Errorf("rationalFPS(%v) = %d/%d, want %d/%d", tc.fps, n, d, tc.num, tc.den)
		}
	}
	for _, fps := range []float64{math.Pi, 1e-9, 1e12, 7.3333333} {
		n, d := rationalFPS(fps)
		if n <= 0 || d <= 0 {
			t.Errorf("rationalFPS(%v) = %d/%d", fps, n, d)
		}
	}
	if got := fmt.Sprint(FFmpegArgs("o.mp4", 64, 64, 20, 0)); !strings.Contains(got, "-r 20/1") || !strings.Contains(got, "libx264") {
		t.Errorf("FFmpegArgs: %s", got)
	}
}
