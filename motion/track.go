package motion

import (
	"fmt"
	"math"
)

// Sources of a Track.
const (
	// SourceAuto: measured from the frames themselves (Measure).
	SourceAuto = "auto"
	// SourceReference: measured on a region of the raw frame that should
	// stay still (MeasureReference).
	SourceReference = "reference"
)

// Track is the camera's own motion over one window, as measured, and what
// was done about it.
type Track struct {
	// Source is SourceAuto or SourceReference.
	Source string `json:"source"`
	// Shifts holds, per clip and frame, the camera's measured shift in
	// pixels of the frames the estimator sees, with the part that the
	// object's state explains removed (auto) or relative to the reference
	// region's median position (reference).
	Shifts [][]Shift `json:"-"`
	// RMS is the size of Shifts: the rms over all frames of |shift|, px.
	RMS float64 `json:"rms_px"`
	// Revisit (auto) is the rms displacement per frame between frames that
	// show the same state, px: the evidence of camera motion that the
	// object's own motion cannot fake.
	Revisit float64 `json:"revisit_px,omitempty"`
	// Pairs (auto) is how many pairs of frames that look alike up to a
	// translation, and are not neighbours in time, were registered.
	Pairs int `json:"pairs,omitempty"`
	// Moved (auto) is how many of them differ by a translation: once
	// aligned, at most 5 % of their difference is left.
	Moved int `json:"moved,omitempty"`
	// Inconsistency (auto) is the rms disagreement of the measured pairs
	// with the fitted shifts, px: the measurement's noise.
	Inconsistency float64 `json:"inconsistency_px,omitempty"`
	// Detected: the camera moved more than the measurement's threshold.
	Detected bool `json:"detected"`
	// Ambiguous (auto): detected, but the whole view moves rigidly, so the
	// motion may as well be the object's; it is not removed and not held
	// against the window.
	Ambiguous bool `json:"ambiguous,omitempty"`
	// Left (auto, when detected) is the fraction of the frames' variation
	// left once the measured motion is removed.
	Left float64 `json:"left,omitempty"`
	// Applied: the frames were moved back by Shifts before the fit.
	Applied bool `json:"applied"`
	// Note says why nothing was detected or applied.
	Note string `json:"note,omitempty"`
}

// Summary is one line for logs and reports.
func (t *Track) Summary() string {
	if t == nil {
		return "camera motion not measured"
	}
	s := fmt.Sprintf("camera motion (%s) %.2f px rms", t.Source, t.RMS)
	if t.Source == SourceAuto {
		s += fmt.Sprintf(", %.2f px between revisits (%d of %d pairs)", t.Revisit, t.Moved, t.Pairs)
	}
	switch {
	case t.Applied:
		s += ", removed"
	case t.Detected:
		s += ", not removed"
	}
	if t.Note != "" {
		s += ": " + t.Note
	}
	return s
}

// Stabilize returns the clips' w×h frames moved back by the track's
// shifts when it was applied, and the clips themselves (not copied)
// otherwise, so that a window without camera motion reaches the estimator
// bit for bit as it came. Frames are cubic-interpolated, the border
// repeated where the shift exposes it, and clamped to [0, 1].
func (t *Track) Stabilize(clips [][][]float64, w, h int) ([][][]float64, error) {
	if t == nil || !t.Applied {
		return clips, nil
	}
	if len(t.Shifts) != len(clips) {
		return nil, fmt.Errorf("motion: track has %d clips, window %d: %w", len(t.Shifts), len(clips), ErrInvalid)
	}
	out := make([][][]float64, len(clips))
	for c, fs := range clips {
		if len(t.Shifts[c]) != len(fs) {
			return nil, fmt.Errorf("motion: track has %d frames in clip %d, window %d: %w", len(t.Shifts[c]), c, len(fs), ErrInvalid)
		}
		out[c] = make([][]float64, len(fs))
		for k, f := range fs {
			if len(f) != w*h {
				return nil, fmt.Errorf("motion: clip %d frame %d has %d pixels, want %d×%d: %w", c, k, len(f), w, h, ErrInvalid)
			}
			s := t.Shifts[c][k]
			if math.IsNaN(s.X) || math.IsNaN(s.Y) {
				return nil, fmt.Errorf("motion: clip %d frame %d: shift is NaN: %w", c, k, ErrInvalid)
			}
			out[c][k] = Undo(f, w, h, s)
		}
	}
	return out, nil
}
