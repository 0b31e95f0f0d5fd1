package stream

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"gocv.io/x/gocv"
)

// DefaultMaxFrames is the MaxFrames used when FileOptions.MaxFrames is 0.
const DefaultMaxFrames = 100000

const (
	// maxEmptyReads bounds consecutive reads that succeed without an image.
	maxEmptyReads = 100
	// recentSteps is how many recent reliable steps extrapolation uses.
	recentSteps = 15
	// minFPS and maxFPS bound FileOptions.FPS.
	minFPS, maxFPS = 1e-3, 1e7
)

// FileOptions configures ReadFile.
type FileOptions struct {
	Preprocess
	// FPS > 0 overrides the container's frame rate: frame times become
	// Seq/FPS, and From/To select on those times. 0 keeps the container's.
	// It must lie in [0.001, 1e7].
	FPS float64
	// From and To bound the segment to keep, in seconds of presentation
	// time: a frame is kept if From <= Time < To. To 0 means the end.
	From, To float64
	// MaxFrames bounds the number of frames kept (default DefaultMaxFrames).
	// A longer segment is an error wrapping ErrTooManyFrames.
	MaxFrames int
}

// validate checks the options; errors wrap ErrInvalidOption.
func (o FileOptions) validate() error {
	if err := o.Preprocess.Validate(); err != nil {
		return err
	}
	if !(o.FPS == 0 || o.FPS >= minFPS && o.FPS <= maxFPS) { // also NaN
		return fmt.Errorf("FPS = %v: must be in [%g, %g] (or 0 to use the container's rate): %w", o.FPS, minFPS, maxFPS, ErrInvalidOption)
	}
	if math.IsNaN(o.From) || math.IsInf(o.From, 0) || o.From < 0 {
		return fmt.Errorf("From = %v: must be a time >= 0 in seconds: %w", o.From, ErrInvalidOption)
	}
	if math.IsNaN(o.To) || math.IsInf(o.To, 0) || o.To < 0 {
		return fmt.Errorf("To = %v: must be a time >= 0 in seconds (0 = end): %w", o.To, ErrInvalidOption)
	}
	if o.To != 0 && o.From >= o.To {
		return fmt.Errorf("From = %v, To = %v: From must be before To: %w", o.From, o.To, ErrInvalidOption)
	}
	if o.MaxFrames < 0 {
		return fmt.Errorf("MaxFrames = %d: must be >= 0 (0 = %d): %w", o.MaxFrames, DefaultMaxFrames, ErrInvalidOption)
	}
	// Durations overflow beyond ~292 years; far beyond any video.
	if o.From > 1e9 || o.To > 1e9 {
		return fmt.Errorf("From = %v, To = %v: unreasonably large: %w", o.From, o.To, ErrInvalidOption)
	}
	return nil
}

// ReadFile decodes the video file at path with OpenCV's FFmpeg backend and
// returns the preprocessed frames of the segment [From, To), along with what
// was learned about their timing (see AnalyzeTiming and the package
// documentation for how frame times are obtained).
//
// Frame.Time is the container's presentation time (or Seq/FPS with an
// override). When Timing.Irregular is false, the frames may be treated as
// evenly spaced at Timing.FPS.
//
// Errors name the path and wrap fs.ErrNotExist, ErrNotVideo,
// ErrInvalidOption, ErrEmptySegment, ErrTooManyFrames or the context's
// error.
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
	st, err := os.Stat(path)
	if err != nil {
		return fail(err)
	}
	if !st.Mode().IsRegular() {
		return fail(fmt.Errorf("not a regular file: %w", ErrNotVideo))
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}

	vc, err := gocv.VideoCaptureFileWithAPI(path, gocv.VideoCaptureFFmpeg)
	if vc != nil {
		defer vc.Close()
	}
	if err != nil || vc == nil || !vc.IsOpened() {
		return fail(fmt.Errorf("FFmpeg cannot open it: %w", ErrNotVideo))
	}
	declared := vc.Get(gocv.VideoCaptureFPS)
	if !validRate(declared) {
		declared = 0
	}
	if w, h := int(vc.Get(gocv.VideoCaptureFrameWidth)), int(vc.Get(gocv.VideoCaptureFrameHeight)); w > 0 && h > 0 {
		if err := opt.Preprocess.CheckFrame(w, h); err != nil {
			return fail(err)
		}
	}

	r := fileReader{vc: vc, opt: opt, declared: declared, declaredCount: vc.Get(gocv.VideoCaptureFrameCount)}
	if err := r.run(ctx); err != nil {
		return fail(err)
	}
	if r.seq == 0 {
		return fail(fmt.Errorf("no frame could be decoded: %w", ErrNotVideo))
	}
	if len(r.frames) == 0 {
		first, last := r.first, r.last
		if opt.FPS > 0 {
			first, last = 0, secondsToDuration(float64(r.seq-1)/opt.FPS)
		}
		return fail(fmt.Errorf("From = %v, To = %v: the %d decoded frames span %s–%s: %w",
			opt.From, opt.To, r.seq, fmtSec(first), fmtSec(last), ErrEmptySegment))
	}

	t := AnalyzeTiming(r.reliable, declared, opt.FPS)
	t.Repaired, t.Failed = r.repaired, r.failed
	if r.failed > 0 {
		t.Assumed += fmt.Sprintf("; %d read(s) returned no image", r.failed)
	}
	if r.eof {
		if lost := r.truncation(t); lost > 0 {
			t.Failed += lost
			t.Assumed += fmt.Sprintf("; decoding stopped at %s but the container lasts %s: about %d frame(s) lost (truncated or corrupt file)",
				fmtSec(r.last), fmtSec(r.containerDuration()), lost)
		}
	}
	if r.repaired > 0 {
		t.Assumed += fmt.Sprintf("; %d frame time(s) reported by the decoder were unusable and extrapolated", r.repaired)
	}
	return r.frames, t, nil
}

// fileReader holds the state of one ReadFile call.
type fileReader struct {
	vc            *gocv.VideoCapture
	opt           FileOptions
	declared      float64 // declared rate, 0 if none
	declaredCount float64 // CAP_PROP_FRAME_COUNT

	frames       []Frame
	reliable     []time.Duration // trustworthy presentation times of kept frames
	recent       []time.Duration // last reliable steps, for repairs
	seq          int             // frames decoded so far
	first, last  time.Duration   // presentation times of the first/last decoded frame
	lastReliable bool            // whether last is a trustworthy time
	repaired     int
	failed       int
	eof          bool
}

// run decodes frames until the end of the file or of the segment.
func (r *fileReader) run(ctx context.Context) error {
	mat := gocv.NewMat()
	defer mat.Close()
	from := secondsToDuration(r.opt.From)
	to := secondsToDuration(r.opt.To)
	empty := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !r.vc.Read(&mat) {
			r.eof = true
			return nil
		}
		if mat.Empty() {
			r.failed++
			if empty++; empty > maxEmptyReads {
				return fmt.Errorf("%d consecutive reads returned no image after frame %d: %w", empty, r.seq, ErrNotVideo)
			}
			continue
		}
		empty = 0

		pts, ok := r.presentationTime(r.vc.Get(gocv.VideoCapturePosMsec))
		ft := pts
		if r.opt.FPS > 0 {
			ft = time.Duration(math.Round(float64(r.seq) / r.opt.FPS * float64(time.Second)))
		}
		if to > 0 && ft >= to {
			return nil
		}
		if ft >= from {
			if len(r.frames) >= r.opt.MaxFrames {
				return fmt.Errorf("MaxFrames = %d: the segment has more frames; narrow From/To or raise MaxFrames: %w", r.opt.MaxFrames, ErrTooManyFrames)
			}
			f, err := r.opt.Preprocess.Apply(mat)
			if err != nil {
				return fmt.Errorf("frame %d: %w", r.seq, err)
			}
			f.Seq, f.Time = r.seq, ft
			r.frames = append(r.frames, f)
			if ok {
				r.reliable = append(r.reliable, pts)
			}
		}
		r.seq++
	}
}

// presentationTime converts the POS_MSEC read after a frame into its time.
// It reports ok=false, and extrapolates, when the value is unusable (see
// the package documentation).
func (r *fileReader) presentationTime(ms float64) (t time.Duration, ok bool) {
	ok = !math.IsNaN(ms) && !math.IsInf(ms, 0) && ms >= 0 && ms < 1e12
	if ok {
		t = time.Duration(math.Round(ms * float64(time.Millisecond)))
	}
	switch {
	case r.seq == 0:
		if !ok {
			t = 0
			r.repaired++
		}
		r.first = t
	case !ok || t <= r.last:
		t, ok = r.last+r.stepEstimate(), false
		r.repaired++
	case r.lastReliable:
		if len(r.recent) == recentSteps {
			copy(r.recent, r.recent[1:])
			r.recent = r.recent[:recentSteps-1]
		}
		r.recent = append(r.recent, t-r.last)
	}
	r.last = t
	r.lastReliable = ok
	return t, ok
}

// stepEstimate is the step used to extrapolate an unusable frame time: the
// median of the recent reliable steps, else 1/declared rate, else 0.
func (r *fileReader) stepEstimate() time.Duration {
	if len(r.recent) > 0 {
		s := slices.Clone(r.recent)
		slices.Sort(s)
		return s[len(s)/2]
	}
	if r.declared > 0 {
		return time.Duration(math.Round(float64(time.Second) / r.declared))
	}
	return 0
}

// containerDuration is the duration the container declares, as OpenCV
// derives it: frame count / declared rate (0 if unknown).
func (r *fileReader) containerDuration() time.Duration {
	if r.declared <= 0 || !(r.declaredCount > 0) || r.declaredCount > 1e12 {
		return 0
	}
	return secondsToDuration(r.declaredCount / r.declared)
}

// truncation estimates how many frames were lost when decoding stopped
// before the end the container promises. Both the declared frame count and
// the declared duration must be short of the decoded ones by more than one
// frame. For containers without a frame index OpenCV estimates the count
// from duration × rate, so one frame of difference is rounding.
func (r *fileReader) truncation(t Timing) int {
	step := t.MedianStep
	dur := r.containerDuration()
	if step <= 0 || dur <= 0 {
		return 0
	}
	byTime := math.Round(float64(dur-(r.last+step)) / float64(step))
	byCount := math.Round(r.declaredCount) - float64(r.seq)
	lost := math.Min(byTime, byCount)
	if lost <= 1 {
		return 0
	}
	return int(lost)
}

// secondsToDuration converts validated seconds to a Duration.
func secondsToDuration(s float64) time.Duration {
	return time.Duration(math.Round(s * float64(time.Second)))
}
