package window

import (
	"fmt"
	"math"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/motion"
)

// maxFollow is the largest share of the latent's variance that the
// camera's measured shift may explain in a certified window.
const maxFollow = 0.5

// CameraCheck is the certificate's test of the camera's own motion: did
// the camera move, was its motion removed before the fit, and does the
// latent follow it.
type CameraCheck struct {
	// Source says how the motion was measured: "auto" (from the frames)
	// or "reference" (a region that should stay still).
	Source string `json:"source"`
	// RMS is the camera's measured motion, rms over the frames, in pixels
	// of the frames the estimator saw.
	RMS float64 `json:"rms_px"`
	// Detected: the motion was large enough to count.
	Detected bool `json:"detected"`
	// Removed: the frames were moved back before the fit.
	Removed bool `json:"removed"`
	// Follow is the share of the latent's variance (R²) that a linear
	// function of the camera's shift (x, y) explains, with an offset per
	// clip; NaN when not tested.
	Follow float64 `json:"follow"`
	// Note is the measurement's own remark (why nothing was detected or
	// removed).
	Note string `json:"note,omitempty"`
}

// testCamera checks the estimate against the camera's measured motion.
// It returns the check and, when the window must be refused for it, the
// reason. Motion that was not detected, or that the measurement could not
// tell from the object's (Track.Ambiguous), is reported and not held
// against the window.
func testCamera(r *estimator.Result, t *motion.Track) (*CameraCheck, string) {
	if t == nil {
		return nil, ""
	}
	c := &CameraCheck{Source: t.Source, RMS: t.RMS, Detected: t.Detected, Removed: t.Applied, Follow: math.NaN(), Note: t.Note}
	if !t.Detected || t.Ambiguous {
		return c, ""
	}
	f, ok := follow(r.Latents, seen(t.Shifts, r))
	if !ok {
		return c, fmt.Sprintf("the camera moved %.2g px rms but its measured motion does not match the window's frames (%d clips)", t.RMS, len(r.Latents))
	}
	c.Follow = f
	if !(f <= maxFollow) {
		if t.Applied {
			return c, fmt.Sprintf("the camera moved %.2g px rms (%s) and, with that motion removed, the latent still follows it (R² %.2f > %.2g): the estimate may be the camera's", t.RMS, t.Source, f, maxFollow)
		}
		return c, fmt.Sprintf("the camera moved %.2g px rms (%s) and the latent follows it (R² %.2f > %.2g): the estimate would be the camera's motion, not the object's", t.RMS, t.Source, f, maxFollow)
	}
	return c, ""
}

// seen is the part of the shifts that r's latent sequences cover: per
// sequence, its clip's shifts (r.ClipOf) from frame r.First on, for a
// readout that saw part of a clip or a clip in several runs.
func seen(s [][]motion.Shift, r *estimator.Result) [][]motion.Shift {
	if r.First == nil || len(r.First) != len(r.Latents) {
		return s
	}
	out := make([][]motion.Shift, len(r.Latents))
	for m := range r.Latents {
		c := r.ClipOf(m)
		if c < 0 || c >= len(s) {
			return s
		}
		a, b := r.First[m], r.First[m]+len(r.Latents[m])
		if a < 0 || b > len(s[c]) {
			return s
		}
		out[m] = s[c][a:b]
	}
	return out
}

// follow is the R² of the least-squares fit of the latents by
// a + b·x + c·y, with x, y the camera's shift at each sample and a one
// offset per clip (the latent's equilibrium may differ between clips):
//
//	R² = 1 − Σ (z − ẑ)² / Σ (z − z̄_clip)².
//
// ok is false when the shifts do not match the latents sample for sample.
func follow(z [][]float64, s [][]motion.Shift) (float64, bool) {
	if len(z) != len(s) || len(z) == 0 {
		return 0, false
	}
	// Centre each clip's latent and shift; then the fit is a 2×2 system.
	var sxx, sxy, syy, sxz, syz, szz float64
	for m := range z {
		if len(z[m]) != len(s[m]) {
			return 0, false
		}
		n := float64(len(z[m]))
		if n == 0 {
			continue
		}
		var mz, mx, my float64
		for k, v := range z[m] {
			mz += v
			mx += s[m][k].X
			my += s[m][k].Y
		}
		mz, mx, my = mz/n, mx/n, my/n
		for k, v := range z[m] {
			dz, dx, dy := v-mz, s[m][k].X-mx, s[m][k].Y-my
			sxx += dx * dx
			sxy += dx * dy
			syy += dy * dy
			sxz += dx * dz
			syz += dy * dz
			szz += dz * dz
		}
	}
	if !(szz > 0) {
		return 0, true
	}
	// Explained variance of the projection onto span{x, y}: bᵀ S b with
	// S b = (sxz, syz). When x and y are collinear (a purely vertical
	// shake, say) the span is the larger one's line.
	var explained float64
	det := sxx*syy - sxy*sxy
	switch {
	case det > 1e-9*(sxx+syy)*(sxx+syy):
		b := (syy*sxz - sxy*syz) / det
		c := (sxx*syz - sxy*sxz) / det
		explained = b*sxz + c*syz
	case sxx >= syy && sxx > 0:
		explained = sxz * sxz / sxx
	case syy > 0:
		explained = syz * syz / syy
	}
	return min(max(explained/szz, 0), 1), true
}
