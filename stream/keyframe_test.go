package stream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media/h264reader"
	"github.com/pion/webrtc/v4/pkg/media/ivfreader"

	"github.com/physd/physd/sim"
)

// decClipSpec describes a test clip: a simulated pendulum encoded by the
// ffmpeg CLI, as a WebRTC sender would encode a camera.
type decClipSpec struct {
	mime    string   // webrtc.MimeTypeVP8, webrtc.MimeTypeH264 or webrtc.MimeTypeH265
	size    int      // sim frame side in pixels
	scale   string   // ffmpeg scale filter size "W:H", or "" for none
	seconds float64  // clip length at 20 fps
	gop     int      // key frame interval, exact (no scene-cut key frames)
	quality []string // encoder rate-control arguments
	x265    string   // extra libx265 parameters (H.265 only), e.g. "slices=4"
}

// decClip is an encoded test clip.
type decClip struct {
	src  []*image.Gray // the simulated frames that were encoded
	path string        // the encoded file (IVF or Annex-B)
	w, h int           // encoded picture size
	aus  [][]byte      // access units, as a WebRTC depacketiser delivers them
}

// decNeedFFmpeg returns the path of the named program (ffmpeg, ffprobe),
// or skips the test.
func decNeedFFmpeg(tb testing.TB, name string) string {
	tb.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		tb.Skipf("%s not installed", name)
	}
	return bin
}

// decRun runs a program with a timeout and returns its stdout.
func decRun(tb testing.TB, bin string, args ...string) []byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// decEncode renders spec's pendulum with the sim package, stores it as
// YUV4MPEG2 (full-range luma, unchanged gray levels) and encodes it with
// libvpx into IVF or with libx264 or libx265 into an Annex-B stream, in
// dir.
func decEncode(tb testing.TB, dir string, spec decClipSpec) decClip {
	tb.Helper()
	ffmpeg := decNeedFFmpeg(tb, "ffmpeg")
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	frames, _, err := sim.Render(context.Background(), sim.Scene{System: sim.SystemPendulum,
		Gamma1: g1, Gamma0: g0, Z0: 50, V0: 100, Duration: spec.seconds, FPS: 20, Size: spec.size, Seed: 1})
	if err != nil {
		tb.Fatal(err)
	}
	y4m := filepath.Join(dir, fmt.Sprintf("src%d.y4m", spec.size))
	if err := sim.WriteY4M(y4m, frames, 20); err != nil {
		tb.Fatal(err)
	}
	gop := strconv.Itoa(spec.gop)
	args := []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-y", "-i", "file:" + y4m}
	w, h := spec.size, spec.size
	if spec.scale != "" {
		args = append(args, "-vf", "scale="+spec.scale)
		if _, err := fmt.Sscanf(spec.scale, "%d:%d", &w, &h); err != nil {
			tb.Fatal(err)
		}
	}
	var out string
	switch spec.mime {
	case webrtc.MimeTypeVP8:
		// No alternate reference (invisible) frames, as in WebRTC: every
		// IVF frame is then one displayed picture.
		out = filepath.Join(dir, fmt.Sprintf("clip%dx%d.ivf", w, h))
		args = append(args, "-c:v", "libvpx", "-g", gop, "-keyint_min", gop,
			"-auto-alt-ref", "0", "-lag-in-frames", "0", "-threads", "1")
		args = append(append(args, spec.quality...), "-f", "ivf", "file:"+out)
	case webrtc.MimeTypeH264:
		// Constrained baseline with zerolatency (no B-frames, no lookahead)
		// is what browsers send; -sc_threshold 0 makes the key frame
		// spacing exact.
		out = filepath.Join(dir, fmt.Sprintf("clip%dx%d.h264", w, h))
		args = append(args, "-c:v", "libx264", "-preset", "medium", "-tune", "zerolatency",
			"-profile:v", "baseline", "-g", gop, "-keyint_min", gop, "-sc_threshold", "0", "-threads", "1")
		args = append(append(args, spec.quality...), "-bsf:v", "h264_mp4toannexb", "-f", "h264", "file:"+out)
	case webrtc.MimeTypeH265:
		// What an IP camera sends: no B-frames, a closed GOP of IDRs at an
		// exact spacing, and the VPS, SPS and PPS before every one.
		out = filepath.Join(dir, fmt.Sprintf("clip%dx%d.h265", w, h))
		params := "log-level=error:pools=1:frame-threads=1:bframes=0:scenecut=0:open-gop=0:repeat-headers=1:keyint=" +
			gop + ":min-keyint=" + gop
		if spec.x265 != "" {
			params += ":" + spec.x265
		}
		args = append(args, "-c:v", "libx265", "-preset", "medium", "-x265-params", params)
		args = append(append(args, spec.quality...), "-f", "hevc", "file:"+out)
	default:
		tb.Fatalf("mime %q", spec.mime)
	}
	decRun(tb, ffmpeg, args...)
	data, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	var aus [][]byte
	switch spec.mime {
	case webrtc.MimeTypeVP8:
		aus = decReadIVF(tb, data)
	case webrtc.MimeTypeH264:
		aus = decReadAnnexB(tb, data)
	default:
		aus = decReadH265(data)
	}
	return decClip{src: frames, path: out, w: w, h: h, aus: aus}
}

// decReadIVF returns the frames of an IVF file, read with pion's reader.
func decReadIVF(tb testing.TB, data []byte) [][]byte {
	tb.Helper()
	r, _, err := ivfreader.NewWith(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	var aus [][]byte
	for {
		frame, _, err := r.ParseNextFrame()
		if errors.Is(err, io.EOF) {
			return aus
		}
		if err != nil {
			tb.Fatal(err)
		}
		aus = append(aus, frame)
	}
}

// decReadAnnexB splits an H.264 Annex-B stream into NAL units with pion's
// reader and groups them into access units, each NAL behind a 4-byte start
// code as pion's H264Packet depacketiser emits them. A new access unit
// starts at an AUD, SPS, PPS or SEI following a slice, or at a slice with
// first_mb_in_slice == 0 (its ue(v) code is the single bit 1) following a
// slice: enough for x264's pictures, of one slice or several.
func decReadAnnexB(tb testing.TB, data []byte) [][]byte {
	tb.Helper()
	r, err := h264reader.NewReaderWithOptions(bytes.NewReader(data), h264reader.WithIncludeSEI(true))
	if err != nil {
		tb.Fatal(err)
	}
	var (
		aus      [][]byte
		cur      []byte
		hasSlice bool
	)
	for {
		nal, err := r.NextNAL()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		var starts bool
		switch t := nal.UnitType; t {
		case h264reader.NalUnitTypeCodedSliceNonIdr, h264reader.NalUnitTypeCodedSliceIdr:
			starts = len(nal.Data) > 1 && nal.Data[1]&0x80 != 0
		case h264reader.NalUnitTypeAUD, h264reader.NalUnitTypeSPS, h264reader.NalUnitTypePPS, h264reader.NalUnitTypeSEI:
			starts = true
		}
		if starts && hasSlice {
			aus = append(aus, cur)
			cur, hasSlice = nil, false
		}
		cur = append(append(cur, 0, 0, 0, 1), nal.Data...)
		if t := nal.UnitType; t == h264reader.NalUnitTypeCodedSliceNonIdr || t == h264reader.NalUnitTypeCodedSliceIdr {
			hasSlice = true
		}
	}
	if hasSlice {
		aus = append(aus, cur)
	}
	return aus
}

// decReadH265 groups an H.265 Annex-B stream's NAL units into access
// units, each NAL behind a 4-byte start code as pion's H265Depacketizer
// emits them. A new access unit starts at a VPS, SPS, PPS, AUD or prefix
// SEI following a slice, or at a slice with first_slice_segment_in_pic_flag
// (the first bit after the two-byte NAL header) following a slice: enough
// for x265's pictures, of one slice or several.
func decReadH265(data []byte) [][]byte {
	var (
		aus      [][]byte
		cur      []byte
		hasSlice bool
	)
	forEachNAL(data, func(nal []byte) bool {
		t := h265Type(nal)
		slice := t < 32
		var starts bool
		switch {
		case slice:
			starts = len(nal) > 2 && nal[2]&0x80 != 0
		case t == h265VPS, t == h265SPS, t == h265PPS, t == h265AUD, t == h265PrefixSEI:
			starts = true
		}
		if starts && hasSlice {
			aus = append(aus, cur)
			cur, hasSlice = nil, false
		}
		cur = append(append(cur, 0, 0, 0, 1), nal...)
		hasSlice = hasSlice || slice
		return true
	})
	if hasSlice {
		aus = append(aus, cur)
	}
	return aus
}

// decProbeKeys returns ffprobe's key flag of each packet of a file, as
// ffmpeg's own parsers (vp8, h264) set it.
func decProbeKeys(tb testing.TB, path string) []bool {
	tb.Helper()
	out := decRun(tb, decNeedFFmpeg(tb, "ffprobe"), "-v", "error", "-select_streams", "v:0",
		"-show_entries", "packet=flags", "-of", "csv=p=0", "file:"+path)
	var keys []bool
	for _, line := range strings.Fields(string(out)) {
		keys = append(keys, strings.HasPrefix(line, "K"))
	}
	return keys
}

func TestIsKeyFrameMatchesFFprobe(t *testing.T) {
	const gop = 10
	for _, mime := range []string{webrtc.MimeTypeVP8, webrtc.MimeTypeH264, webrtc.MimeTypeH265} {
		t.Run(mime, func(t *testing.T) {
			c := decEncode(t, t.TempDir(), decClipSpec{mime: mime, size: 64, seconds: 3, gop: gop})
			keys := decProbeKeys(t, c.path)
			if len(c.aus) != 60 || len(keys) != len(c.aus) {
				t.Fatalf("%d access units, ffprobe counts %d packets, want 60", len(c.aus), len(keys))
			}
			for i, au := range c.aus {
				got := isKeyFrame(mime, au)
				if got != keys[i] || got != (i%gop == 0) {
					t.Errorf("frame %d: isKeyFrame %v, ffprobe key %v, want key every %d frames", i, got, keys[i], gop)
				}
				if codec, _ := parseVideoMime(mime); codec.paramSets() > 0 {
					// Pion's depacketiser emits the parameter sets as
					// access units of their own when they arrive in
					// separate packets: they must not count.
					forEachNAL(au, func(nal []byte) bool {
						if codec.paramSet(nal) >= 0 && isKeyFrame(mime, append([]byte{0, 0, 0, 1}, nal...)) {
							t.Errorf("frame %d: parameter set % x alone counts as key frame", i, nal[:2])
						}
						return true
					})
				}
			}
			// Upper-case MIME types from SDP are the same codec.
			if !isKeyFrame(strings.ToUpper(mime), c.aus[0]) {
				t.Error("upper-case MIME type not recognised")
			}
			if isKeyFrame("video/VP9", c.aus[0]) {
				t.Error("key frame of an unsupported codec")
			}
		})
	}
}

func TestIsKeyFrameMalformed(t *testing.T) {
	vp8Key := []byte{0x50, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x40, 0x00, 0x40, 0x00}
	idr := []byte{0x65, 0x88, 0x84}
	for _, tc := range []struct {
		mime string
		au   []byte
		want bool
	}{
		{webrtc.MimeTypeVP8, vp8Key, true},
		{webrtc.MimeTypeVP8, nil, false},
		{webrtc.MimeTypeVP8, vp8Key[:9], false},                                              // too short for the key frame header
		{webrtc.MimeTypeVP8, append([]byte{0x51}, vp8Key[1:]...), false},                     // inter frame bit
		{webrtc.MimeTypeVP8, append(bytes.Clone(vp8Key[:5]), 0x2b, 0x40, 0, 0x40, 0), false}, // bad start code
		{webrtc.MimeTypeH264, append([]byte{0, 0, 0, 1}, idr...), true},
		{webrtc.MimeTypeH264, append([]byte{0, 0, 1}, idr...), true},
		{webrtc.MimeTypeH264, []byte{0, 0, 0, 1, 0x67, 0x42, 0, 0, 0, 1, 0x68, 0xce, 0, 0, 1, 0x65, 0x88}, true},
		{webrtc.MimeTypeH264, []byte{0, 0, 0, 1, 0x67, 0x42, 0xc0, 0x1e, 0, 0, 0, 1, 0x68, 0xce}, false}, // SPS+PPS only
		{webrtc.MimeTypeH264, []byte{0, 0, 0, 1, 0x41, 0x9a, 0x02}, false},                               // non-IDR slice
		{webrtc.MimeTypeH264, idr, false},                                                                // no start code (AVC form)
		{webrtc.MimeTypeH264, []byte{0, 0, 0, 4, 0x65, 0x88, 0x84, 0}, false},                            // length-prefixed
		{webrtc.MimeTypeH264, []byte{0, 0, 1, 0x65}, false},                                              // header byte only
		{webrtc.MimeTypeH264, []byte{0, 0, 1, 0xe5, 0x88}, false},                                        // forbidden_zero_bit
		{webrtc.MimeTypeH264, []byte{0, 0, 1}, false},
		{webrtc.MimeTypeH264, []byte{0, 0, 1, 0x65, 0x88, 0, 0, 0}, true}, // trailing zeros
		{webrtc.MimeTypeH264, nil, false},
		{"video/VP9", vp8Key, false},
		{"", idr, false},
	} {
		if got := isKeyFrame(tc.mime, tc.au); got != tc.want {
			t.Errorf("isKeyFrame(%q, % x) = %v, want %v", tc.mime, tc.au, got, tc.want)
		}
	}
}

func TestForEachNAL(t *testing.T) {
	in := []byte{9, 0, 0, 0, 1, 0x67, 1, 0, 0, 1, 0x68, 0, 0, 0, 0, 1, 0x65, 0, 3, 0, 0, 0}
	var got [][]byte
	forEachNAL(in, func(nal []byte) bool {
		got = append(got, nal)
		return true
	})
	want := [][]byte{{0x67, 1}, {0x68}, {0x65, 0, 3}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("NALs %v, want %v", got, want)
	}
	n := 0
	forEachNAL(in, func([]byte) bool { n++; return false })
	if n != 1 {
		t.Errorf("fn called %d times after returning false, want 1", n)
	}
}

func TestNewVideoDecoderMime(t *testing.T) {
	for _, mime := range []string{"video/VP9", "video/AV1", "video/H266", "audio/opus", "", "VP8"} {
		d, err := newVideoDecoder(mime)
		if !errors.Is(err, ErrUnsupportedCodec) || d != nil {
			t.Errorf("newVideoDecoder(%q) = %v, %v, want ErrUnsupportedCodec", mime, d, err)
		}
	}
	for _, mime := range []string{webrtc.MimeTypeVP8, webrtc.MimeTypeH264, webrtc.MimeTypeH265, "video/vp8", "VIDEO/H264", "video/h265"} {
		d, err := newVideoDecoder(mime)
		if !haveOpenCV {
			if !errors.Is(err, ErrNoOpenCV) || d != nil {
				t.Errorf("nocv: newVideoDecoder(%q) = %v, %v, want ErrNoOpenCV", mime, d, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("newVideoDecoder(%q): %v", mime, err)
			continue
		}
		d.close()
	}
}
