package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/motion"
	"github.com/physd/physd/stream"
)

// The --reference choices besides a region.
const (
	referenceAuto = "auto"
	referenceOff  = "off"
)

// maxReferenceSide caps the side of the reference patches kept in memory:
// a larger region is read resized to this square.
const maxReferenceSide = 128

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

// removeCameraMotion measures the camera's own motion over the clips and,
// when it was detected, moves the clips' frames back by it (in place). The
// frames were read from paths with the options fo, cropped to roi (zero:
// the whole srcW×srcH frame). A reference region is read again from the
// same segment of each video, before the crop. It returns the track for
// the certificate, nil with --reference off.
func removeCameraMotion(ctx context.Context, choice cameraChoice, paths []string, clips []estimator.Clip, roi stream.ROI, srcW, srcH int, fo stream.FileOptions) (*motion.Track, error) {
	if choice.off || len(clips) == 0 {
		return nil, nil
	}
	var t *motion.Track
	var err error
	if choice.region.IsZero() {
		t, err = motion.MeasureClips(ctx, clips)
	} else if t, err = measureReference(ctx, choice.region, paths, clips, roi, srcW, srcH, fo); err == nil {
		err = t.StabilizeClips(clips)
	}
	if err != nil {
		return nil, fmt.Errorf("camera motion: %w", err)
	}
	return t, nil
}

// measureReference reads the reference region ref from each video (the
// same segment, frame for frame) and measures the camera's motion on it.
func measureReference(ctx context.Context, ref stream.ROI, paths []string, clips []estimator.Clip, roi stream.ROI, srcW, srcH int, fo stream.FileOptions) (*motion.Track, error) {
	if roi.IsZero() {
		roi = stream.ROI{W: srcW, H: srcH}
	}
	if roi.W <= 0 || roi.H <= 0 {
		return nil, fmt.Errorf("--reference: the video's frame size is unknown")
	}
	side := 0 // keep the region's own size
	pw, ph := ref.W, ref.H
	if max(ref.W, ref.H) > maxReferenceSide {
		side, pw, ph = maxReferenceSide, maxReferenceSide, maxReferenceSide
	}
	fo.Preprocess = stream.Preprocess{ROI: ref, Size: side}
	patches := make([][][]float64, len(paths))
	for i, path := range paths {
		got, _, err := stream.ReadFile(ctx, path, fo)
		if err != nil {
			return nil, fmt.Errorf("--reference %d,%d,%d,%d: %w", ref.X, ref.Y, ref.W, ref.H, err)
		}
		if len(got) != len(clips[i].Frames) {
			return nil, fmt.Errorf("--reference: %s gave %d frames of the region, %d of the video", path, len(got), len(clips[i].Frames))
		}
		for _, f := range got {
			patches[i] = append(patches[i], f.Pix)
		}
	}
	// Patch pixels → source pixels → the estimator's frame pixels.
	scale := motion.ReferenceScale(ref.W, ref.H, pw, ph, roi.W, roi.H, clips[0].W, clips[0].H)
	t, err := motion.MeasureReference(ctx, patches, pw, ph, scale)
	if err != nil {
		return nil, fmt.Errorf("--reference %d,%d,%d,%d: %w", ref.X, ref.Y, ref.W, ref.H, err)
	}
	return t, nil
}
