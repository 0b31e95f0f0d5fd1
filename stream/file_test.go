//go:build !nocv

package stream

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// makeVideo runs the ffmpeg CLI to write dir/name and returns its path.
func makeVideo(t *testing.T, name string, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg not installed")
	}
	out := filepath.Join(t.TempDir(), name)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(append([]string{"-v", "error", "-nostdin", "-y"}, args...), out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v\n%s", args, err, b)
	}
	return out
}

// testsrc20 is 40 frames at 20 fps, 64×48, H.264 with the default B-frames.
func testsrc20(t *testing.T) string {
	return makeVideo(t, "x.mp4", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=20", "-t", "2",
		"-c:v", "libx264", "-pix_fmt", "yuv420p")
}

func read(t *testing.T, path string, opt FileOptions) ([]Frame, Timing) {
	t.Helper()
	frames, tm, err := ReadFile(context.Background(), path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d frames, %+v", len(frames), tm)
	return frames, tm
}

// checkEven checks n frames, Seq from seq0, Time = Seq·step (±1 ms).
func checkEven(t *testing.T, frames []Frame, n, seq0 int, step time.Duration) {
	t.Helper()
	if len(frames) != n {
		t.Fatalf("got %d frames, want %d", len(frames), n)
	}
	for i, f := range frames {
		want := time.Duration(seq0+i) * step
		if f.Seq != seq0+i || (f.Time-want).Abs() > time.Millisecond {
			t.Fatalf("frame %d: Seq %d Time %v, want Seq %d Time %v", i, f.Seq, f.Time, seq0+i, want)
		}
	}
}

func checkTiming(t *testing.T, tm Timing, fps float64, irregular bool, assumed ...string) {
	t.Helper()
	if math.Abs(tm.FPS/fps-1) > 0.01 {
		t.Errorf("FPS = %v, want %v", tm.FPS, fps)
	}
	if tm.Irregular != irregular {
		t.Errorf("Irregular = %v, want %v", tm.Irregular, irregular)
	}
	for _, s := range assumed {
		if !strings.Contains(tm.Assumed, s) {
			t.Errorf("Assumed = %q, want it to contain %q", tm.Assumed, s)
		}
	}
}

func TestReadFileMP4(t *testing.T) {
	path := testsrc20(t)
	frames, tm := read(t, path, FileOptions{})
	checkEven(t, frames, 40, 0, 50*time.Millisecond)
	checkTiming(t, tm, 20, false, "container declares 20 fps and frames are evenly spaced at 50.0 ms: assuming 20.00 fps")
	if tm.DeclaredFPS != 20 || tm.MedianStep != 50*time.Millisecond || tm.Failed != 0 || tm.Repaired != 0 {
		t.Errorf("Timing %+v", tm)
	}
	// Read through OpenCV (a rotated file), the frames drained from the
	// H.264 decoder at the end report 0 ms; ReadFile must repair them.
	rotateMP4(t, path)
	upright, tmr := read(t, path, FileOptions{})
	checkEven(t, upright, 40, 0, 50*time.Millisecond)
	if tmr.Repaired < 1 || tmr.Repaired > 3 {
		t.Errorf("through OpenCV: Repaired = %d, want the 2 frames of libx264's decoder delay", tmr.Repaired)
	}
	if f := upright[0]; f.W != 48 || f.H != 64 {
		t.Errorf("through OpenCV: frame %dx%d, want the upright 48x64", f.W, f.H)
	}
	f := frames[0]
	if f.W != 64 || f.H != 48 || len(f.Pix) != 64*48 {
		t.Fatalf("frame %dx%d with %d pixels", f.W, f.H, len(f.Pix))
	}
	for _, v := range f.Pix {
		if !(v >= 0 && v <= 1) {
			t.Fatalf("pixel %v outside [0,1]", v)
		}
	}
}

func TestReadFileWebM(t *testing.T) {
	path := makeVideo(t, "x.webm", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=20", "-t", "2",
		"-c:v", "libvpx", "-b:v", "200k")
	frames, tm := read(t, path, FileOptions{Preprocess: Preprocess{Size: 16}})
	checkEven(t, frames, 40, 0, 50*time.Millisecond)
	checkTiming(t, tm, 20, false)
	if tm.Repaired != 0 {
		t.Errorf("VP8 has no decoder delay, yet Repaired = %d", tm.Repaired)
	}
	// About 16² pixels with 64×48's aspect ratio kept.
	if f := frames[0]; f.W != 18 || f.H != 14 || len(f.Pix) != 18*14 {
		t.Errorf("resized frame %dx%d with %d pixels, want 18x14", f.W, f.H, len(f.Pix))
	}
}

// TestReadFileSillyDeclaredRate rewrites the Matroska DefaultDuration of an
// evenly spaced 25 fps file so that the container declares 1000 fps.
func TestReadFileSillyDeclaredRate(t *testing.T) {
	path := makeVideo(t, "x.mkv", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=25", "-t", "2",
		"-c:v", "libx264", "-pix_fmt", "yuv420p")
	setDefaultDuration(t, path, 40_000_000, 1_000_000)
	frames, tm := read(t, path, FileOptions{})
	checkEven(t, frames, 50, 0, 40*time.Millisecond)
	if tm.DeclaredFPS != 1000 {
		t.Errorf("DeclaredFPS = %v, want 1000", tm.DeclaredFPS)
	}
	checkTiming(t, tm, 25, false, "container declares 1000 fps but frames are evenly spaced at 40.0 ms: assuming 25.00 fps")
	if tm.Failed != 0 {
		t.Errorf("Failed = %d: the bogus declared rate must not look like lost frames", tm.Failed)
	}
}

// setDefaultDuration patches the Matroska DefaultDuration element (ID
// 0x23E383) from old to new nanoseconds, keeping its width.
func setDefaultDuration(t *testing.T, path string, old, new uint64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte{0x23, 0xE3, 0x83})
	if i < 0 || i+4 > len(b) || b[i+3]&0xF0 != 0x80 {
		t.Skip("this ffmpeg wrote no patchable DefaultDuration")
	}
	n := int(b[i+3] & 0x0F)
	v := b[i+4 : i+4+n]
	var buf [8]byte
	copy(buf[8-n:], v)
	if binary.BigEndian.Uint64(buf[:]) != old {
		t.Skipf("DefaultDuration is %x, not %d ns", v, old)
	}
	binary.BigEndian.PutUint64(buf[:], new)
	copy(v, buf[8-n:])
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadFileTimestampJitter(t *testing.T) {
	// Frames every 40 ms, each presentation time delayed by 0–8 ms.
	path := makeVideo(t, "x.mkv", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=25", "-t", "2",
		"-vf", "settb=1/1000,setpts=N/(25*TB)+random(0)*0.008/TB", "-vsync", "passthrough",
		"-enc_time_base", "1:1000", "-c:v", "libx264", "-pix_fmt", "yuv420p")
	frames, tm := read(t, path, FileOptions{})
	if len(frames) != 50 {
		t.Fatalf("got %d frames", len(frames))
	}
	off := 0
	for _, f := range frames {
		if f.Time%(40*time.Millisecond) != 0 {
			off++
		}
	}
	if off < 10 {
		t.Fatalf("only %d frames off the 40 ms grid: the fixture has no jitter", off)
	}
	checkTiming(t, tm, 25, false, "jitter", "evenly spaced at span/(n−1)")
}

func TestReadFileVFRGap(t *testing.T) {
	path := makeVideo(t, "x.mp4", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=20", "-t", "2",
		"-vf", "select='not(between(n,10,14))',setpts=PTS", "-vsync", "vfr",
		"-c:v", "libx264", "-pix_fmt", "yuv420p")
	frames, tm := read(t, path, FileOptions{})
	if len(frames) != 35 {
		t.Fatalf("got %d frames, want 35", len(frames))
	}
	if frames[9].Time != 450*time.Millisecond || frames[10].Time != 750*time.Millisecond {
		t.Errorf("times around the gap: %v, %v", frames[9].Time, frames[10].Time)
	}
	checkTiming(t, tm, 20, true, "gap", "0.450 s (300.0 ms")
}

func TestReadFileROIResizeBinarize(t *testing.T) {
	// Black 64×48 frames with a white 24×16 box at (16,8); lossless luma.
	path := makeVideo(t, "box.mp4", "-f", "lavfi", "-i", "color=c=black:s=64x48:r=10", "-t", "1",
		"-vf", "drawbox=x=16:y=8:w=24:h=16:color=white:t=fill", "-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv420p")
	mean := func(p []float64) float64 {
		s := 0.0
		for _, v := range p {
			s += v
		}
		return s / float64(len(p))
	}

	frames, _ := read(t, path, FileOptions{Preprocess: Preprocess{ROI: ROI{X: 16, Y: 8, W: 24, H: 16}}})
	if len(frames) != 10 {
		t.Fatalf("got %d frames", len(frames))
	}
	if f := frames[3]; f.W != 24 || f.H != 16 || mean(f.Pix) < 0.98 {
		t.Errorf("ROI on the box: %dx%d, mean %v", f.W, f.H, mean(f.Pix))
	}
	frames, _ = read(t, path, FileOptions{Preprocess: Preprocess{ROI: ROI{X: 44, Y: 28, W: 20, H: 20}}})
	if m := mean(frames[3].Pix); m > 0.02 {
		t.Errorf("ROI off the box: mean %v", m)
	}

	for _, th := range []float64{0, 0.5} {
		frames, _ = read(t, path, FileOptions{Preprocess: Preprocess{Size: 16, Binarize: true, Threshold: th}})
		f := frames[5]
		if f.W != 18 || f.H != 14 { // about 16² pixels, 64×48's aspect kept
			t.Fatalf("resized to %dx%d, want 18x14", f.W, f.H)
		}
		for _, v := range f.Pix {
			if v != 0 && v != 1 {
				t.Fatalf("threshold %v: pixel %v not binary", th, v)
			}
		}
		// The box covers x 4.5–11.25, y 2.3–7 of 18×14: 1/8 of the area.
		if f.Pix[5*18+7] != 1 || f.Pix[0] != 0 || math.Abs(mean(f.Pix)-0.125) > 0.03 {
			t.Errorf("threshold %v: centre %v, corner %v, mean %v", th, f.Pix[5*18+7], f.Pix[0], mean(f.Pix))
		}
	}
}

func TestReadFileSegmentAndOverride(t *testing.T) {
	path := testsrc20(t)
	frames, tm := read(t, path, FileOptions{From: 0.5, To: 1})
	if len(frames) != 10 || frames[0].Seq != 10 || frames[9].Time != 950*time.Millisecond {
		t.Fatalf("segment [0.5, 1): %d frames, first Seq %d", len(frames), frames[0].Seq)
	}
	checkTiming(t, tm, 20, false)

	// The tail frames have repaired times, and must still be selectable.
	frames, _ = read(t, path, FileOptions{From: 1.9})
	if len(frames) != 2 || frames[0].Seq != 38 || frames[1].Time != 1950*time.Millisecond {
		t.Fatalf("segment [1.9, end): %+v", frames)
	}

	// An override turns times into Seq/FPS, and From/To select on them.
	frames, tm = read(t, path, FileOptions{FPS: 100, From: 0.1, To: 0.2})
	checkEven(t, frames, 10, 10, 10*time.Millisecond)
	checkTiming(t, tm, 100, false, "override", "container declares 20 fps")

	_, _, err := ReadFile(context.Background(), path, FileOptions{From: 2.5})
	if !errors.Is(err, ErrEmptySegment) {
		t.Errorf("From beyond the end: %v", err)
	}
	_, _, err = ReadFile(context.Background(), path, FileOptions{MaxFrames: 5})
	if !errors.Is(err, ErrTooManyFrames) || !strings.Contains(err.Error(), "MaxFrames") {
		t.Errorf("MaxFrames 5: %v", err)
	}
}

func TestReadFileTruncated(t *testing.T) {
	path := makeVideo(t, "x.webm", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=20", "-t", "2",
		"-c:v", "libvpx", "-b:v", "200k")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	frames, tm := read(t, path, FileOptions{})
	if len(frames) == 0 || len(frames) >= 40 {
		t.Fatalf("got %d frames from half a file", len(frames))
	}
	if tm.Failed != 40-len(frames) || !strings.Contains(tm.Assumed, "truncated") {
		t.Errorf("Failed = %d, want %d; Assumed %q", tm.Failed, 40-len(frames), tm.Assumed)
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.mp4")
	if err := os.WriteFile(text, []byte("this is not a video\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.mkv")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	video := testsrc20(t)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name   string
		ctx    context.Context
		path   string
		opt    FileOptions
		target error
		field  string // must appear in the message
	}{
		{"missing file", nil, filepath.Join(dir, "nope.mp4"), FileOptions{}, fs.ErrNotExist, "nope.mp4"},
		{"text renamed .mp4", nil, text, FileOptions{}, ErrNotVideo, "notes.mp4"},
		{"empty file", nil, empty, FileOptions{}, ErrNotVideo, "empty.mkv"},
		{"directory", nil, dir, FileOptions{}, ErrNotVideo, "regular"},
		{"ROI outside frame", nil, video, FileOptions{Preprocess: Preprocess{ROI: ROI{X: 50, Y: 40, W: 20, H: 20}}}, ErrInvalidOption, "ROI"},
		{"ROI non-positive", nil, video, FileOptions{Preprocess: Preprocess{ROI: ROI{X: 5, Y: 5}}}, ErrInvalidOption, "ROI"},
		{"negative Size", nil, video, FileOptions{Preprocess: Preprocess{Size: -1}}, ErrInvalidOption, "Size"},
		{"Threshold 1", nil, video, FileOptions{Preprocess: Preprocess{Binarize: true, Threshold: 1}}, ErrInvalidOption, "Threshold"},
		{"From >= To", nil, video, FileOptions{From: 1, To: 1}, ErrInvalidOption, "From"},
		{"negative From", nil, video, FileOptions{From: -1}, ErrInvalidOption, "From"},
		{"NaN To", nil, video, FileOptions{To: math.NaN()}, ErrInvalidOption, "To"},
		{"NaN FPS", nil, video, FileOptions{FPS: math.NaN()}, ErrInvalidOption, "FPS"},
		{"negative FPS", nil, video, FileOptions{FPS: -25}, ErrInvalidOption, "FPS"},
		{"infinite FPS", nil, video, FileOptions{FPS: math.Inf(1)}, ErrInvalidOption, "FPS"},
		{"huge ROI", nil, video, FileOptions{Preprocess: Preprocess{ROI: ROI{X: math.MaxInt, Y: 0, W: math.MaxInt, H: 4}}}, ErrInvalidOption, "ROI"},
		{"huge Size", nil, video, FileOptions{Preprocess: Preprocess{Size: 1 << 40}}, ErrInvalidOption, "Size"},
		{"tiny FPS", nil, video, FileOptions{FPS: 1e-300}, ErrInvalidOption, "FPS"},
		{"negative MaxFrames", nil, video, FileOptions{MaxFrames: -1}, ErrInvalidOption, "MaxFrames"},
		{"canceled context", canceled, video, FileOptions{}, context.Canceled, "x.mp4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			frames, _, err := ReadFile(ctx, tc.path, tc.opt)
			if !errors.Is(err, tc.target) {
				t.Fatalf("err = %v, want %v", err, tc.target)
			}
			if !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), filepath.Base(tc.path)) {
				t.Errorf("err = %q, want it to name %q and the path", err, tc.field)
			}
			if frames != nil {
				t.Errorf("got %d frames with an error", len(frames))
			}
		})
	}
}

// eachAhead hands fn the same frames, times and flags as each, and leaves
// the decoder in the same state, whether it reads to the end or fn stops
// it a frame before the end (when its reader has already reached it).
func TestEachAheadMatchesEach(t *testing.T) {
	path := testsrc20(t)
	type seen struct {
		pts time.Duration
		ok  bool
		sum float64
	}
	run := func(ahead bool, stopAt int) ([]seen, decoder) {
		d, err := openFile(context.Background(), path, Preprocess{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var got []seen
		fn := func(pic *picture, pts time.Duration, ok bool) error {
			if len(got) == stopAt {
				return errStopDecoding
			}
			got = append(got, seen{pts, ok, pictureSum(pic)})
			return nil
		}
		each := d.each
		if ahead {
			each = d.eachAhead
		}
		if err := each(context.Background(), fn); err != nil {
			t.Fatal(err)
		}
		state := *d
		state.src, state.readStart, state.lastReadTook = nil, time.Time{}, 0
		return got, state
	}
	for _, stopAt := range []int{-1, 39, 5} {
		want, wantState := run(false, stopAt)
		got, gotState := run(true, stopAt)
		if !slices.Equal(got, want) {
			t.Errorf("stop at %d: eachAhead saw %v, each %v", stopAt, got, want)
		}
		if !reflect.DeepEqual(gotState, wantState) {
			t.Errorf("stop at %d: decoder after eachAhead %+v, after each %+v", stopAt, gotState, wantState)
		}
	}
}

// An ended context stops eachAhead with its error.
func TestEachAheadCancelled(t *testing.T) {
	d, err := openFile(context.Background(), testsrc20(t), Preprocess{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err = d.eachAhead(ctx, func(*picture, time.Duration, bool) error {
		if n++; n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 3 {
		t.Errorf("after cancelling at frame 3: %d frames, error %v", n, err)
	}
}

// pictureSum is the sum of a picture's pixel values.
func pictureSum(p *picture) float64 {
	if !p.luma {
		return p.mat.Sum().Val1
	}
	var s float64
	for _, v := range p.gray.Pix {
		s += float64(v)
	}
	return s
}
