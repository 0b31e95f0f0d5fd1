//go:build !nocv

package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"time"

	"gocv.io/x/gocv"
)

// liveSpec describes a live source to runLive.
type liveSpec struct {
	name        string
	open        func(ctx context.Context) (*capture, error) // called in the reader goroutine
	pre         Preprocess
	timeout     time.Duration // no frame for this long: ErrStalled
	openTimeout time.Duration // open taking longer: ErrStalled
}

// liveItem is what the reader goroutine hands to Run: an open
// notification, a frame, or the terminal error.
type liveItem struct {
	opened  bool
	frame   Frame
	arrival time.Time
	err     error
}

// runLive runs a live source: a reader goroutine opens the capture,
// decodes and preprocesses frames and hands them over one at a time (no
// queue: a slow consumer slows the reads, and OpenCV/FFmpeg buffer the
// rest), while Run waits for them with a watchdog, so that neither a hung
// open nor a hung read can block Run beyond its timeout plus a grace
// period, and ctx cancels promptly. OpenCV's reads cannot be interrupted
// from outside, so after Run returns the reader goroutine may live on until
// its blocked read returns (bounded by the read timeout); it then closes
// the capture itself.
func runLive(ctx context.Context, sp liveSpec, emit func(Frame) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	items := make(chan liveItem)
	go readLive(rctx, sp, items)

	wrap := func(err error) error { return fmt.Errorf("stream: %s: %w", sp.name, err) }
	start := time.Now()
	opened := false
	var last Frame // the previous frame emitted
	watchdog := time.NewTimer(sp.openTimeout + watchdogGrace)
	defer watchdog.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-watchdog.C:
			if !opened {
				return wrap(fmt.Errorf("did not open within %v: %w", time.Since(start).Round(time.Millisecond), ErrStalled))
			}
			if last.Pix == nil {
				return wrap(fmt.Errorf("no first frame within %v of opening: %w", (sp.timeout + watchdogGrace).Round(time.Millisecond), ErrStalled))
			}
			return wrap(fmt.Errorf("no frame for %v after frame %d: %w", (sp.timeout + watchdogGrace).Round(time.Millisecond), last.Seq, ErrStalled))
		case it := <-items:
			switch {
			case it.err != nil:
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return wrap(it.err)
			case it.opened:
				opened = true
			default:
				f := it.frame
				f.Wall = it.arrival
				if f.Seq > 0 {
					if w := last.Wall.Add(f.Time - last.Time); w.Before(f.Wall) {
						f.Wall = w
					}
				}
				last = f
				if err := emit(f); err != nil {
					return err
				}
			}
			watchdog.Reset(sp.timeout + watchdogGrace)
		}
	}
}

// readLive is the reader goroutine of runLive.
func readLive(ctx context.Context, sp liveSpec, items chan<- liveItem) {
	send := func(it liveItem) bool {
		select {
		case items <- it:
			return true
		case <-ctx.Done():
			return false
		}
	}
	c, err := sp.open(ctx)
	if err != nil {
		send(liveItem{err: err})
		return
	}
	d := newDecoder(c)
	defer d.Close()
	if err := d.checkFrame(sp.pre); err != nil {
		send(liveItem{err: err})
		return
	}
	if !send(liveItem{opened: true}) {
		return
	}
	var first time.Duration
	err = d.each(ctx, func(pic *picture, pts time.Duration, _ bool) error {
		arrival := time.Now()
		f, err := d.frame(pic, sp.pre)
		if err != nil {
			return fmt.Errorf("frame %d: %w", d.seq, err)
		}
		// OpenCV's read waits for the camera too: its decoding is not
		// told apart, only the preprocessing is timed.
		f.Preprocess = time.Since(arrival)
		if d.seq == 0 {
			first = pts
		}
		f.Seq, f.Time = d.seq, pts-first
		if !send(liveItem{frame: f, arrival: arrival}) {
			return ctx.Err()
		}
		return nil
	})
	if ctx.Err() != nil {
		return
	}
	if err == nil { // the read failed
		// When OpenCV's read timeout interrupts FFmpeg, OpenCV drains the
		// decoder: the read that timed out may still return a delayed
		// frame, and only the next one fails, at once. So the stall shows
		// in either of the last two reads.
		waited := max(time.Since(d.readStart), d.lastReadTook)
		switch {
		case waited >= time.Duration(stallFraction*float64(sp.timeout)):
			err = fmt.Errorf("no frame for %v after %d frame(s): %w", waited.Round(time.Millisecond), d.seq, ErrStalled)
		case d.seq == 0:
			err = fmt.Errorf("the stream ended before its first frame: %w: %w", ErrInterrupted, io.EOF)
		default:
			err = fmt.Errorf("the stream ended after %d frame(s): %w: %w", d.seq, ErrInterrupted, io.EOF)
		}
	}
	send(liveItem{err: err})
}

// run implements RTSPSource.Run: H.264, VP8 and MJPEG streams over
// rtsp:// go through the native client, anything else through OpenCV.
func (s *RTSPSource) run(ctx context.Context, emit func(Frame) error) error {
	if err := s.runNative(ctx, emit); !errors.Is(err, errNotNative) {
		return err
	}
	return runLive(ctx, liveSpec{
		name:        s.name,
		open:        s.open,
		pre:         s.opt.Preprocess,
		timeout:     s.opt.Timeout,
		openTimeout: s.opt.OpenTimeout,
	}, emit)
}

// open checks that the server accepts TCP connections (for a clear error
// when nothing listens; OpenCV only says that the open failed), then opens
// the stream with the FFmpeg backend and per-capture timeouts.
func (s *RTSPSource) open(ctx context.Context) (*capture, error) {
	u, err := url.Parse(s.url)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %w", ErrInvalidOption)
	}
	port := u.Port()
	if port == "" {
		port = "554"
		if u.Scheme == "rtsps" {
			port = "322"
		}
	}
	dctx, cancel := context.WithTimeout(ctx, s.opt.OpenTimeout)
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("cannot connect within %v: %w", s.opt.OpenTimeout, ErrStalled)
		}
		return nil, fmt.Errorf("cannot connect: %v: %w", err, ErrUnavailable)
	}
	conn.Close()

	spec := captureSpec{
		uri: s.url,
		api: capAPIFFmpeg,
		params: []int{
			capPropOpenTimeout, int(s.opt.OpenTimeout / time.Millisecond),
			capPropReadTimeout, int(s.opt.Timeout / time.Millisecond),
		},
	}
	if _, set := os.LookupEnv(ffmpegOptionsEnvVar); set || s.opt.Transport != TransportTCP {
		spec.ffmpegOptions = "rtsp_transport;" + s.opt.Transport
	}
	start := time.Now()
	c, err := openCapture(spec)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if took := time.Since(start); took >= time.Duration(stallFraction*float64(s.opt.OpenTimeout)) {
			return nil, fmt.Errorf("the server did not answer within %v (%s): %w", took.Round(time.Millisecond), s.scrub(err.Error()), ErrStalled)
		}
		return nil, fmt.Errorf("the server is reachable but the stream cannot be opened (no such path, no publisher, unsupported codec or refused credentials; %s): %w", s.scrub(err.Error()), ErrUnavailable)
	}
	return c, nil
}

// run implements V4L2Source.Run.
func (s *V4L2Source) run(ctx context.Context, emit func(Frame) error) error {
	return runLive(ctx, liveSpec{
		name:        s.Name(),
		open:        s.open,
		pre:         s.opt.Preprocess,
		timeout:     s.opt.Timeout,
		openTimeout: s.opt.Timeout,
	}, emit)
}

// open checks the device node, opens it with the V4L2 backend and requests
// the capture format.
func (s *V4L2Source) open(context.Context) (*capture, error) {
	st, err := os.Stat(s.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no such device: %w: %w", ErrUnavailable, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("%v: %w", err, ErrUnavailable)
	}
	if st.Mode()&fs.ModeCharDevice == 0 {
		return nil, fmt.Errorf("not a character device: %w", ErrUnavailable)
	}
	spec := captureSpec{uri: s.path, api: capAPIV4L2}
	if s.index >= 0 {
		spec.uri, spec.index = "", s.index
	}
	c, err := openCapture(spec)
	if err != nil {
		return nil, fmt.Errorf("V4L2 cannot open it (missing driver, busy, or no permission; %v): %w", err, ErrUnavailable)
	}
	if s.opt.Width > 0 {
		c.Set(gocv.VideoCaptureFrameWidth, float64(s.opt.Width))
	}
	if s.opt.Height > 0 {
		c.Set(gocv.VideoCaptureFrameHeight, float64(s.opt.Height))
	}
	if s.opt.FPS > 0 {
		c.Set(gocv.VideoCaptureFPS, s.opt.FPS)
	}
	return c, nil
}
