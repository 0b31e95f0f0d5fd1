package window

import (
	"math"
	"slices"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/frame"
)

// ClipOf is the estimator's clip of frames (all of one size) spaced by dt
// seconds, with their key frames (KeysOf). The clip shares the frames'
// pixels.
func ClipOf(frames []frame.Frame, dt float64) estimator.Clip {
	c := estimator.Clip{Dt: dt}
	if len(frames) > 0 {
		c.W, c.H = frames[0].W, frames[0].H
	}
	c.Frames = make([][]float64, len(frames))
	for i, f := range frames {
		c.Frames[i] = f.Pix
	}
	c.Keys, c.KeysGuessed = KeysOf(frames)
	return c
}

// Refs are the frames' reference patches (frame.Frame.Ref) and their
// size, for measuring the camera's motion; nil when they carry none.
func Refs(frames []frame.Frame) (patches [][]float64, w, h int) {
	if len(frames) == 0 || frames[0].Ref == nil {
		return nil, 0, 0
	}
	patches = make([][]float64, len(frames))
	for i, f := range frames {
		patches[i] = f.Ref
	}
	return patches, frames[0].RefW, frames[0].RefH
}

// Clip is the window as the estimator's clip.
func (w Window) Clip() estimator.Clip { return ClipOf(w.Frames, w.Dt) }

// EventClips are events as the estimator's clips of a multi-trajectory
// fit, with one shared step: the median of every frame step of every
// event, as they come from one camera.
func EventClips(evs []*Event) []estimator.Clip {
	var steps []float64
	for _, e := range evs {
		for i := 1; i < len(e.Frames); i++ {
			steps = append(steps, (e.Frames[i].Time - e.Frames[i-1].Time).Seconds())
		}
	}
	dt := math.NaN()
	if len(steps) > 0 {
		slices.Sort(steps)
		dt = steps[len(steps)/2]
	}
	clips := make([]estimator.Clip, len(evs))
	for i, e := range evs {
		clips[i] = ClipOf(e.Frames, dt)
	}
	return clips
}
