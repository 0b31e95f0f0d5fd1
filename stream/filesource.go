package stream

import (
	"context"
	"fmt"
	"time"
)

// FileSourceOptions configures a FileSource.
type FileSourceOptions struct {
	Preprocess
	// FPS > 0 overrides the container's frame rate: Time becomes Seq/FPS
	// (and Realtime paces at FPS). 0 keeps the container's presentation
	// times. It must lie in [0.001, 1e7].
	FPS float64
	// Realtime paces the frames by their presentation time: frame Time is
	// emitted no earlier than the open time + Time, as a camera would
	// deliver it. Otherwise frames come as fast as they decode.
	Realtime bool
	// Loop restarts the file at its end instead of returning io.EOF. Seq
	// and Time keep increasing across loops: the first frame of a loop
	// gets the last frame's Time plus one frame step, so a consumer sees
	// the seam as a jump in content, not in time.
	Loop bool
}

// fallbackStep is the loop seam step used when neither the frame times
// nor the container say anything about the rate (e.g. a one-frame file).
const fallbackStep = 40 * time.Millisecond

// FileSource plays a video file through OpenCV's FFmpeg backend, with the
// presentation-time rules of ReadFile (see the package documentation). It
// is immutable after construction; Run may be called again and starts from
// the beginning of the file.
type FileSource struct {
	path string
	opt  FileSourceOptions
}

// NewFileSource checks the options and that path opens as a video whose
// frames fit the preprocessing. Errors name the path and wrap
// fs.ErrNotExist, ErrNotVideo or ErrInvalidOption, or ErrNoOpenCV in a
// nocv build.
func NewFileSource(path string, opt FileSourceOptions) (*FileSource, error) {
	s := &FileSource{path: path, opt: opt}
	if err := opt.Preprocess.Validate(); err != nil {
		return nil, s.wrap(err)
	}
	if !(opt.FPS == 0 || opt.FPS >= MinFPS && opt.FPS <= maxFPS) { // also NaN
		return nil, s.wrap(fmt.Errorf("FPS = %v: must be in [%g, %g] (or 0 to use the container's times): %w", opt.FPS, MinFPS, maxFPS, ErrInvalidOption))
	}
	if !haveOpenCV {
		return nil, s.wrap(ErrNoOpenCV)
	}
	if err := probeFile(path, opt.Preprocess); err != nil {
		return nil, s.wrap(err)
	}
	return s, nil
}

// Name returns "file:" followed by the path.
func (s *FileSource) Name() string { return "file:" + s.path }

// wrap names the source in an error.
func (s *FileSource) wrap(err error) error { return fmt.Errorf("stream: %s: %w", s.Name(), err) }

// Run decodes the file and emits its frames (see Source). Frame.Time is
// the presentation time (continued across loops), Frame.Wall the time Run
// opened the file plus Time. Without Loop, Run returns io.EOF at the end
// of the file.
func (s *FileSource) Run(ctx context.Context, emit func(Frame) error) error {
	return s.run(ctx, emit)
}

// emitError carries an error returned by emit out of a decoding callback,
// so that Run can return it unchanged.
type emitError struct{ err error }

func (e emitError) Error() string { return e.err.Error() }
func (e emitError) Unwrap() error { return e.err }
