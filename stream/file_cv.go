//go:build !nocv

package stream

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"gocv.io/x/gocv"
)

// haveOpenCV reports whether this build decodes video through OpenCV.
const haveOpenCV = true

// ReadFile decodes the video file at path with OpenCV's FFmpeg backend and
// returns the preprocessed frames of the segment [From, To), along with what
// was learned about their timing (see AnalyzeTiming and the package
// documentation for how frame times are obtained).
//
// Frame.Time is the container's presentation time (or Seq/FPS with an
// override), and Frame.Wall is the time the file was opened plus Time. When
// Timing.Irregular is false, the frames may be treated as evenly spaced at
// Timing.FPS.
//
// Errors name the path and wrap fs.ErrNotExist, ErrNotVideo,
// ErrInvalidOption, ErrEmptySegment, ErrTooManyFrames or the context's
// error (ErrNoOpenCV in a nocv build).
func ReadFile(ctx context.Context, path string, opt FileOptions) ([]Frame, Timing, error) {
	fail := func(err error) ([]Frame, Timing, error) {
		return nil, Timing{}, fmt.Errorf("stream: read %q: %w", path, err)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := opt.validate(); err != nil {
		return fail(err)
	}
	if opt.MaxFrames == 0 {
		opt.MaxFrames = DefaultMaxFrames
	}
	d, err := openFile(ctx, path, opt.Preprocess)
	if err != nil {
		return fail(err)
	}
	defer d.Close()
	opened := time.Now()

	var (
		frames   []Frame
		reliable []time.Duration // trustworthy presentation times of kept frames
		from     = secondsToDuration(opt.From)
		to       = secondsToDuration(opt.To)
	)
	err = d.eachAhead(ctx, func(pic *picture, pts time.Duration, ok bool) error {
		ft := pts
		if opt.FPS > 0 {
			ft = IndexTime(d.seq, opt.FPS)
		}
		if to > 0 && ft >= to {
			return errStopDecoding
		}
		if ft < from {
			return nil
		}
		if len(frames) >= opt.MaxFrames {
			return fmt.Errorf("MaxFrames = %d: the segment has more frames; narrow From/To or raise MaxFrames: %w", opt.MaxFrames, ErrTooManyFrames)
		}
		f, err := d.frame(pic, opt.Preprocess)
		if err != nil {
			return fmt.Errorf("frame %d: %w", d.seq, err)
		}
		f.Seq, f.Time, f.Wall = d.seq, ft, opened.Add(ft)
		frames = append(frames, f)
		if ok {
			reliable = append(reliable, pts)
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if d.seq == 0 {
		return fail(fmt.Errorf("no frame could be decoded: %w", ErrNotVideo))
	}
	if len(frames) == 0 {
		first, last := d.clock.first, d.clock.last
		if opt.FPS > 0 {
			first, last = 0, secondsToDuration(float64(d.seq-1)/opt.FPS)
		}
		return fail(fmt.Errorf("option From = %v, To = %v: the %d decoded frames span %s–%s: %w",
			opt.From, opt.To, d.seq, fmtSec(first), fmtSec(last), ErrEmptySegment))
	}

	t := AnalyzeTiming(reliable, d.clock.declared, opt.FPS)
	t.Repaired, t.Failed = d.clock.repaired, d.failed
	if d.failed > 0 {
		t.Assumed += fmt.Sprintf("; %d read(s) returned no image", d.failed)
	}
	if d.eof {
		if lost := d.truncation(t); lost > 0 {
			t.Failed += lost
			t.Assumed += fmt.Sprintf("; decoding stopped at %s but the container lasts %s: about %d frame(s) lost (truncated or corrupt file)",
				fmtSec(d.clock.last), fmtSec(d.containerDuration()), lost)
		}
	}
	if d.clock.repaired > 0 {
		t.Assumed += fmt.Sprintf("; %d frame time(s) reported by the decoder were unusable and extrapolated", d.clock.repaired)
	}
	return frames, t, nil
}

// decoder reads the frames of one opened capture, in order, with their
// presentation times repaired by a ptsClock. ReadFile, FileSource and the
// live sources all decode through it.
type decoder struct {
	src           videoReader
	declaredCount float64 // CAP_PROP_FRAME_COUNT
	clock         ptsClock
	seq           int           // frames decoded so far
	failed        int           // reads that returned no image
	eof           bool          // Read reported the end of the stream
	readStart     time.Time     // when the last Read call began
	lastReadTook  time.Duration // how long the last successful Read took
	guess         keyGuesser    // key frames of a reader that does not tell them
}

// frame preprocesses the decoded picture d.seq with pre and tells its
// type (Frame.Key): the reader's when it knows it (files read
// natively), a guess from the picture otherwise (OpenCV's capture; see
// keyGuesser), which costs a conversion of the whole picture to gray.
// The caller fills in Seq, Time and Wall.
func (d *decoder) frame(pic *picture, pre Preprocess) (Frame, error) {
	f, err := pic.apply(pre)
	if err != nil {
		return Frame{}, err
	}
	f.Key, f.KeyKnown = pic.key, pic.keyKnown
	if !pic.keyKnown {
		if pix, w, h, stride, ok := pic.lumaRows(); ok {
			f.KeyGuessed = d.guess.observe(d.seq, pix, w, h, stride)
			f.Key = f.KeyGuessed
		}
	}
	return f, nil
}

// errStopDecoding, returned by a frameFunc, ends decoding without error.
var errStopDecoding = errors.New("stop decoding")

// frameFunc handles the decoded frame d.seq. pic is valid only during the
// call; ok reports whether pts is the decoder's own (not extrapolated).
type frameFunc func(pic *picture, pts time.Duration, ok bool) error

// newDecoder wraps an opened reader; it takes ownership of r.
func newDecoder(r videoReader) *decoder {
	declared := r.get(gocv.VideoCaptureFPS)
	if !validRate(declared) {
		declared = 0
	}
	return &decoder{src: r, clock: ptsClock{declared: declared}, declaredCount: r.get(gocv.VideoCaptureFrameCount)}
}

// openFile opens the video file at path and checks the preprocessing
// against its frame size. Files whose pictures have an 8-bit luma plane
// and no rotation are read by libavformat and libavcodec directly and
// their luma read as it is; any other through OpenCV's FFmpeg backend,
// whose pictures are converted to BGR. Both give the same frames at the
// same times (see physd_file). Errors wrap fs.ErrNotExist, ErrNotVideo,
// ErrInvalidOption or the context's error.
func openFile(ctx context.Context, path string, pre Preprocess) (*decoder, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file: %w", ErrNotVideo)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var r videoReader
	if f, err := openAVFile(path); err == nil {
		r = f
	} else {
		c, cerr := openCapture(captureSpec{uri: path, api: capAPIFFmpeg})
		if cerr != nil {
			return nil, fmt.Errorf("FFmpeg cannot open it (%v): %w", cerr, ErrNotVideo)
		}
		r = c
	}
	d := newDecoder(r)
	if err := d.checkFrame(pre); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// checkFrame checks pre against the frame size the capture declares, if it
// declares one.
func (d *decoder) checkFrame(pre Preprocess) error {
	w, h := int(d.src.get(gocv.VideoCaptureFrameWidth)), int(d.src.get(gocv.VideoCaptureFrameHeight))
	if w > 0 && h > 0 {
		return pre.CheckFrame(w, h)
	}
	return nil
}

// Close releases the reader.
func (d *decoder) Close() { d.src.Close() }

// each decodes frames and calls fn for each, until the end of the stream
// (it returns nil with d.eof set), until fn returns errStopDecoding (nil),
// or until fn or decoding fails or ctx is done (the error).
func (d *decoder) each(ctx context.Context, fn frameFunc) error {
	pic := newPicture()
	defer pic.close()
	empty := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		d.readStart = time.Now()
		if !d.src.read(pic) {
			d.eof = true
			return nil
		}
		d.lastReadTook = time.Since(d.readStart)
		if pic.empty() {
			d.failed++
			if empty++; empty > maxEmptyReads {
				return fmt.Errorf("%d consecutive reads returned no image after frame %d: %w", empty, d.seq, ErrNotVideo)
			}
			continue
		}
		empty = 0
		pts, ok := d.clock.next(d.src.get(gocv.VideoCapturePosMsec))
		if err := fn(pic, pts, ok); err != nil {
			if errors.Is(err, errStopDecoding) {
				return nil
			}
			return err
		}
		d.seq++
	}
}

// readAhead is how many frames eachAhead's reader may decode beyond the
// one being handled.
const readAhead = 2

// aheadRead is one Read of eachAhead's reader: a frame (or an empty read), or
// the end of the stream.
type aheadRead struct {
	m      *picture
	posMs  float64 // CAP_PROP_POS_MSEC right after the read
	empty  bool
	eof    bool
	start  time.Time
	took   time.Duration
	reader error // ctx's error, when the reader stopped for it
}

// eachAhead is each with decoding on a goroutine of its own: while fn
// handles frame k on the caller's goroutine, the capture decodes frames
// k+1 … k+readAhead into pictures of a small pool, so a whole-file read
// keeps both cores busy.
//
// The caller's side does everything each does after a Read — counting
// empty reads, the presentation-time clock, d.seq, fn — in the same order
// on the same values, so the frames, their times and every counter are
// the same as each's. Frames the reader decoded past the point where fn
// stopped are dropped unseen: they change no state (the clock, d.failed
// and d.eof advance only for reads the caller takes).
func (d *decoder) eachAhead(ctx context.Context, fn frameFunc) error {
	free := make(chan *picture, readAhead+1)
	for range readAhead + 1 {
		free <- newPicture()
	}
	reads := make(chan aheadRead, readAhead)
	stop := make(chan struct{})
	go func() {
		defer close(reads)
		for {
			var m *picture
			select {
			case m = <-free:
			case <-stop:
				return
			}
			r := aheadRead{m: m}
			select {
			case <-stop: // the caller is done: no read it would drop
				free <- m
				return
			default:
			}
			if err := ctx.Err(); err != nil {
				r.reader = err
			} else {
				r.start = time.Now()
				if !d.src.read(r.m) {
					r.eof = true
				} else {
					r.took = time.Since(r.start)
					r.empty = r.m.empty()
					if !r.empty {
						r.posMs = d.src.get(gocv.VideoCapturePosMsec)
					}
				}
			}
			select {
			case reads <- r:
			case <-stop:
				free <- r.m
				return
			}
			if r.eof || r.reader != nil {
				return
			}
		}
	}()
	err := d.takeReads(ctx, reads, free, fn)
	close(stop)
	for r := range reads { // wait for the reader: the capture is then idle
		free <- r.m
	}
	close(free)
	for m := range free {
		m.close()
	}
	return err
}

// takeReads is eachAhead's caller side: each's loop body on the reads
// the reader sends, in order.
func (d *decoder) takeReads(ctx context.Context, reads <-chan aheadRead, free chan<- *picture, fn frameFunc) error {
	empty := 0
	for r := range reads {
		err := func() error {
			defer func() { free <- r.m }()
			if err := ctx.Err(); err != nil {
				return err
			}
			if r.reader != nil {
				return r.reader
			}
			d.readStart = r.start
			if r.eof {
				d.eof = true
				return errStopDecoding
			}
			d.lastReadTook = r.took
			if r.empty {
				d.failed++
				if empty++; empty > maxEmptyReads {
					return fmt.Errorf("%d consecutive reads returned no image after frame %d: %w", empty, d.seq, ErrNotVideo)
				}
				return nil
			}
			empty = 0
			pts, ok := d.clock.next(r.posMs)
			if err := fn(r.m, pts, ok); err != nil {
				return err
			}
			d.seq++
			return nil
		}()
		if errors.Is(err, errStopDecoding) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// containerDuration is the duration the container declares, as OpenCV
// derives it: frame count / declared rate (0 if unknown).
func (d *decoder) containerDuration() time.Duration {
	if d.clock.declared <= 0 || !(d.declaredCount > 0) || d.declaredCount > 1e12 {
		return 0
	}
	return secondsToDuration(d.declaredCount / d.clock.declared)
}

// truncation estimates how many frames were lost when decoding stopped
// before the end the container promises. Both the declared frame count and
// the declared duration must be short of the decoded ones by more than one
// frame. For containers without a frame index OpenCV estimates the count
// from duration × rate, so one frame of difference is rounding.
func (d *decoder) truncation(t Timing) int {
	step := t.MedianStep
	dur := d.containerDuration()
	if step <= 0 || dur <= 0 {
		return 0
	}
	byTime := math.Round(float64(dur-(d.clock.last+step)) / float64(step))
	byCount := math.Round(d.declaredCount) - float64(d.seq)
	lost := math.Min(byTime, byCount)
	if lost <= 1 {
		return 0
	}
	return int(lost)
}
