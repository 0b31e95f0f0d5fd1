//go:build !nocv

package stream

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"image"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v5"
	"github.com/bluenviron/gortsplib/v5/pkg/description"
	"github.com/bluenviron/gortsplib/v5/pkg/format"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"

	"github.com/physd/physd/internal/rtspserver"
)

// rtpClip is an H.264 or H.265 stream encoded by ffmpeg: its access units
// (NAL units without start codes) and the pictures ffmpeg decodes from it.
type rtpClip struct {
	mime string // webrtc.MimeTypeH264 or webrtc.MimeTypeH265
	aus  [][][]byte
	refs []*image.Gray
}

// encodeClip encodes n frames of ffmpeg's testsrc2 pattern at w×h, 20 fps,
// with libx264 or libx265 (mime), without B-frames, an access unit
// delimiter before every picture, a key frame every gop frames with
// in-band parameter sets, and decodes them back with ffmpeg as the
// reference.
func encodeClip(t *testing.T, mime string, w, h, n, gop int) rtpClip {
	t.Helper()
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg not installed")
	}
	dir := t.TempDir()
	es := filepath.Join(dir, "clip.es")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"-hide_banner", "-nostdin", "-loglevel", "error", "-y"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg %v: %v\n%s", args, err, out)
		}
	}
	args := []string{"-f", "lavfi", "-i", fmt.Sprintf("testsrc2=size=%dx%d:rate=20", w, h), "-frames:v", fmt.Sprint(n), "-pix_fmt", "yuv420p"}
	codec := codecH264
	switch mime {
	case webrtc.MimeTypeH264:
		args = append(args, "-c:v", "libx264", "-preset", "veryfast", "-bf", "0", "-g", fmt.Sprint(gop),
			"-x264-params", "aud=1:repeat-headers=1:threads=1", "-f", "h264")
	case webrtc.MimeTypeH265:
		codec = codecH265
		args = append(args, "-c:v", "libx265", "-preset", "veryfast", "-x265-params",
			fmt.Sprintf("log-level=error:pools=1:frame-threads=1:aud=1:repeat-headers=1:bframes=0:open-gop=0:scenecut=0:keyint=%d:min-keyint=%d", gop, gop),
			"-f", "hevc")
	default:
		t.Fatalf("mime %q", mime)
	}
	run(append(args, "file:"+es)...)
	raw := filepath.Join(dir, "clip.gray")
	run("-i", "file:"+es, "-f", "rawvideo", "-pix_fmt", "gray", "file:"+raw)

	b, err := os.ReadFile(es)
	if err != nil {
		t.Fatal(err)
	}
	c := rtpClip{mime: mime}
	forEachNAL(b, func(nal []byte) bool {
		if aud := codec == codecH264 && nal[0]&0x1f == 9 || codec == codecH265 && h265Type(nal) == h265AUD; aud {
			c.aus = append(c.aus, nil) // a new access unit
		} else if len(c.aus) > 0 {
			c.aus[len(c.aus)-1] = append(c.aus[len(c.aus)-1], nal)
		}
		return true
	})
	pix, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off+w*h <= len(pix); off += w * h {
		c.refs = append(c.refs, &image.Gray{Pix: pix[off : off+w*h], Stride: w, Rect: image.Rect(0, 0, w, h)})
	}
	if len(c.aus) != n || len(c.refs) != n {
		t.Fatalf("ffmpeg made %d access units and %d pictures, want %d", len(c.aus), len(c.refs), n)
	}
	return c
}

// sdpFormat returns the RTSP format of clip, with the first access unit's
// parameter sets.
func (c rtpClip) sdpFormat() format.Format {
	codec, _ := parseVideoMime(c.mime)
	var ps [3][]byte
	for _, nal := range c.aus[0] {
		if k := codec.paramSet(nal); k >= 0 {
			ps[k] = nal
		}
	}
	if codec == codecH265 {
		return &format.H265{PayloadTyp: 96, VPS: ps[0], SPS: ps[1], PPS: ps[2]}
	}
	return &format.H264{PayloadTyp: 96, PacketizationMode: 1, SPS: ps[0], PPS: ps[1]}
}

// publishAUs publishes clip's access units to path "cam" of srv as an RTSP
// publisher (ANNOUNCE, RECORD) once a reader plays it, frame i at RTP time
// i × 50 ms, 10 ms of wall time apart. mangle, if set, may replace each
// access unit before it is packetised, as a faulty camera would. The SDP
// carries the first access unit's parameter sets. It returns when every
// packet is sent.
func publishAUs(ctx context.Context, t *testing.T, srv *rtspserver.Server, clip rtpClip, mangle func(frame int, au [][]byte) [][]byte) error {
	return publishPackets(ctx, srv, clip, mangle, nil)
}

// publishPackets is publishAUs, with mangleRTP, if set, altering or
// dropping each frame's RTP packets as a broken sender or network would:
// the packets it returns are sent.
func publishPackets(ctx context.Context, srv *rtspserver.Server, clip rtpClip, mangle func(frame int, au [][]byte) [][]byte, mangleRTP func(frame int, pkts []*rtp.Packet) []*rtp.Packet) error {
	forma := clip.sdpFormat()
	desc := &description.Session{Medias: []*description.Media{{Type: description.MediaTypeVideo, Formats: []format.Format{forma}}}}
	proto := gortsplib.ProtocolTCP
	// The publisher is the test's own; it trusts the test server's
	// certificate whatever it is.
	pub := &gortsplib.Client{Protocol: &proto, TLSConfig: &tls.Config{InsecureSkipVerify: true}}
	if err := pub.StartRecording(srv.URL("cam"), desc); err != nil {
		return fmt.Errorf("publisher: %w", err)
	}
	defer pub.Close()
	var encode func([][]byte) ([]*rtp.Packet, error)
	switch f := forma.(type) {
	case *format.H264:
		enc, err := f.CreateEncoder()
		if err != nil {
			return err
		}
		encode = enc.Encode
	case *format.H265:
		enc, err := f.CreateEncoder()
		if err != nil {
			return err
		}
		encode = enc.Encode
	}
	for len(srv.ReaderTransports()) == 0 { // wait for the reader's PLAY
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for i, au := range clip.aus {
		if mangle != nil {
			au = mangle(i, au)
		}
		pkts, err := encode(au)
		if err != nil {
			return err
		}
		if mangleRTP != nil {
			pkts = mangleRTP(i, pkts)
		}
		for _, p := range pkts {
			p.Timestamp = uint32(1e6 + i*4500)
			if err := pub.WritePacketRTP(desc.Medias[0], p); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// readRTSP runs src until it has emitted want frames or stops, and
// returns the frames and Run's error (nil when it was stopped after want
// frames).
func readRTSP(ctx context.Context, src *RTSPSource, want int) ([]Frame, error) {
	enough := errors.New("enough")
	var got []Frame
	err := src.Run(ctx, func(f Frame) error {
		got = append(got, f)
		if len(got) == want {
			return enough
		}
		return nil
	})
	if err == enough {
		err = nil
	}
	return got, err
}

// checkAgainst checks that frame f is clip picture Time/50 ms, preprocessed.
func checkAgainst(t *testing.T, f Frame, pre Preprocess, refs []*image.Gray) int {
	t.Helper()
	i := int(math.Round(f.Time.Seconds() * 20))
	if i < 0 || i >= len(refs) {
		t.Fatalf("frame Seq %d at Time %v: no clip picture %d", f.Seq, f.Time, i)
	}
	ref, err := pre.ApplyGray(refs[i])
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for k, v := range f.Pix {
		worst = math.Max(worst, math.Abs(v-ref.Pix[k]))
	}
	if worst > 0.03 {
		t.Errorf("frame Seq %d at Time %v differs from clip picture %d by %.3f", f.Seq, f.Time, i, worst)
	}
	return i
}

// rtpMimes are the codecs the native RTSP client decodes from NAL units.
var rtpMimes = []string{webrtc.MimeTypeH264, webrtc.MimeTypeH265}

// TestRTSPResolutionChange: a camera switches from 64×48 to 96×64 in the
// middle of a session, sending the new parameter sets in-band. Every frame
// comes through at its own size, 50 ms apart, as the pictures it was.
func TestRTSPResolutionChange(t *testing.T) {
	for _, mime := range rtpMimes {
		t.Run(mime, func(t *testing.T) { testRTSPResolutionChange(t, mime) })
	}
}

func testRTSPResolutionChange(t *testing.T, mime string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	small, large := encodeClip(t, mime, 64, 48, 20, 10), encodeClip(t, mime, 96, 64, 20, 10)
	clip := rtpClip{mime: mime, aus: append(append([][][]byte{}, small.aus...), large.aus...)}
	refs := append(append([]*image.Gray{}, small.refs...), large.refs...)
	aus := clip.aus
	srv, err := rtspserver.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pubErr := make(chan error, 1)
	go func() { pubErr <- publishAUs(ctx, t, srv, clip, nil) }()
	if err := srv.WaitPublished(ctx, "cam"); err != nil {
		t.Fatal(err)
	}
	pre := Preprocess{Size: 32}
	src, err := NewRTSPSource(srv.URL("cam"), RTSPOptions{Preprocess: pre, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got, err := readRTSP(ctx, src, len(aus))
	if perr := <-pubErr; perr != nil {
		t.Fatal(perr)
	}
	t.Logf("%d frames of %d, then %v; decode errors %d", len(got), len(aus), err, src.DecodeErrors())
	// The jitter buffer releases a frame when the next one begins, so the
	// last frame before the publisher leaves never comes out.
	if len(got) != len(aus)-1 {
		t.Fatalf("got %d frames, want all %d but the last", len(got), len(aus))
	}
	for i, f := range got {
		wantW, wantH := 64, 48
		if i >= len(small.aus) {
			wantW, wantH = 96, 64
		}
		// About 32² pixels with the source's aspect ratio: 37×28, then 39×26.
		outW, outH := pre.OutputSize(wantW, wantH)
		if f.SrcW != wantW || f.SrcH != wantH || f.W != outW || f.H != outH {
			t.Errorf("frame %d: source %dx%d preprocessed %dx%d, want source %dx%d preprocessed %dx%d", i, f.SrcW, f.SrcH, f.W, f.H, wantW, wantH, outW, outH)
		}
		if f.Seq != i || f.Time != time.Duration(i)*50*time.Millisecond {
			t.Errorf("frame %d: Seq %d Time %v, want Seq %d Time %v", i, f.Seq, f.Time, i, time.Duration(i)*50*time.Millisecond)
		}
		checkAgainst(t, f, pre, refs)
	}
	if n := src.DecodeErrors(); n != 0 {
		t.Errorf("DecodeErrors = %d, want 0", n)
	}
}

// TestRTSPCorruptFrames: a camera damages an inter frame (15) and a key
// frame (30), and sends one frame (45) whose RTP payload does not
// depacketise (H.264: an unknown NAL type; H.265: an aggregation packet
// too short to hold a unit). H.264 damages them in well-formed RTP, the
// inter frame cut short and the key frame with garbage in its second
// half, which the decoder rejects. H.265 loses RTP packets instead, the
// inter frame's last and one inside the key frame: libavcodec 5.1's H.265
// decoder does not see a slice cut short or garbled inside its data
// (TestVideoDecoderTruncated), so for H.265 it is the jitter buffer that
// sees the damage. No damaged picture comes out, the frames that depend
// on the damaged ones are skipped (a jump in Seq marks the gap), decoding
// resumes at the next key frame, and every frame the decoder rejects is
// counted.
func TestRTSPCorruptFrames(t *testing.T) {
	for _, mime := range rtpMimes {
		t.Run(mime, func(t *testing.T) { testRTSPCorruptFrames(t, mime) })
	}
}

func testRTSPCorruptFrames(t *testing.T, mime string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	clip := encodeClip(t, mime, 96, 64, 60, 10)
	codec, _ := parseVideoMime(mime)
	bad := map[int]bool{15: true, 30: true} // an inter frame, a key frame
	var garble func(frame int, au [][]byte) [][]byte
	if codec == codecH264 {
		garble = func(frame int, au [][]byte) [][]byte {
			if !bad[frame] {
				return au
			}
			out := make([][]byte, len(au))
			for k, nal := range au {
				nal = bytes.Clone(nal)
				if typ := nal[0] & 0x1f; typ == 1 {
					nal = nal[:len(nal)/2]
				} else if typ == 5 {
					copy(nal[len(nal)/2:], bytes.Repeat([]byte{0xff, 0x00, 0x5a}, len(nal)))
				}
				out[k] = nal
			}
			return out
		}
	}
	srv, err := rtspserver.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pubErr := make(chan error, 1)
	const badRTP = 45
	wantDecodeErrors := len(bad) + 1
	if codec == codecH265 {
		wantDecodeErrors = 1 // the losses count as lost frames
	}
	breakRTP := func(frame int, pkts []*rtp.Packet) []*rtp.Packet {
		switch {
		case frame == badRTP && codec == codecH265:
			pkts[0].Payload = []byte{48 << 1, 1, 0} // an aggregation packet's header, no unit
		case frame == badRTP:
			pkts[0].Payload = append([]byte{pkts[0].Payload[0]&0xe0 | 30}, pkts[0].Payload[1:]...)
		case bad[frame] && codec == codecH265 && len(pkts) > 2:
			return append(pkts[:1:1], pkts[2:]...)
		case bad[frame] && codec == codecH265:
			return pkts[:len(pkts)-1]
		}
		return pkts
	}
	go func() { pubErr <- publishPackets(ctx, srv, clip, garble, breakRTP) }()
	if err := srv.WaitPublished(ctx, "cam"); err != nil {
		t.Fatal(err)
	}
	pre := Preprocess{Size: 32}
	src, err := NewRTSPSource(srv.URL("cam"), RTSPOptions{Preprocess: pre, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The publisher leaves after the last frame: Run then ends.
	got, err := readRTSP(ctx, src, len(clip.aus))
	if perr := <-pubErr; perr != nil {
		t.Fatal(perr)
	}
	var pics []int
	for _, f := range got {
		pics = append(pics, checkAgainst(t, f, pre, clip.refs))
	}
	t.Logf("Run: %v; decode errors %d; pictures %v", err, src.DecodeErrors(), pics)
	if n := src.DecodeErrors(); n != int64(wantDecodeErrors) {
		t.Errorf("DecodeErrors = %d, want %d", n, wantDecodeErrors)
	}
	// Every frame but the garbled ones up to their next key frame, in order,
	// and but the last, which the jitter buffer releases only when the next
	// frame begins.
	var want []int
	for i := range clip.aus {
		if !(i >= 15 && i < 20 || i >= 30 && i < 40 || i >= badRTP && i < 50) && i < len(clip.aus)-1 {
			want = append(want, i)
		}
	}
	if fmt.Sprint(pics) != fmt.Sprint(want) {
		t.Errorf("pictures %v, want %v", pics, want)
	}
	for k := 1; k < len(got); k++ {
		gap := pics[k] != pics[k-1]+1
		if jump := got[k].Seq != got[k-1].Seq+1; jump != gap {
			t.Errorf("Seq %d after %d at picture %d after %d: a jump must mark exactly the gaps", got[k].Seq, got[k-1].Seq, pics[k], pics[k-1])
		}
	}
}
