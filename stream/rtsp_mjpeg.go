package stream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"sync/atomic"
	"time"

	"github.com/bluenviron/gortsplib/v5/pkg/format"
	"github.com/bluenviron/gortsplib/v5/pkg/format/rtpmjpeg"
	"github.com/pion/rtp"
)

// mjpegReader turns an RTP/JPEG track (RFC 2435, an RTSP camera's MJPEG)
// into frames. Every picture is a whole JPEG, so there is no key frame to
// wait for: a picture with a lost packet is dropped and counted in Lost,
// one that reassembles but does not decode is counted in DecodeErrors
// too, and each picture keeps its own size, so resolution changes are
// followed. Frame times come from the RTP timestamps (90 kHz).
type mjpegReader struct {
	name    string
	pre     Preprocess
	silence time.Duration
	// decodeErrs is the source's running total of decode errors.
	decodeErrs *atomic.Int64
	stats      TrackStats
}

// run reads packets until ctx ends, read fails or emit does (see
// readPacket for how read and setDeadline are used).
func (r *mjpegReader) run(ctx context.Context, mj *format.MJPEG, read func() (*rtp.Packet, error), setDeadline func(time.Time) error, emit func(Frame) error) error {
	dec, err := mj.CreateDecoder()
	if err != nil {
		return fmt.Errorf("%s: MJPEG depacketiser: %w", r.name, err)
	}
	var (
		st      stamper
		haveSeq bool
		lastSeq uint16
		gapSeen bool // a gap already counted for the picture being assembled
		haveTS  bool
		lastTS  uint32
		unwrap  int64
	)
	for {
		pkt, err := readPacket(ctx, r.name, r.silence, read, setDeadline)
		if err != nil {
			return err
		}
		if haveSeq && pkt.SequenceNumber != lastSeq+1 {
			// At least one picture lost a packet. The depacketiser sees
			// only some of these (a wrong fragment offset), so the gap
			// itself is what is counted.
			r.stats.Lost++
			st.gap, gapSeen = true, true
		}
		lastSeq, haveSeq = pkt.SequenceNumber, true
		img, err := dec.Decode(pkt)
		if errors.Is(err, rtpmjpeg.ErrMorePacketsNeeded) {
			continue
		}
		if err != nil {
			if !gapSeen && !errors.Is(err, rtpmjpeg.ErrNonStartingPacketAndNoPrevious) {
				r.stats.Lost++ // a malformed packet, not a missing one
				st.gap = true
			}
			gapSeen = false
			continue
		}
		gapSeen = false
		t0 := time.Now()
		pic, err := jpeg.Decode(bytes.NewReader(img))
		if err != nil {
			r.stats.Lost++
			r.stats.DecodeErrors++
			if r.decodeErrs != nil {
				r.decodeErrs.Add(1)
			}
			st.gap = true
			continue
		}
		if !haveTS {
			lastTS, haveTS = pkt.Timestamp, true
		}
		unwrap += int64(int32(pkt.Timestamp - lastTS))
		lastTS = pkt.Timestamp
		t1 := time.Now()
		f, err := r.pre.ApplyGray(lumaOf(pic))
		if err != nil {
			return fmt.Errorf("%s: %dx%d picture: %w", r.name, pic.Bounds().Dx(), pic.Bounds().Dy(), err)
		}
		// Every picture is a whole JPEG: intra coded, as a key frame is.
		f.Key, f.KeyKnown = true, true
		f.Decode, f.Preprocess = t1.Sub(t0), time.Since(t1)
		st.stamp(&f, time.Duration(unwrap)*time.Second/90000)
		r.stats.Frames++
		if err := emit(f); err != nil {
			return err
		}
	}
}

// lumaOf returns the luma plane of a decoded JPEG without copying it when
// it has one (JFIF luma is full range already).
func lumaOf(m image.Image) *image.Gray {
	switch p := m.(type) {
	case *image.Gray:
		return p
	case *image.YCbCr:
		return &image.Gray{Pix: p.Y, Stride: p.YStride, Rect: p.Rect}
	}
	b := m.Bounds()
	g := image.NewGray(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			g.Set(x, y, m.At(x, y))
		}
	}
	return g
}
