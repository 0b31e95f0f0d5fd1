package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/motion"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
)

// The --reference choices besides a region.
const (
	referenceAuto = "auto"
	referenceOff  = "off"
)

// cameraChoice is what --reference asked for: measure the camera's motion
// from the frames themselves (auto, the default), on a region of the raw
// frames that should stay still, or not at all.
type cameraChoice struct {
	off    bool
	region stream.ROI // zero: auto
}

func parseCameraChoice(s string) (cameraChoice, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", referenceAuto:
		return cameraChoice{}, nil
	case referenceOff:
		return cameraChoice{off: true}, nil
	}
	r, err := parseROI(s)
	if err != nil {
		return cameraChoice{}, fmt.Errorf("--reference: %w (or auto, or off)", err)
	}
	return cameraChoice{region: r}, nil
}

// refPatches are the reference region's patches of every video, per video
// and frame, as the frames' preprocessing cut them (Frame.Ref).
type refPatches struct {
	patches [][][]float64
	w, h    int
}

// add keeps one video's patches, if its frames carry any.
func (r *refPatches) add(frames []stream.Frame) {
	if p, w, h := window.Refs(frames); p != nil {
		r.patches, r.w, r.h = append(r.patches, p), w, h
	}
}

// measureCameraMotion measures the camera's own motion over the clips —
// from their frames, or on the reference region's patches refs — without
// touching them: when the track is Applied, the caller moves the clips'
// frames back by it (Track.StabilizeClips). The frames were cropped to
// roi (zero: the whole srcW×srcH frame). It returns the track for the
// certificate, nil with --reference off.
func measureCameraMotion(ctx context.Context, choice cameraChoice, clips []estimator.Clip, refs refPatches, roi stream.ROI, srcW, srcH int) (*motion.Track, error) {
	if choice.off || len(clips) == 0 {
		return nil, nil
	}
	var t *motion.Track
	var err error
	if choice.region.IsZero() {
		t, err = motion.MeasureClipsOnly(ctx, clips, motion.Options{})
	} else {
		t, err = measureReference(ctx, choice.region, clips, refs, roi, srcW, srcH)
	}
	if err != nil {
		return nil, fmt.Errorf("camera motion: %w", err)
	}
	return t, nil
}

// measureReference measures the camera's motion on the reference region
// ref's patches.
func measureReference(ctx context.Context, ref stream.ROI, clips []estimator.Clip, refs refPatches, roi stream.ROI, srcW, srcH int) (*motion.Track, error) {
	if roi.IsZero() {
		roi = stream.ROI{W: srcW, H: srcH}
	}
	if roi.W <= 0 || roi.H <= 0 {
		return nil, fmt.Errorf("--reference: the video's frame size is unknown")
	}
	if len(refs.patches) != len(clips) {
		return nil, fmt.Errorf("--reference: patches of %d videos for %d clips", len(refs.patches), len(clips))
	}
	// Patch pixels → source pixels → the estimator's frame pixels.
	scale := motion.ReferenceScale(ref.W, ref.H, refs.w, refs.h, roi.W, roi.H, clips[0].W, clips[0].H)
	t, err := motion.MeasureReference(ctx, refs.patches, refs.w, refs.h, scale)
	if err != nil {
		return nil, fmt.Errorf("--reference %d,%d,%d,%d: %w", ref.X, ref.Y, ref.W, ref.H, err)
	}
	return t, nil
}
