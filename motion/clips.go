package motion

import (
	"context"

	"github.com/physd/physd/estimator"
)

// MeasureClips measures the camera's own motion over the estimator's
// clips (Measure) and, when it was detected and can be told from the
// object's, moves their frames back by it in place (Track.Stabilize). All
// clips must share one frame size.
func MeasureClips(ctx context.Context, clips []estimator.Clip, opt Options) (*Track, error) {
	t, err := MeasureClipsOnly(ctx, clips, opt)
	if err != nil || t == nil {
		return nil, err
	}
	return t, t.StabilizeClips(clips)
}

// MeasureClipsOnly is MeasureClips without moving the frames: when the
// track is Applied, the caller moves them (StabilizeClips), so that work
// on the frames as read can go on meanwhile.
func MeasureClipsOnly(ctx context.Context, clips []estimator.Clip, opt Options) (*Track, error) {
	if len(clips) == 0 {
		return nil, nil
	}
	frames := make([][][]float64, len(clips))
	for i, c := range clips {
		frames[i] = c.Frames
	}
	return Measure(ctx, frames, clips[0].W, clips[0].H, opt)
}

// StabilizeClips moves the clips' frames back by the track's shifts, in
// place, when the track was applied (Stabilize).
func (t *Track) StabilizeClips(clips []estimator.Clip) error {
	if len(clips) == 0 {
		return nil
	}
	frames := make([][][]float64, len(clips))
	for i, c := range clips {
		frames[i] = c.Frames
	}
	moved, err := t.Stabilize(frames, clips[0].W, clips[0].H)
	if err != nil {
		return err
	}
	for i := range clips {
		clips[i].Frames = moved[i]
	}
	return nil
}
