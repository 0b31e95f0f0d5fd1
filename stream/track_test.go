//go:build !nocv

package stream

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
	"github.com/pion/webrtc/v4"
)

// rtpOf packetizes access units at 20 fps as a WebRTC sender does (1200-byte
// packets, 90 kHz timestamps, marker on each frame's last packet).
func rtpOf(t *testing.T, mime string, aus [][]byte) (pkts []*rtp.Packet, frameOf []int) {
	t.Helper()
	var pay rtp.Payloader = &codecs.VP8Payloader{}
	if mime == webrtc.MimeTypeH264 {
		pay = &codecs.H264Payloader{}
	}
	p := rtp.NewPacketizer(1200, 96, 0x1234, pay, rtp.NewFixedSequencer(65000), 90000)
	for i, au := range aus {
		for _, pk := range p.Packetize(au, 4500) {
			pkts = append(pkts, pk)
			frameOf = append(frameOf, i)
		}
	}
	return pkts, frameOf
}

// TestTrackReaderLossReorderPLI plays a real encoded stream (key frame
// every 20 frames) through the reader with two packets swapped and one
// packet of frame 25 lost: the swap costs nothing; the loss drops frames
// 25–39 (no picture is decoded from a broken reference chain), asks for a
// key frame, jumps Seq so windows break, and resumes at the key frame 40.
// Frame times follow the RTP timestamps across the sequence number wrap.
func TestTrackReaderLossReorderPLI(t *testing.T) {
	for _, mime := range []string{webrtc.MimeTypeVP8, webrtc.MimeTypeH264} {
		t.Run(mime, func(t *testing.T) {
			c := decEncode(t, t.TempDir(), decClipSpec{mime: mime, size: 64, seconds: 3, gop: 20})
			pkts, frameOf := rtpOf(t, mime, c.aus)
			lost := -1
			for i, f := range frameOf {
				if f == 25 {
					lost = i
					break
				}
			}
			var stream []*rtp.Packet
			for i, pk := range pkts {
				if i != lost {
					stream = append(stream, pk)
				}
			}
			stream[10], stream[11] = stream[11], stream[10]

			clock := time.Unix(1000, 0)
			plis := 0
			r := &trackReader{name: "test", mime: mime, pre: Preprocess{Size: 16}, silence: time.Second,
				now: func() time.Time { return clock }, sendPLI: func() error { plis++; return nil }}
			next := 0
			read := func() (*rtp.Packet, error) {
				if next == len(stream) {
					return nil, io.EOF
				}
				clock = clock.Add(50 * time.Millisecond / 3)
				next++
				return stream[next-1], nil
			}
			var frames []Frame
			err := r.run(context.Background(), read, func(time.Time) error { return nil }, func(f Frame) error {
				frames = append(frames, f)
				return nil
			})
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("run: %v, want the end of the track (ErrUnavailable)", err)
			}
			got := map[int]Frame{}
			for _, f := range frames {
				i := int(f.Time / (50 * time.Millisecond))
				if f.Time != time.Duration(i)*50*time.Millisecond || f.W != 16 || f.H != 16 {
					t.Fatalf("frame %d: time %v size %dx%d, want a multiple of 50 ms, 16x16", f.Seq, f.Time, f.W, f.H)
				}
				got[i] = f
			}
			n := len(c.aus)
			for i := range n - 5 { // the last frames may still sit in the jitter buffer
				_, ok := got[i]
				if want := i < 25 || i >= 40; ok != want {
					t.Errorf("frame %d emitted %v, want %v", i, ok, want)
				}
			}
			if f24, f40 := got[24], got[40]; f40.Seq != f24.Seq+2 {
				t.Errorf("Seq %d after the loss (frame 24 had %d): want a jump of 2 so windows break", f40.Seq, f24.Seq)
			}
			st := r.Stats()
			if plis < 2 || st.PLIs != plis || st.Lost < 15 {
				t.Errorf("PLIs %d (stats %d), lost %d: want a PLI at the start and after the loss, 15 frames lost", plis, st.PLIs, st.Lost)
			}
			t.Logf("%s: %d frames, %d lost, %d PLIs", mime, st.Frames, st.Lost, plis)
		})
	}
}

// TestTrackReaderCountsDecodeErrors truncates a key frame to its VP8
// header (so the reader still hands it to the decoder): the
// decoder rejects it, the reader counts a decode error in its stats and in
// the source's running total, skips to the next key frame and goes on.
func TestTrackReaderCountsDecodeErrors(t *testing.T) {
	mime := webrtc.MimeTypeVP8
	c := decEncode(t, t.TempDir(), decClipSpec{mime: mime, size: 64, seconds: 3, gop: 20})
	aus := make([][]byte, len(c.aus))
	copy(aus, c.aus)
	aus[20] = append([]byte(nil), aus[20][:12]...)
	pkts, _ := rtpOf(t, mime, aus)
	var total atomic.Int64
	r := &trackReader{name: "test", mime: mime, pre: Preprocess{Size: 16}, silence: time.Second,
		now: time.Now, sendPLI: func() error { return nil }, decodeErrs: &total}
	next := 0
	read := func() (*rtp.Packet, error) {
		if next == len(pkts) {
			return nil, io.EOF
		}
		next++
		return pkts[next-1], nil
	}
	frames := 0
	err := r.run(context.Background(), read, func(time.Time) error { return nil }, func(Frame) error { frames++; return nil })
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("run: %v, want the end of the track", err)
	}
	st := r.Stats()
	if st.DecodeErrors < 1 || total.Load() != int64(st.DecodeErrors) || st.Lost < st.DecodeErrors {
		t.Errorf("decode errors %d (source total %d), lost %d: want the garbled key frame counted in both", st.DecodeErrors, total.Load(), st.Lost)
	}
	// Frames 0–19 before the loss, 40 on after the next key frame (the
	// last few may stay in the jitter buffer).
	if frames < 20+15 {
		t.Errorf("%d frames decoded: want the stream to resume at the next key frame", frames)
	}
	t.Logf("%d frames, %d lost, %d decode errors", frames, st.Lost, st.DecodeErrors)
}
