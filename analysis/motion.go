package analysis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/motion"
)

// ErrCameraMotion wraps a failure to measure the camera's own motion or
// to move it out of the frames.
var ErrCameraMotion = errors.New("camera motion")

// Motion says how the camera's own motion is measured.
type Motion struct {
	// Off measures nothing: the certificate gets no camera track.
	Off bool
	// Reference, when set, is measured instead of the frames.
	Reference *Reference
	// BestEffort is the daemon's policy for a window it cannot measure:
	// an unusable reference falls back to the frames, and a failed
	// measurement leaves the window without a camera track (logged). Off,
	// both are errors, as a one-shot command wants them.
	BestEffort bool
	// Cache keeps the measurement's per-frame work for the next
	// overlapping windows (nil: none).
	Cache *motion.Cache
}

// Reference is a region of the raw frames that should stay still, as
// patches per clip and frame (stream.Frame.Ref).
type Reference struct {
	// Name says which region it is in errors and logs (e.g. its
	// rectangle).
	Name    string
	Patches [][][]float64
	W, H    int
	// Scale turns patch pixels into the clips' pixels
	// (motion.ReferenceScale).
	Scale motion.Shift
}

// Measure measures the camera's motion over clips and, when it is
// removed (Applied), moves their frames back by it, in place. log (nil:
// discarded) receives BestEffort's warnings.
func (m Motion) Measure(ctx context.Context, clips []estimator.Clip, log *slog.Logger) (*motion.Track, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t, err := m.measure(ctx, clips, log)
	if err != nil {
		return nil, err
	}
	if err := t.StabilizeClips(clips); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCameraMotion, err)
	}
	return t, nil
}

// measure measures the camera's motion over clips without moving them;
// the caller stabilises the clips when the track is Applied.
func (m Motion) measure(ctx context.Context, clips []estimator.Clip, log *slog.Logger) (*motion.Track, error) {
	if m.Off || len(clips) == 0 {
		return nil, nil
	}
	fromFrames := func() (*motion.Track, error) {
		return motion.MeasureClipsOnly(ctx, clips, motion.Options{Cache: m.Cache})
	}
	var t *motion.Track
	var err error
	if r := m.Reference; r != nil && len(r.Patches) == len(clips) {
		t, err = motion.MeasureReference(ctx, r.Patches, r.W, r.H, r.Scale)
		if err != nil && ctx.Err() == nil {
			if !m.BestEffort {
				return nil, fmt.Errorf("%w: %s: %w", ErrCameraMotion, r.Name, err)
			}
			// Something stands in front of the reference, or it is plain:
			// the frames tell the camera's motion instead.
			log.Warn("camera reference unusable for this window; measuring the camera's motion from the frames", "reference", r.Name, "err", err)
			t, err = fromFrames()
		}
	} else if r != nil && !m.BestEffort {
		return nil, fmt.Errorf("%w: %s: patches of %d clips for %d clips", ErrCameraMotion, r.Name, len(r.Patches), len(clips))
	} else {
		t, err = fromFrames()
	}
	if err != nil {
		if ctx.Err() != nil || !m.BestEffort {
			return nil, fmt.Errorf("%w: %w", ErrCameraMotion, err)
		}
		log.Warn("camera motion not measured", "err", err)
		return nil, nil
	}
	return t, nil
}
