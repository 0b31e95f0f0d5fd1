package evidence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/physd/physd/frame"
)

// FrameRing is the clip's source for cameras that hand physd no
// compressed packets (synthetic, files, V4L2, streams read through
// OpenCV): the pictures physd analyses, in 8-bit gray, for Hold within
// MaxBytes. When Hold at the camera's rate and picture size would not fit
// MaxBytes it keeps every k-th picture (the clip then plays at a lower
// rate); Stats says which k. Safe for one writer and any readers.
type FrameRing struct {
	hold     time.Duration
	maxBytes int

	mu     sync.Mutex
	frames []grayFrame
	bytes  int
	every  int // keep every k-th frame
	seen   int
	rate   float64 // frames a second, measured
	last   time.Time
}

type grayFrame struct {
	w, h int
	pix  []byte
	wall time.Time
}

// NewFrameRing returns a ring holding hold of pictures within maxBytes.
func NewFrameRing(hold time.Duration, maxBytes int) *FrameRing {
	return &FrameRing{hold: hold, maxBytes: maxBytes, every: 1}
}

// Add keeps f (or skips it, keeping every k-th): its whole gray picture
// when it carries one (a camera with zones), else its preprocessed
// pixels.
func (r *FrameRing) Add(f frame.Frame) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.last.IsZero() {
		if dt := f.Wall.Sub(r.last).Seconds(); dt > 0 {
			// A slow average of the rate, for the decimation.
			if r.rate == 0 {
				r.rate = 1 / dt
			} else {
				r.rate += 0.05 * (1/dt - r.rate)
			}
		}
	}
	r.last = f.Wall
	r.seen++
	if (r.seen-1)%r.every != 0 {
		return
	}
	g := grayFrame{wall: f.Wall}
	switch {
	case f.Gray != nil:
		b := f.Gray.Bounds()
		g.w, g.h = b.Dx(), b.Dy()
		g.pix = make([]byte, g.w*g.h)
		for y := range g.h {
			copy(g.pix[y*g.w:(y+1)*g.w], f.Gray.Pix[y*f.Gray.Stride:])
		}
	case len(f.Pix) == f.W*f.H && f.W > 0:
		g.w, g.h = f.W, f.H
		g.pix = make([]byte, len(f.Pix))
		for i, v := range f.Pix {
			g.pix[i] = byte(math.Round(255 * min(max(v, 0), 1)))
		}
	default:
		return
	}
	r.frames = append(r.frames, g)
	r.bytes += len(g.pix)
	// The decimation that fits Hold in MaxBytes at this rate and size.
	if r.rate > 0 && r.maxBytes > 0 {
		need := r.hold.Seconds() * r.rate * float64(len(g.pix))
		r.every = max(1, int(math.Ceil(need/float64(r.maxBytes))))
	}
	for len(r.frames) > 1 && (r.frames[0].wall.Before(f.Wall.Add(-r.hold)) || (r.maxBytes > 0 && r.bytes > r.maxBytes)) {
		r.bytes -= len(r.frames[0].pix)
		r.frames[0] = grayFrame{}
		r.frames = r.frames[1:]
	}
}

// Stats are the ring's pictures, their bytes and the decimation k.
func (r *FrameRing) Stats() (frames, bytes, every int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.frames), r.bytes, r.every
}

// FrameClip is the pictures of [From, To), all of one size.
type FrameClip struct {
	From, To time.Time
	frames   []grayFrame
}

// Cut returns the pictures that arrived in [from, to) of the size of the
// last of them; ok is false for fewer than two.
func (r *FrameRing) Cut(from, to time.Time) (FrameClip, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var in []grayFrame
	for _, g := range r.frames {
		if !g.wall.Before(from) && g.wall.Before(to) {
			in = append(in, g)
		}
	}
	if len(in) < 2 {
		return FrameClip{}, false
	}
	w, h := in[len(in)-1].w, in[len(in)-1].h
	c := FrameClip{From: from, To: to}
	for _, g := range in {
		if g.w == w && g.h == h {
			c.frames = append(c.frames, g)
		}
	}
	return c, len(c.frames) >= 2
}

// Span is the first picture's time and the last's plus one interval.
func (c FrameClip) Span() (start, end time.Time) {
	n := len(c.frames)
	if n < 2 {
		return
	}
	first, last := c.frames[0].wall, c.frames[n-1].wall
	return first, last.Add(last.Sub(first) / time.Duration(n-1))
}

// ErrNoEncoder is returned (wrapped) when ffmpeg is not installed.
var ErrNoEncoder = errors.New("evidence: ffmpeg is not installed, and pictures without packets need an encoder")

// Write encodes the clip as H.264 in a fragmented MP4 (written as it is
// encoded, to a pipe) with ffmpeg, at the pictures' mean rate.
func (c FrameClip) Write(ctx context.Context, w io.Writer) error {
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		return ErrNoEncoder
	}
	n := len(c.frames)
	start, end := c.Span()
	rate := float64(n) / end.Sub(start).Seconds()
	g := c.frames[0]
	// Even sizes for yuv420p.
	cmd := exec.CommandContext(ctx, bin, "-hide_banner", "-nostdin", "-loglevel", "error",
		"-f", "rawvideo", "-pix_fmt", "gray", "-s", fmt.Sprintf("%dx%d", g.w, g.h), "-framerate", strconv.FormatFloat(rate, 'f', 4, 64), "-i", "pipe:0",
		"-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", "-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-pix_fmt", "yuv420p",
		"-movflags", "frag_keyframe+empty_moov+default_base_moof", "-f", "mp4", "pipe:1")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("evidence: ffmpeg: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("evidence: ffmpeg: %w", err)
	}
	var werr error
	for _, f := range c.frames {
		if _, werr = in.Write(f.pix); werr != nil {
			break
		}
	}
	_ = in.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("evidence: ffmpeg: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	if werr != nil {
		return fmt.Errorf("evidence: ffmpeg: %w", werr)
	}
	return nil
}
