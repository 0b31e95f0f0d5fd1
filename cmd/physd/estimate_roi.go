package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/physd/physd/internal/figure"
	"github.com/physd/physd/roi"
	"github.com/physd/physd/stream"
)

// The region of interest modes of 'physd estimate --roi'.
const (
	roiGiven = "given" // x,y,w,h on the command line
	roiAuto  = "auto"  // found by package roi
	roiFull  = "full"  // the whole frame
)

// roiChoice is what --roi asked for.
type roiChoice struct {
	mode  string
	given stream.ROI
	// strict: --roi auto was given explicitly, so finding nothing is an
	// error; without --roi, the whole frame is used instead and the report
	// says why.
	strict bool
}

// parseROIChoice reads --roi: "" (automatic, the whole frame if nothing
// oscillates), "auto" (automatic, an error if nothing oscillates), "full"
// or x,y,w,h.
func parseROIChoice(s string) (roiChoice, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return roiChoice{mode: roiAuto}, nil
	case roiAuto:
		return roiChoice{mode: roiAuto, strict: true}, nil
	case roiFull:
		return roiChoice{mode: roiFull}, nil
	}
	r, err := parseROI(s)
	if err != nil {
		return roiChoice{}, fmt.Errorf("%w (or auto, or full)", err)
	}
	return roiChoice{mode: roiGiven, given: r}, nil
}

// roiReport is the "roi" object of 'physd estimate --json': the region the
// estimator saw and how it was chosen.
type roiReport struct {
	// Mode is given, auto or full. An automatic search that found nothing
	// falls back to full, and Fallback says why.
	Mode string `json:"mode"`
	// Region is the crop in the video's pixels (the whole frame for full).
	Region roi.Region `json:"region"`
	// SrcW and SrcH are the video's frame size.
	SrcW int `json:"src_w"`
	SrcH int `json:"src_h"`
	// OutW and OutH are the frames the estimator saw: the region resized
	// with its aspect ratio kept.
	OutW int `json:"out_w"`
	OutH int `json:"out_h"`
	// Search is the automatic search's result: frequency, score, the
	// oscillating cells' box, the alternatives it rejected.
	Search *roi.Result `json:"search,omitempty"`
	// Fallback is why an automatic search used the whole frame.
	Fallback string `json:"fallback,omitempty"`
	// SearchMS is the search's time, reading included.
	SearchMS float64 `json:"search_ms,omitempty"`
}

// chooseRegion returns the preprocessing for the videos' frames and the
// report's roi object (its sizes filled in later by noteFrames). For an
// automatic region it reads the segment once at the search's grid
// resolution (roi.ScanFile) and runs roi.Find over all videos together;
// the second pass then reads only the region, at the estimator's
// resolution.
func chooseRegion(ctx context.Context, c roiChoice, paths []string, scan roi.ScanOptions, pre stream.Preprocess, log *slog.Logger) (stream.Preprocess, *roiReport, error) {
	rep := &roiReport{Mode: c.mode}
	switch c.mode {
	case roiGiven:
		pre.ROI = c.given
		return pre, rep, nil
	case roiFull:
		return pre, rep, nil
	}
	start := time.Now()
	res, err := searchRegion(ctx, paths, scan, pre.Size)
	rep.SearchMS = float64(time.Since(start)) / float64(time.Millisecond)
	if err != nil {
		if c.strict || !errors.Is(err, roi.ErrNoOscillation) && !errors.Is(err, roi.ErrInput) {
			return pre, nil, err
		}
		rep.Mode, rep.Fallback = roiFull, err.Error()
		log.Debug("automatic region of interest: using the whole frame", "why", err.Error())
		return pre, rep, nil
	}
	rep.Search = &res
	return res.Preprocess(pre), rep, nil
}

// searchRegion scans every video and finds their common oscillating
// region; the videos must share one frame size.
func searchRegion(ctx context.Context, paths []string, scan roi.ScanOptions, size int) (roi.Result, error) {
	var clips []roi.Clip
	var first roi.Grid
	for i, path := range paths {
		g, err := roi.ScanFile(ctx, path, scan)
		if err != nil {
			return roi.Result{}, err
		}
		if i == 0 {
			first = g
		} else if g.SrcW != first.SrcW || g.SrcH != first.SrcH {
			return roi.Result{}, fmt.Errorf("roi: %s is %d×%d but %s is %d×%d; one region needs one frame size (give --roi per size, or --roi full): %w",
				path, g.SrcW, g.SrcH, paths[0], first.SrcW, first.SrcH, roi.ErrInput)
		}
		clips = append(clips, g.Clip)
	}
	return roi.Find(clips, roi.Options{SrcW: first.SrcW, SrcH: first.SrcH, Size: size})
}

// noteFrames fills in the sizes the report could only learn from the
// frames: the video's and the output's, and the whole frame as the region
// of a full-frame run.
func (r *roiReport) noteFrames(f stream.Frame, pre stream.Preprocess) {
	r.SrcW, r.SrcH, r.OutW, r.OutH = f.SrcW, f.SrcH, f.W, f.H
	if pre.ROI.IsZero() {
		r.Region = roi.Region{W: f.SrcW, H: f.SrcH}
	} else {
		r.Region = roi.Region{X: pre.ROI.X, Y: pre.ROI.Y, W: pre.ROI.W, H: pre.ROI.H}
	}
}

// summary is the report's one-line description of the region.
func (r *roiReport) summary() string {
	s := fmt.Sprintf("%s %s of %d×%d → %d×%d", r.Mode, r.Region, r.SrcW, r.SrcH, r.OutW, r.OutH)
	if r.Search != nil {
		s += fmt.Sprintf(" (oscillating at %.3g Hz over %d cells", r.Search.FreqHz, r.Search.Cells)
		if r.Search.LeadingS > 0 {
			s += fmt.Sprintf(" in the first %.3g s", r.Search.LeadingS)
		}
		s += ")"
	}
	if r.Fallback != "" {
		s += " (automatic search found nothing: " + r.Fallback + ")"
	}
	return s
}

// scene is the figure's view of the camera picture with the region.
func (r *roiReport) scene(th stream.Thumbnail, ok bool) *figure.Scene {
	if !ok || r == nil {
		return nil
	}
	s := &figure.Scene{W: th.W, H: th.H, Pix: th.Pix, SrcW: th.SrcW, SrcH: th.SrcH,
		Region: [4]int{r.Region.X, r.Region.Y, r.Region.W, r.Region.H}, Label: r.Mode + " region"}
	if r.Search != nil {
		a := r.Search.Active
		s.Active = &[4]int{a.X, a.Y, a.W, a.H}
		s.Label = fmt.Sprintf("auto region (%.3g Hz)", r.Search.FreqHz)
	}
	return s
}
