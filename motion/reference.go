package motion

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// MinReference is the least camera motion, in pixels of the frames the
// estimator sees (rms over the frames), that MeasureReference counts as
// detected and removes; below it the frames are left as they are.
const MinReference = 0.3

// maxReferenceResidual is the largest median relative residual (see
// Register) of the reference region against its template at which the
// region still counts as a still scene moved by the camera.
const maxReferenceResidual = 0.25

// MeasureReference measures the camera's own motion on a region of the
// raw frames that should stay still (a wall, the support, the floor):
// patches holds that region, per clip and frame, as pw×ph row-major gray
// images, cut from each frame before any crop. Each patch is registered
// with the first one, then with the median of the patches so aligned;
// the shift of a patch is the camera's, relative to its median position.
// scale converts patch pixels to pixels of the frames the estimator sees:
// with a region of interest of w×h source pixels resized to S×S and a
// patch resized by f, (S/w/f, S/h/f).
//
// The motion is detected when its rms, in frame pixels, is at least
// MinReference. The region must show something (edges, texture): a plain
// region is an error, as is one whose aligned patches still differ by
// more than a quarter of their variance (it is not still).
func MeasureReference(ctx context.Context, patches [][][]float64, pw, ph int, scale Shift) (*Track, error) {
	if err := validate(patches, pw, ph); err != nil {
		return nil, err
	}
	if !(scale.X > 0) || !(scale.Y > 0) || math.IsInf(scale.X, 0) || math.IsInf(scale.Y, 0) {
		return nil, fmt.Errorf("motion: reference scale %v must be positive: %w", scale, ErrInvalid)
	}
	var all [][]float64
	for _, fs := range patches {
		all = append(all, fs...)
	}
	reg := newRegistrar(pw, ph)
	register := func(tpl []float64) ([]Shift, []float64, error) {
		pt := reg.prepare(tpl)
		out := make([]Shift, len(all))
		res := make([]float64, len(all))
		for k, f := range all {
			if err := ctx.Err(); err != nil {
				return nil, nil, fmt.Errorf("motion: %w", err)
			}
			pf := reg.prepare(f)
			d, r, ok := reg.register(&pt, &pf)
			if !ok {
				return nil, nil, fmt.Errorf("motion: reference region, frame %d: nothing to align (a plain or barely overlapping region): %w", k, ErrInvalid)
			}
			out[k], res[k] = d, r
		}
		return out, res, nil
	}
	s, _, err := register(all[0])
	if err != nil {
		return nil, err
	}
	// The template: the median, pixel by pixel, of the patches moved back,
	// which a passing occlusion does not mark.
	tpl := make([]float64, pw*ph)
	moved := make([][]float64, len(all))
	for k, f := range all {
		moved[k] = moveBack(f, pw, ph, s[k])
	}
	col := make([]float64, len(all))
	for i := range tpl {
		for k := range moved {
			col[k] = moved[k][i]
		}
		slices.Sort(col)
		tpl[i] = col[len(col)/2]
	}
	s, res, err := register(tpl)
	if err != nil {
		return nil, err
	}
	// The origin: the median shift, so that the frames move as little as
	// possible.
	xs, ys := make([]float64, len(s)), make([]float64, len(s))
	for k, d := range s {
		xs[k], ys[k] = d.X, d.Y
	}
	slices.Sort(xs)
	slices.Sort(ys)
	mid := Shift{xs[len(xs)/2], ys[len(ys)/2]}
	t := &Track{Source: SourceReference}
	var r2 float64
	flat := make([]Shift, len(s))
	for k, d := range s {
		flat[k] = d.Sub(mid).Scale(scale.X, scale.Y)
		r2 += flat[k].X*flat[k].X + flat[k].Y*flat[k].Y
	}
	t.RMS = math.Sqrt(r2 / float64(len(s)))
	slices.Sort(res)
	t.Inconsistency = res[len(res)/2]
	if t.Inconsistency > maxReferenceResidual {
		return nil, fmt.Errorf("motion: the reference region is not still: aligned, its frames still differ by %.0f%% of their variance (median; at most %.0f%%): %w", 100*t.Inconsistency, 100*maxReferenceResidual, ErrInvalid)
	}
	k := 0
	for _, fs := range patches {
		t.Shifts = append(t.Shifts, flat[k:k+len(fs)])
		k += len(fs)
	}
	if t.RMS < MinReference {
		t.Note = fmt.Sprintf("the reference region moved %.2g px rms, below %.2g: no camera motion to remove", t.RMS, MinReference)
		return t, nil
	}
	t.Detected, t.Applied = true, true
	return t, nil
}

// ReferenceScale converts pixels of a pw×ph reference patch, cut from a
// refW×refH region of the source frame, into pixels of the estimator's
// fw×fh frames, made from a roiW×roiH region of the same source frame:
// the scale MeasureReference takes.
func ReferenceScale(refW, refH, pw, ph, roiW, roiH, fw, fh int) Shift {
	return Shift{
		X: float64(refW) / float64(pw) * float64(fw) / float64(roiW),
		Y: float64(refH) / float64(ph) * float64(fh) / float64(roiH),
	}
}
