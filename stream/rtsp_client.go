package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/bluenviron/gortsplib/v5"
	"github.com/bluenviron/gortsplib/v5/pkg/base"
	"github.com/bluenviron/gortsplib/v5/pkg/format"
	"github.com/bluenviron/gortsplib/v5/pkg/liberrors"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
)

// rtpQueue is how many RTP packets the RTSP client buffers for the decoder
// (about 2 s of 640×480 H.264). When the decoder falls behind, packets
// beyond it are dropped: the jitter buffer sees the gap, counts the lost
// frames and waits for the next key frame.
const rtpQueue = 1024

// errNotNative reports a stream the native RTSP client does not decode
// (no H.264, H.265, VP8 or MJPEG track); RTSPSource.Run then reads it
// through OpenCV.
var errNotNative = errors.New("not for the native RTSP client")

// runNative reads the stream with gortsplib and decodes it with the
// WebRTC track reader: RTP timestamps become frame times, every access
// unit libavcodec rejects is counted in DecodeErrors and skipped to the
// next key frame, and pictures keep the size the camera sends, also when
// it changes mid-stream. It returns an error wrapping errNotNative,
// having received no frame, for streams it leaves to OpenCV.
func (s *RTSPSource) runNative(ctx context.Context, emit func(Frame) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	u, err := base.ParseURL(s.url)
	if err != nil {
		return s.wrap(fmt.Errorf("not a URL: %w", ErrInvalidOption)) // err may echo the password
	}
	if u.Scheme != "rtsp" && u.Scheme != "rtsps" {
		return errNotNative
	}
	proto := gortsplib.ProtocolTCP
	if s.opt.Transport == TransportUDP {
		proto = gortsplib.ProtocolUDP
	}
	c := &gortsplib.Client{
		Scheme:   u.Scheme,
		Host:     u.Host,
		Protocol: &proto,
		// Bounds every request of the handshake; after PLAY the track
		// reader's stall timeout, shorter by default, ends a silent stream.
		ReadTimeout:   max(s.opt.OpenTimeout, s.opt.Timeout),
		WriteTimeout:  s.opt.OpenTimeout,
		OnPacketsLost: func(uint64) {}, // the jitter buffer counts losses
		OnDecodeError: func(error) {},  // a bad packet shows as a loss or a decode error
	}
	var untrusted atomic.Pointer[error] // why the camera's certificate was refused
	if u.Scheme == "rtsps" {
		c.TLSConfig = s.opt.TLS.config(u.Host, func(err error) { untrusted.Store(&err) })
	}
	if err := c.Start(); err != nil {
		return s.wrap(fmt.Errorf("RTSP client: %v: %w", err, ErrUnavailable))
	}
	defer c.Close()
	// Closing the client unblocks the handshake's requests.
	stop := context.AfterFunc(ctx, c.Close)
	defer stop()
	openCtx, cancelOpen := context.WithTimeout(ctx, s.opt.OpenTimeout)
	defer cancelOpen()
	stopOpen := context.AfterFunc(openCtx, c.Close)

	start := time.Now()
	openErr := func(step string, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if why := untrusted.Load(); why != nil {
			return s.wrap(*why)
		}
		if openCtx.Err() != nil {
			return s.wrap(fmt.Errorf("the server did not answer %s within %v: %w", step, s.opt.OpenTimeout, ErrStalled))
		}
		msg := s.scrub(err.Error())
		var bad liberrors.ErrClientBadStatusCode
		var ne net.Error
		switch {
		case errors.As(err, &bad):
			return s.wrap(fmt.Errorf("the server refused %s (no such path, no publisher or refused credentials; %s): %w", step, msg, ErrUnavailable))
		case errors.As(err, &ne) && ne.Timeout(), time.Since(start) >= time.Duration(stallFraction*float64(s.opt.OpenTimeout)):
			return s.wrap(fmt.Errorf("the server did not answer %s within %v (%s): %w", step, time.Since(start).Round(time.Millisecond), msg, ErrStalled))
		}
		return s.wrap(fmt.Errorf("cannot connect: %s: %w", msg, ErrUnavailable))
	}
	desc, _, err := c.Describe(u)
	if err != nil {
		return openErr("DESCRIBE", err)
	}
	var (
		h264  *format.H264
		h265  *format.H265
		vp8   *format.VP8
		mjpeg *format.MJPEG
		mime  string
		fm    format.Format
	)
	medi := desc.FindFormat(&h264)
	if medi != nil {
		mime, fm = webrtc.MimeTypeH264, h264
	} else if medi = desc.FindFormat(&h265); medi != nil && h265.MaxDONDiff == 0 {
		// With sprop-max-don-diff the sender may send NAL units out of
		// decoding order, numbered by DON fields, which pion's
		// depacketiser does not reorder; OpenCV's FFmpeg does.
		mime, fm = webrtc.MimeTypeH265, h265
	} else if medi = desc.FindFormat(&vp8); medi != nil {
		mime, fm = webrtc.MimeTypeVP8, vp8
	} else if medi = desc.FindFormat(&mjpeg); medi != nil {
		fm = mjpeg
	} else if u.Scheme == "rtsps" && !s.opt.TLS.InsecureSkipVerify {
		// OpenCV's FFmpeg would reconnect without checking the certificate.
		return s.wrap(fmt.Errorf("rtsps://: the stream is %s, which physd reads through OpenCV, and OpenCV does not check the camera's certificate; "+
			"send H.264, H.265 without sprop-max-don-diff, VP8 or MJPEG, or set tls.insecure_skip_verify to accept the stream unchecked: %w", formatNames(desc), ErrUntrusted))
	} else {
		return errNotNative
	}
	if _, err := c.Setup(desc.BaseURL, medi, 0, 0); err != nil {
		return openErr("SETUP", err)
	}
	packets := make(chan *rtp.Packet, rtpQueue)
	c.OnPacketRTP(medi, fm, func(p *rtp.Packet) {
		select {
		case packets <- p.Clone(): // the client reuses its read buffers
		default:
		}
	})
	if _, err := c.Play(nil); err != nil {
		return openErr("PLAY", err)
	}
	if !stopOpen() {
		return openErr("PLAY", errors.New("timed out"))
	}
	ended := make(chan struct{})
	var endErr error
	go func() {
		endErr = c.Wait()
		close(ended)
	}()

	var deadline atomic.Int64 // unix nanoseconds
	read := func() (*rtp.Packet, error) {
		timer := time.NewTimer(time.Until(time.Unix(0, deadline.Load())))
		defer timer.Stop()
		select {
		case p := <-packets:
			return p, nil
		case <-ended:
			return nil, errStreamEnded
		case <-timer.C:
			return nil, os.ErrDeadlineExceeded
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	setDeadline := func(t time.Time) error {
		deadline.Store(t.UnixNano())
		return nil
	}
	var n int // frames emitted
	if mjpeg != nil {
		r := &mjpegReader{name: s.name, pre: s.opt.Preprocess, silence: s.opt.Timeout, decodeErrs: &s.decodeErrs}
		err = r.run(ctx, mjpeg, read, setDeadline, emit)
		n = r.stats.Frames
	} else {
		r := &trackReader{
			name: s.name, mime: mime, pre: s.opt.Preprocess, silence: s.opt.Timeout,
			now: time.Now, decodeErrs: &s.decodeErrs, keepAtKeys: true,
			tap: s.opt.Tap, session: s.sessions.Add(1),
		}
		r.stats.Codec = mime
		switch {
		case h264 != nil:
			sps, pps := h264.SafeParams()
			r.params = annexB(sps, pps)
		case mime == webrtc.MimeTypeH265:
			r.params = annexB(h265.SafeParams())
		}
		err = r.run(ctx, read, setDeadline, emit)
		n = r.Stats().Frames
	}
	if errors.Is(err, errStreamEnded) {
		why := "the server closed the session"
		if endErr != nil {
			why = s.scrub(endErr.Error())
		}
		if n == 0 {
			return s.wrap(fmt.Errorf("the stream ended before its first frame (%s): %w: %w", why, ErrInterrupted, io.EOF))
		}
		return s.wrap(fmt.Errorf("the stream ended after %d frame(s) (%s): %w: %w", n, why, ErrInterrupted, io.EOF))
	}
	return err
}

// errStreamEnded is what the native client's packet reader returns once
// the RTSP session is over.
var errStreamEnded = errors.New("RTSP session ended")

// annexB joins NAL units into an Annex-B byte stream, skipping empty ones.
func annexB(nals ...[]byte) []byte {
	var b []byte
	for _, n := range nals {
		if len(n) > 0 {
			b = append(append(b, 0, 0, 0, 1), n...)
		}
	}
	return b
}
