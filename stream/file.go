package stream

import (
	"fmt"
	"math"
	"time"
)

// DefaultMaxFrames is the MaxFrames used when FileOptions.MaxFrames is 0.
const DefaultMaxFrames = 100000

// MinFPS is the lowest frame rate accepted as an option (one frame every
// 1000 s): the lower bound of FileOptions.FPS, FileSourceOptions.FPS,
// V4L2Options.FPS and the synthetic camera's (package simcam).
const MinFPS = 1e-3

const (
	// maxEmptyReads bounds consecutive reads that succeed without an image.
	maxEmptyReads = 100
	// maxFPS bounds FileOptions.FPS and FileSourceOptions.FPS from above.
	maxFPS = 1e7
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
	if !(o.FPS == 0 || o.FPS >= MinFPS && o.FPS <= maxFPS) { // also NaN
		return fmt.Errorf("FPS = %v: must be in [%g, %g] (or 0 to use the container's rate): %w", o.FPS, MinFPS, maxFPS, ErrInvalidOption)
	}
	if math.IsNaN(o.From) || math.IsInf(o.From, 0) || o.From < 0 {
		return fmt.Errorf("option From = %v: must be a time >= 0 in seconds: %w", o.From, ErrInvalidOption)
	}
	if math.IsNaN(o.To) || math.IsInf(o.To, 0) || o.To < 0 {
		return fmt.Errorf("option To = %v: must be a time >= 0 in seconds (0 = end): %w", o.To, ErrInvalidOption)
	}
	if o.To != 0 && o.From >= o.To {
		return fmt.Errorf("option From = %v, To = %v: From must be before To: %w", o.From, o.To, ErrInvalidOption)
	}
	if o.MaxFrames < 0 {
		return fmt.Errorf("MaxFrames = %d: must be >= 0 (0 = %d): %w", o.MaxFrames, DefaultMaxFrames, ErrInvalidOption)
	}
	// Durations overflow beyond ~292 years; far beyond any video.
	if o.From > 1e9 || o.To > 1e9 {
		return fmt.Errorf("option From = %v, To = %v: unreasonably large: %w", o.From, o.To, ErrInvalidOption)
	}
	return nil
}

// secondsToDuration converts validated seconds to a Duration.
func secondsToDuration(s float64) time.Duration {
	return time.Duration(math.Round(s * float64(time.Second)))
}
