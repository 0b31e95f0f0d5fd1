package stream

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtcp"
	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media/samplebuilder"
)

const (
	// jitterPackets is how many packets the jitter buffer holds while it
	// waits for a late or reordered one (a few frames of 640×480 video).
	jitterPackets = 512
	// jitterDelay bounds how long it waits: a frame whose packets are not
	// all in after this is dropped, the loss is counted and a key frame
	// requested.
	jitterDelay = 250 * time.Millisecond
	// pliInterval rate-limits key frame requests.
	pliInterval = 500 * time.Millisecond
	// DefaultSilence is how long a WebRTC track may deliver no packet before
	// its session counts as gone.
	DefaultSilence = 5 * time.Second
)

// TrackStats counts what a WebRTC track delivered.
type TrackStats struct {
	// Frames decoded and emitted.
	Frames int
	// Lost counts frames the jitter buffer gave up on (missing packets)
	// plus frames skipped while waiting for a key frame after a loss.
	Lost int
	// DecodeErrors counts access units the decoder rejected (corrupt,
	// truncated or undecodable); each also counts in Lost.
	DecodeErrors int
	// PLIs counts key frame requests sent.
	PLIs int
	// Codec is the negotiated MIME type.
	Codec string
}

// trackReader turns one RTP video track into frames: jitter buffer,
// depacketiser, key frame gating, decoder, preprocessing, and frame times
// from the RTP timestamps (the sender's capture clock, not arrival).
type trackReader struct {
	name    string
	mime    string
	pre     Preprocess
	silence time.Duration
	sendPLI func() error
	now     func() time.Time // the PLI rate limit's clock
	// decodeErrs, when set, is the source's running total of decode
	// errors, which outlives each session's reader.
	decodeErrs *atomic.Int64
	// params, when set, are H.264 or H.265 parameter sets (Annex-B SPS
	// and PPS, with the VPS first for H.265) from the session
	// description, for senders that send them only there (RTSP's
	// sprop-parameter-sets).
	params []byte
	// keepAtKeys is videoDecoder.keepAtKeys: set for senders that may
	// reorder pictures.
	keepAtKeys bool
	// tap, when set, is handed each access unit the decoder accepted,
	// marked with session (AccessUnit).
	tap     func(AccessUnit)
	session int64

	mu      sync.Mutex
	stats   TrackStats
	lastPLI time.Time
}

func newTrackReader(name string, track *webrtc.TrackRemote, pre Preprocess, silence time.Duration, writeRTCP func([]rtcp.Packet) error) *trackReader {
	if silence <= 0 {
		silence = DefaultSilence
	}
	ssrc := uint32(track.SSRC())
	r := &trackReader{name: name, mime: track.Codec().MimeType, pre: pre, silence: silence, now: time.Now}
	r.sendPLI = func() error { return writeRTCP([]rtcp.Packet{&rtcp.PictureLossIndication{MediaSSRC: ssrc}}) }
	r.stats.Codec = r.mime
	return r
}

// Stats returns a snapshot of the counters.
func (r *trackReader) Stats() TrackStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// pli asks the sender for a key frame, at most once per pliInterval. It
// does nothing when the sender cannot be asked (sendPLI is nil).
func (r *trackReader) pli() {
	if r.sendPLI == nil {
		return
	}
	r.mu.Lock()
	now := r.now()
	if now.Sub(r.lastPLI) < pliInterval {
		r.mu.Unlock()
		return
	}
	r.lastPLI = now
	r.stats.PLIs++
	r.mu.Unlock()
	_ = r.sendPLI() // best effort: the next loss asks again
}

// run reads packets until ctx ends, the track ends, or it is silent for
// r.silence; it returns a wrapped ErrStalled for silence and a wrapped
// ErrUnavailable when the track ends.
func (r *trackReader) run(ctx context.Context, read func() (*rtp.Packet, error), setDeadline func(time.Time) error, emit func(Frame) error) error {
	var depack rtp.Depacketizer
	switch strings.ToLower(r.mime) {
	case strings.ToLower(webrtc.MimeTypeVP8):
		depack = &codecs.VP8Packet{}
	case strings.ToLower(webrtc.MimeTypeH264):
		depack = &codecs.H264Packet{}
	case strings.ToLower(webrtc.MimeTypeH265):
		depack = &h265Depacketizer{}
	default:
		return fmt.Errorf("%s: track codec %s: %w", r.name, r.mime, ErrUnsupportedCodec)
	}
	dec, err := newVideoDecoder(r.mime)
	if err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	defer dec.close()
	dec.keepAtKeys = r.keepAtKeys
	// Each picture is preprocessed (copied) before the next decode.
	dec.reuseLuma = true
	if len(r.params) > 0 {
		// Parameter sets alone yield no picture; the decoder keeps them
		// for the first key frame. Broken ones fail that key frame, which
		// then decodes again with its own in-band parameter sets, if any.
		_, _, _, _ = dec.decode(r.params)
	}
	checked := &checkedDepacketizer{Depacketizer: depack}
	sb := samplebuilder.New(jitterPackets, checked, 90000, samplebuilder.WithMaxTimeDelay(jitterDelay))
	stop := context.AfterFunc(ctx, func() { _ = setDeadline(time.Unix(1, 0)) })
	defer stop()

	needKey := true
	// The picture's header and the preprocessing's working memory are
	// reused from frame to frame (one allocation a frame: its pixels).
	var gray image.Gray
	scratch := grayScratch{levels: videoLevels()}
	r.pli() // a publisher that just joined may be between key frames
	var (
		st       stamper
		haveTS   bool
		unwrap   int64 // RTP timestamp relative to the first, unwrapped
		lastTS   uint32
		firstPTS int64 // unwrapped timestamp of the first picture
	)
	for {
		pkt, err := readPacket(ctx, r.name, r.silence, read, setDeadline)
		if err != nil {
			return err
		}
		sb.Push(pkt)
		for s := sb.Pop(); s != nil; s = sb.Pop() {
			if !haveTS {
				lastTS, haveTS = s.PacketTimestamp, true
			}
			unwrap += int64(int32(s.PacketTimestamp - lastTS))
			lastTS = s.PacketTimestamp
			if s.PrevDroppedPackets > 0 {
				needKey, st.gap = true, true
				r.count(func(st *TrackStats) { st.Lost++ })
			}
			if checked.failed {
				// A packet that does not depacketise: the frame is as
				// corrupt as one the decoder rejects.
				checked.failed = false
				needKey, st.gap = true, true
				r.corrupt()
				continue
			}
			if needKey && !isKeyFrame(r.mime, s.Data) {
				st.gap = true
				r.count(func(st *TrackStats) { st.Lost++ })
				r.pli()
				continue
			}
			t0 := time.Now()
			w, h, luma, pts, err := dec.decodeAt(s.Data, unwrap)
			if err != nil {
				needKey, st.gap = true, true
				r.corrupt()
				continue
			}
			needKey = false
			if r.tap != nil {
				r.tap(AccessUnit{Codec: r.mime, Data: s.Data, Params: r.params, PTS: unwrap, Key: isKeyFrame(r.mime, s.Data), Wall: t0, Session: r.session})
			}
			if w == 0 {
				continue
			}
			if !st.have {
				firstPTS = pts
			}
			t1 := time.Now()
			gray.Pix, gray.Stride, gray.Rect = luma, w, image.Rect(0, 0, w, h)
			f, err := r.pre.applyGray(&gray, &scratch)
			if err != nil {
				return fmt.Errorf("%s: %dx%d picture: %w", r.name, w, h, err)
			}
			f.Key, f.KeyKnown = dec.key(), true
			f.Decode, f.Preprocess = t1.Sub(t0), time.Since(t1)
			// The picture's own time: with reordering it is not the
			// access unit's just sent.
			st.stamp(&f, time.Duration(pts-firstPTS)*time.Second/90000)
			r.count(func(st *TrackStats) { st.Frames++ })
			if err := emit(f); err != nil {
				return err
			}
		}
	}
}

// readPacket sets the silence deadline and reads one packet, mapping
// silence to ErrStalled and the end of the track to ErrUnavailable.
func readPacket(ctx context.Context, name string, silence time.Duration, read func() (*rtp.Packet, error), setDeadline func(time.Time) error) (*rtp.Packet, error) {
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err := setDeadline(time.Now().Add(silence)); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	pkt, err := read()
	if err == nil {
		return pkt, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return nil, fmt.Errorf("%s: no video for %v: %w", name, silence, ErrStalled)
	}
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: the publisher ended the track: %w", name, ErrUnavailable)
	}
	return nil, fmt.Errorf("%s: reading RTP: %w: %w", name, err, ErrUnavailable)
}

// stamper numbers and dates a live source's frames: Seq jumps by one more
// after pictures were lost (gap), Time is the stream's own clock, and
// Wall is the arrival time of the first frame plus Time, never later than
// the arrival.
type stamper struct {
	seq  int
	gap  bool
	last Frame
	have bool
}

func (s *stamper) stamp(f *Frame, t time.Duration) {
	if s.gap {
		s.seq++ // a jump in Seq tells the windows frames are missing
		s.gap = false
	}
	f.Seq, f.Time = s.seq, t
	s.seq++
	now := time.Now()
	f.Wall = now
	if s.have {
		if wl := s.last.Wall.Add(f.Time - s.last.Time); wl.Before(now) {
			f.Wall = wl
		}
	}
	s.last, s.have = *f, true
}

// checkedDepacketizer turns a depacketiser's error into an empty payload
// and a flag for the sample being built. pion's samplebuilder, given the
// error, keeps the packet and reports no loss until the jitter delay
// purges it, and the inter frames after it would then decode against a
// stale reference.
type checkedDepacketizer struct {
	rtp.Depacketizer
	failed bool
}

// Unmarshal implements rtp.Depacketizer.
func (d *checkedDepacketizer) Unmarshal(packet []byte) ([]byte, error) {
	b, err := d.Depacketizer.Unmarshal(packet)
	if err != nil {
		d.failed = true
		return nil, nil
	}
	return b, nil
}

// h265Depacketizer is pion's H.265 depacketiser with the end of an
// access unit where RFC 7798 §4.1 puts it, at the RTP marker bit. pion's
// own ends a partition at the last fragment of every fragmented NAL unit,
// so the samplebuilder would split a picture whose parameter sets or
// slices are fragmented into several samples.
type h265Depacketizer struct{ codecs.H265Depacketizer }

// IsPartitionTail implements rtp.Depacketizer.
func (*h265Depacketizer) IsPartitionTail(marker bool, _ []byte) bool { return marker }

// corrupt counts a frame that did not decode (in the track's stats and
// the source's total) and asks the sender for a key frame.
func (r *trackReader) corrupt() {
	r.count(func(st *TrackStats) { st.Lost++; st.DecodeErrors++ })
	if r.decodeErrs != nil {
		r.decodeErrs.Add(1)
	}
	r.pli()
}

func (r *trackReader) count(f func(*TrackStats)) {
	r.mu.Lock()
	f(&r.stats)
	r.mu.Unlock()
}

// readRemote runs r on a pion remote track.
func (r *trackReader) readRemote(ctx context.Context, t *webrtc.TrackRemote, emit func(Frame) error) error {
	return r.run(ctx, func() (*rtp.Packet, error) {
		p, _, err := t.ReadRTP()
		return p, err
	}, t.SetReadDeadline, emit)
}
