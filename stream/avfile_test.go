//go:build !nocv

package stream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gocv.io/x/gocv"
)

// readAll reads every frame of r: the properties a decoder asks for at
// open, then each read's CAP_PROP_POS_MSEC and gray picture (nil for a
// read that returned no image).
type readAll struct {
	fps, count, w, h float64
	pos              []float64
	gray             [][]byte
}

func readThrough(t *testing.T, r videoReader) readAll {
	t.Helper()
	defer r.Close()
	out := readAll{fps: r.get(gocv.VideoCaptureFPS), count: r.get(gocv.VideoCaptureFrameCount),
		w: r.get(gocv.VideoCaptureFrameWidth), h: r.get(gocv.VideoCaptureFrameHeight)}
	pic := newPicture()
	defer pic.close()
	for n := 0; n < 5000 && r.read(pic); n++ {
		out.pos = append(out.pos, r.get(gocv.VideoCapturePosMsec))
		if pic.empty() {
			out.gray = append(out.gray, nil)
			continue
		}
		f, err := pic.apply(Preprocess{Gray: true})
		if err != nil {
			t.Fatal(err)
		}
		out.gray = append(out.gray, f.Gray.Pix)
	}
	return out
}

// The native reader gives what OpenCV's FFmpeg backend gives, on files
// with B-frames, variable and offset timestamps, full-range JPEG pictures,
// gray, 4:4:4 and NV12 pictures, a truncated file, and the dev set's real
// recordings: the same declared rate, frame count and size, the same
// number of frames at the same CAP_PROP_POS_MSEC, and luma within two gray
// levels of OpenCV's BGR-to-gray on colourless pictures. Files it must
// leave to OpenCV (rotated, RGB, 10-bit) say so.
func TestAVFileMatchesOpenCV(t *testing.T) {
	gray := []string{"-f", "lavfi", "-i", "testsrc2=size=96x64:rate=20", "-t", "3", "-vf", "hue=s=0"}
	type clip struct {
		name       string
		args       []string
		colourless bool
		truncate   bool
	}
	clips := []clip{
		{"bframes.mp4", append(gray[:len(gray):len(gray)], "-c:v", "libx264", "-pix_fmt", "yuv420p"), true, false},
		{"offset.mp4", append(gray[:len(gray):len(gray)], "-c:v", "libx264", "-pix_fmt", "yuv420p", "-output_ts_offset", "1.37"), true, false},
		{"vfr.mkv", append(gray[:len(gray):len(gray)], "-vf", "hue=s=0,setpts='N/20/TB+0.013*sin(N)/TB'", "-vsync", "vfr", "-c:v", "libx264", "-pix_fmt", "yuv420p"), true, false},
		{"vp8.webm", append(gray[:len(gray):len(gray)], "-c:v", "libvpx", "-b:v", "300k"), true, false},
		{"mjpeg.avi", append(gray[:len(gray):len(gray)], "-c:v", "mjpeg", "-pix_fmt", "yuvj420p"), true, false},
		{"gray.mkv", append(gray[:len(gray):len(gray)], "-c:v", "ffv1", "-pix_fmt", "gray"), true, false},
		{"yuv444.mp4", append(gray[:len(gray):len(gray)], "-c:v", "libx264", "-pix_fmt", "yuv444p"), true, false},
		{"nv12.nut", append(gray[:len(gray):len(gray)], "-c:v", "rawvideo", "-pix_fmt", "nv12"), true, false},
		{"fullrange.mp4", append(gray[:len(gray):len(gray)], "-c:v", "libx264", "-pix_fmt", "yuv420p", "-color_range", "pc"), true, false},
		{"colour.mp4", []string{"-f", "lavfi", "-i", "testsrc=size=64x48:rate=25", "-t", "2", "-c:v", "libx264", "-pix_fmt", "yuv420p"}, false, false},
		{"truncated.mp4", append(gray[:len(gray):len(gray)], "-c:v", "libx264", "-pix_fmt", "yuv420p", "-movflags", "+faststart"), true, true},
		{"truncated.mkv", append(gray[:len(gray):len(gray)], "-c:v", "libx264", "-pix_fmt", "yuv420p"), true, true},
	}
	var paths []string
	colourless := map[string]bool{}
	for _, c := range clips {
		p := makeVideo(t, c.name, c.args...)
		if c.truncate {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b[:len(b)*2/3], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		paths = append(paths, p)
		colourless[p] = c.colourless
	}
	if real, _ := filepath.Glob("../../shared/realvid/*.mp4"); len(real) > 0 {
		paths = append(paths, real...)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			f, err := openAVFile(p)
			if err != nil {
				t.Fatalf("native: %v", err)
			}
			c, err := openCapture(captureSpec{uri: p, api: capAPIFFmpeg})
			if err != nil {
				t.Fatalf("OpenCV: %v", err)
			}
			got, want := readThrough(t, f), readThrough(t, c)
			if got.fps != want.fps || got.count != want.count || got.w != want.w || got.h != want.h {
				t.Errorf("fps, count, w, h: native %v %v %v %v, OpenCV %v %v %v %v", got.fps, got.count, got.w, got.h, want.fps, want.count, want.w, want.h)
			}
			if len(got.pos) != len(want.pos) {
				t.Fatalf("native read %d frames, OpenCV %d", len(got.pos), len(want.pos))
			}
			var worst, sum float64
			var n int
			lost := 0
			for i := range got.pos {
				// OpenCV loses the times of the pictures drained at the
				// end (see physd_file_grab); they must be the last ones.
				if want.pos[i] == 0 && i > 0 && (lost > 0 || len(got.pos)-i <= 4) {
					lost++
					if !(got.pos[i] > got.pos[i-1]) {
						t.Errorf("frame %d at %v ms natively, after %v ms", i, got.pos[i], got.pos[i-1])
					}
				} else if got.pos[i] != want.pos[i] {
					t.Fatalf("frame %d at %v ms natively, %v ms through OpenCV", i, got.pos[i], want.pos[i])
				}
				if (got.gray[i] == nil) != (want.gray[i] == nil) || len(got.gray[i]) != len(want.gray[i]) {
					t.Fatalf("frame %d: native picture %d bytes, OpenCV's %d", i, len(got.gray[i]), len(want.gray[i]))
				}
				for j, v := range got.gray[i] {
					d := math.Abs(float64(v) - float64(want.gray[i][j]))
					worst, sum, n = max(worst, d), sum+d, n+1
				}
			}
			t.Logf("%d frames (%d at the end without a time through OpenCV); luma vs OpenCV's gray: max |Δ| %.0f, mean %.3f levels", len(got.pos), lost, worst, sum/float64(max(n, 1)))
			if colourless[p] && worst > 2 {
				t.Errorf("luma differs from OpenCV's gray by up to %.0f levels on colourless pictures", worst)
			}
		})
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"rotated.mp4", append(gray[:len(gray):len(gray)], "-c:v", "libx264", "-pix_fmt", "yuv420p")},
		{"rgb.mkv", append(gray[:len(gray):len(gray)], "-c:v", "ffv1", "-pix_fmt", "bgr0")},
		{"10bit.mkv", append(gray[:len(gray):len(gray)], "-c:v", "ffv1", "-pix_fmt", "yuv420p10le")},
	} {
		p := makeVideo(t, c.name, c.args...)
		w := 96
		if c.name == "rotated.mp4" {
			rotateMP4(t, p)
			w = 64 // OpenCV turns the pictures upright
		}
		if f, err := openAVFile(p); !errors.Is(err, errNeedsOpenCV) {
			if f != nil {
				f.Close()
			}
			t.Errorf("%s: native open: %v, want errNeedsOpenCV", c.name, err)
		}
		frames, _, err := ReadFile(t.Context(), p, FileOptions{Preprocess: Preprocess{Gray: true}})
		if err != nil {
			t.Errorf("%s through OpenCV: %v", c.name, err)
		} else if len(frames) != 60 || frames[0].W != w {
			t.Errorf("%s through OpenCV: %d frames %d wide, want 60 frames %d wide", c.name, len(frames), frames[0].W, w)
		}
	}
}

// rotateMP4 sets the display matrix of path's first track (its tkhd box)
// to a quarter turn, as a phone held upright records it.
func rotateMP4(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("tkhd"))
	if i < 0 || b[i+4] != 0 || i+44+36 > len(b) {
		t.Fatalf("%s: no version-0 tkhd box", path)
	}
	m := b[i+44 : i+44+36] // a b u c d v x y w, 32 bits each
	for k, v := range []uint32{0, 0x10000, 0, 0xffff0000, 0, 0, 0, 0, 0x40000000} {
		binary.BigEndian.PutUint32(m[4*k:], v)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
