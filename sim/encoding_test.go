package sim

import (
	"bytes"
	"context"
	"errors"
	"image"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestFFmpegArgsUnchanged pins the arguments of the zero-GOP H.264
// encoding to those WriteMP4 has always used, so that existing clips are
// re-encoded byte for byte.
func TestFFmpegArgsUnchanged(t *testing.T) {
	want := func(quality ...string) []string {
		return append(append([]string{"-hide_banner", "-nostdin", "-nostats", "-loglevel", "error", "-y",
			"-threads", "1", "-filter_threads", "1",
			"-f", "rawvideo", "-pix_fmt", "gray", "-s", "64x48", "-r", "25/2", "-i", "-",
			"-sws_flags", "bicubic+accurate_rnd+full_chroma_int+bitexact",
			"-c:v", "libx264", "-preset", "medium"}, quality...),
			"-pix_fmt", "yuv420p", "-threads", "1", "-x264-params", "threads=1:lookahead-threads=1:sliced-threads=0",
			"-r", "25/2", "-flags:v", "+bitexact", "-fflags", "+bitexact", "-map_metadata", "-1",
			"-movflags", "+faststart", "-f", "mp4", "file:o.mp4")
	}
	for _, tc := range []struct {
		got, want []string
	}{
		{FFmpegArgs("o.mp4", 64, 48, 12.5, 0), want("-qp", "0")},
		{FFmpegArgs("o.mp4", 64, 48, 12.5, -3), want("-qp", "0")},
		{FFmpegArgs("o.mp4", 64, 48, 12.5, 23), want("-crf", "23")},
		{Encoding{Codec: CodecH264, CRF: 23}.FFmpegArgs("o.mp4", 64, 48, 12.5), want("-crf", "23")},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("args\n%q\nwant\n%q", tc.got, tc.want)
		}
	}
	got := strings.Join(Encoding{CRF: 30, GOP: 30}.FFmpegArgs("o.mp4", 64, 48, 30), " ")
	if !strings.Contains(got, "-crf 30") || !strings.Contains(got, "-g 30 -keyint_min 30 -sc_threshold 0") {
		t.Errorf("h264 GOP 30: %s", got)
	}
	got = strings.Join(Encoding{Codec: CodecH265, CRF: 30, GOP: 60}.FFmpegArgs("o.mp4", 64, 48, 30), " ")
	if !strings.Contains(got, "-c:v libx265") || !strings.Contains(got, "-crf 30") ||
		!strings.Contains(got, "keyint=60:min-keyint=60:scenecut=0:open-gop=0") || strings.Contains(got, "lossless") {
		t.Errorf("h265 GOP 60: %s", got)
	}
	if got = strings.Join(Encoding{Codec: CodecH265}.FFmpegArgs("o.mp4", 64, 48, 30), " "); !strings.Contains(got, "lossless=1") || strings.Contains(got, "-crf") || strings.Contains(got, "keyint") {
		t.Errorf("h265 lossless: %s", got)
	}
}

func TestEncodingValidate(t *testing.T) {
	for _, e := range []Encoding{{}, {Codec: CodecH265, CRF: 51, GOP: 1}, {CRF: -1}} {
		if err := e.Validate(); err != nil {
			t.Errorf("%+v: %v", e, err)
		}
	}
	for field, e := range map[string]Encoding{
		"Codec": {Codec: "vp9"},
		"CRF":   {CRF: 52},
		"GOP":   {GOP: -1},
	} {
		err := e.Validate()
		if !errors.Is(err, ErrInvalidEncoding) || !strings.Contains(err.Error(), "Encoding."+field+" ") {
			t.Errorf("%s: %v", field, err)
		}
		g := image.NewGray(image.Rect(0, 0, 16, 16))
		if err := WriteVideo(context.Background(), filepath.Join(t.TempDir(), "x.mp4"), []*image.Gray{g, g, g}, 10, e); !errors.Is(err, ErrInvalidEncoding) {
			t.Errorf("WriteVideo with bad %s: %v", field, err)
		}
	}
}

// keyFrames returns the display indices of the key frames of a video and
// the number of frames, from ffprobe.
func keyFrames(t *testing.T, path string) (keys []int, n int) {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-show_frames", "-select_streams", "v",
		"-show_entries", "frame=pict_type,key_frame", "-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// A frame is "key_frame,pict_type[,side data…]"; side data may
		// also add empty lines.
		f := strings.Split(line, ",")
		if len(f) < 2 || f[0] != "0" && f[0] != "1" {
			continue
		}
		if f[0] == "1" {
			if f[1] != "I" {
				t.Errorf("%s: key frame %d has type %q", path, n, f[1])
			}
			keys = append(keys, n)
		}
		n++
	}
	return keys, n
}

func needEncoder(t *testing.T, name string) {
	t.Helper()
	needFFmpeg(t)
	if !hasEncoder(context.Background(), "ffmpeg", name) {
		t.Skipf("ffmpeg has no %s", name)
	}
}

// TestWriteVideoGOP: with GOP 30 the key frames are exactly frames 0, 30,
// 60, … in both codecs; with GOP 0 a short still clip has one.
func TestWriteVideoGOP(t *testing.T) {
	needFFmpeg(t)
	ctx := context.Background()
	frames, _, err := RenderStructure(ctx, Structure{W: 64, H: 48, Duration: 4, Modes: []Mode{{Fn: 2, Zeta: 0.01, AmplitudePx: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		enc  Encoding
		want []int
	}{
		{Encoding{CRF: 30, GOP: 30}, []int{0, 30, 60, 90}},
		{Encoding{CRF: 30, GOP: 45}, []int{0, 45, 90}},
		{Encoding{CRF: 30}, []int{0}},
		{Encoding{Codec: CodecH265, CRF: 30, GOP: 30}, []int{0, 30, 60, 90}},
		{Encoding{Codec: CodecH265, CRF: 30}, []int{0}},
	} {
		if tc.enc.Codec == CodecH265 && !hasEncoder(ctx, "ffmpeg", "libx265") {
			t.Log("ffmpeg has no libx265; H.265 skipped")
			continue
		}
		path := filepath.Join(dir, "gop.mp4")
		if err := WriteVideo(ctx, path, frames, 30, tc.enc); err != nil {
			t.Fatal(err)
		}
		keys, n := keyFrames(t, path)
		if n != len(frames) || !reflect.DeepEqual(keys, tc.want) {
			t.Errorf("%+v: key frames %v of %d, want %v of %d", tc.enc, keys, n, tc.want, len(frames))
		}
	}
}

// TestWriteVideoH265 writes an odd-sized clip as H.265: padded to even
// size, hevc, deterministic, and close to the frames when lossless.
func TestWriteVideoH265(t *testing.T) {
	needEncoder(t, "libx265")
	ctx := context.Background()
	frames, _, err := RenderStructure(ctx, Structure{W: 33, H: 17, Object: ObjectCable, Duration: 1, Modes: []Mode{{Fn: 2, AmplitudePx: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.mp4"), filepath.Join(dir, "b.mp4")
	for _, p := range []string{a, b} {
		if err := WriteVideo(ctx, p, frames, 30, Encoding{Codec: CodecH265}); err != nil {
			t.Fatal(err)
		}
	}
	m := probe(t, a)
	if m["codec_name"] != "hevc" || m["width"] != "34" || m["height"] != "18" || m["nb_read_frames"] != "30" || m["pix_fmt"] != "yuv420p" {
		t.Errorf("ffprobe: %v, want hevc 34×18 yuv420p, 30 frames", m)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ab, bb) {
		t.Error("encoding the same frames twice as H.265 gave different files")
	}
	dec := decodeGray(t, a, 34, 18)
	worst := 0.0
	for k := range frames {
		sum := 0.0
		for y := 0; y < 17; y++ {
			for x := 0; x < 33; x++ {
				sum += math.Abs(float64(dec[k][y*34+x]) - float64(frames[k].Pix[y*33+x]))
			}
		}
		worst = math.Max(worst, sum/(33*17))
	}
	if worst > 1 {
		t.Errorf("lossless H.265 decodes %.2f gray levels from the frames on average", worst)
	}
}

// TestWriteVideoSizes: higher CRF gives smaller files for both codecs.
func TestWriteVideoSizes(t *testing.T) {
	needFFmpeg(t)
	ctx := context.Background()
	frames, _, err := RenderStructure(ctx, Structure{W: 96, H: 64, Duration: 2, Modes: []Mode{{Fn: 2, Zeta: 0.01, AmplitudePx: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, codec := range []Codec{CodecH264, CodecH265} {
		if codec == CodecH265 && !hasEncoder(ctx, "ffmpeg", "libx265") {
			continue
		}
		prev := int64(math.MaxInt64)
		for _, crf := range []int{0, 18, 30, 38} {
			p := filepath.Join(dir, "s.mp4")
			if err := WriteVideo(ctx, p, frames, 30, Encoding{Codec: codec, CRF: crf, GOP: 30}); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() >= prev {
				t.Errorf("%s crf %d: %d bytes, not below the previous %d", codec, crf, st.Size(), prev)
			}
			prev = st.Size()
		}
	}
}
