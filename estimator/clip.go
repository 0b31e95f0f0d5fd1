package estimator

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/physd/physd/internal/finite"
)

// Clip is one trajectory: frames sampled every Dt seconds.
type Clip struct {
	W, H   int
	Frames [][]float64 // row-major gray in [0, 1], len W·H each
	Dt     float64     // sampling step, seconds
	// Keys are the indices in Frames of the clip's key frames, in
	// increasing order: intra-coded pictures (frame.Frame.Key), whose
	// re-quantisation steps the whole picture without any motion of the
	// scene. nil when the source did not tell them (the zero value:
	// unknown); empty when it told and there are none. The fit does not
	// read them; the certificate's impulse test does (Result.Keys).
	Keys []int
	// KeysGuessed reports that Keys were guessed from the pictures
	// (frame.Frame.KeyGuessed), the source telling no frame types.
	KeysGuessed bool
}

// MinFrames is the fewest frames a clip may have: the stencil needs three,
// and the fit of three coefficients a few more.
const MinFrames = 8

// Errors of windows Fit refuses before fitting; the message names the
// clip, frame and pixel.
var (
	// ErrInvalidClip reports a clip that cannot be fitted: a frame size
	// that is not positive or differs from the first clip's, a time step
	// that is not positive and finite or differs from the first clip's, a
	// frame with the wrong number of pixels, a NaN or infinite pixel, or
	// too few frames (then also ErrTooFewFrames).
	ErrInvalidClip = errors.New("invalid clip")
	// ErrTooFewFrames reports a clip with fewer than MinFrames frames.
	ErrTooFewFrames = errors.New("too few frames")
	// ErrNoMotion reports a window in which nothing moves: no clip has
	// two different frames, or (with the low-rank encoder) the frames
	// differ only in overall brightness.
	ErrNoMotion = errors.New("no motion")
)

func validateClips(clips []Clip) error {
	if len(clips) == 0 {
		return ErrNoClips
	}
	w, h, dt := clips[0].W, clips[0].H, clips[0].Dt
	for i, c := range clips {
		switch {
		case c.W <= 0 || c.H <= 0:
			return fmt.Errorf("clip %d: frame size %d×%d is not positive: %w", i, c.W, c.H, ErrInvalidClip)
		case c.W != w || c.H != h:
			return fmt.Errorf("clip %d: frame size %d×%d differs from clip 0's %d×%d: %w", i, c.W, c.H, w, h, ErrInvalidClip)
		case !(c.Dt > 0) || math.IsInf(c.Dt, 0):
			return fmt.Errorf("clip %d: time step %g s is not positive and finite: %w", i, c.Dt, ErrInvalidClip)
		case math.Abs(c.Dt-dt) > 1e-9*dt:
			return fmt.Errorf("clip %d: time step %g s differs from clip 0's %g s: %w", i, c.Dt, dt, ErrInvalidClip)
		case len(c.Frames) < MinFrames:
			return fmt.Errorf("clip %d: %d frames, need at least %d: %w: %w", i, len(c.Frames), MinFrames, ErrInvalidClip, ErrTooFewFrames)
		}
		if w*h/w != h { // cannot be a frame's length
			return fmt.Errorf("clip %d: frame size %d×%d is too large: %w", i, c.W, c.H, ErrInvalidClip)
		}
		for k, f := range c.Frames {
			if len(f) != w*h {
				return fmt.Errorf("clip %d frame %d: %d pixels, want %d×%d: %w", i, k, len(f), w, h, ErrInvalidClip)
			}
			if j, v, bad := finite.First(f); bad {
				return fmt.Errorf("clip %d frame %d: pixel %d is %g: %w", i, k, j, v, ErrInvalidClip)
			}
		}
	}
	for _, c := range clips {
		for _, f := range c.Frames[1:] {
			if !slices.Equal(f, c.Frames[0]) {
				return nil
			}
		}
	}
	return fmt.Errorf("%d clips of %d×%d frames: no clip has two different frames: %w", len(clips), w, h, ErrNoMotion)
}

// ClipKeys are clips' key frames (Clip.Keys) as Result.Keys holds them,
// one slice per clip, and whether any were guessed; nil when no clip's
// are known.
func ClipKeys(clips []Clip) (keys [][]int, guessed bool) {
	known := false
	for _, c := range clips {
		known = known || c.Keys != nil
		guessed = guessed || c.KeysGuessed
	}
	if !known {
		return nil, false
	}
	keys = make([][]int, len(clips))
	for m, c := range clips {
		keys[m] = c.Keys
	}
	return keys, guessed
}
