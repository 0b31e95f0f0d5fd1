package main

import (
	"fmt"
	"strings"

	"github.com/physd/physd/analysis"
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

// cameraMotionOf is how the window analysis measures the camera's own
// motion for --reference: from the frames themselves, on the reference
// region's patches refs, or not at all. The frames were cropped to roi
// (zero: the whole srcW×srcH frame).
func cameraMotionOf(choice cameraChoice, clips []estimator.Clip, refs refPatches, roi stream.ROI, srcW, srcH int) (analysis.Motion, error) {
	if choice.off || len(clips) == 0 {
		return analysis.Motion{Off: true}, nil
	}
	if choice.region.IsZero() {
		return analysis.Motion{}, nil
	}
	ref := choice.region
	name := fmt.Sprintf("--reference %d,%d,%d,%d", ref.X, ref.Y, ref.W, ref.H)
	if roi.IsZero() {
		roi = stream.ROI{W: srcW, H: srcH}
	}
	if roi.W <= 0 || roi.H <= 0 {
		return analysis.Motion{}, fmt.Errorf("camera motion: --reference: the video's frame size is unknown")
	}
	if len(refs.patches) != len(clips) {
		return analysis.Motion{}, fmt.Errorf("camera motion: --reference: patches of %d videos for %d clips", len(refs.patches), len(clips))
	}
	// Patch pixels → source pixels → the estimator's frame pixels.
	scale := motion.ReferenceScale(ref.W, ref.H, refs.w, refs.h, roi.W, roi.H, clips[0].W, clips[0].H)
	return analysis.Motion{Reference: &analysis.Reference{Name: name, Patches: refs.patches, W: refs.w, H: refs.h, Scale: scale}}, nil
}
