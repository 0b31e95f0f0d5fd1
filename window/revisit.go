package window

import (
	"math"
	"sort"
)

// Revisit measures whether the latent's level revisits are revisits of the
// scene. Coverage is tested on the learned latent, but the theorems need
// it on the physical state: under state consistency (Def. 3.1) the same
// state gives the same image, so frames where the latent crosses one
// level must look alike. An encoder that makes a monotone motion (one
// overdamped clip) look oscillatory by folding the state — a non-monotone
// f — crosses a level at frames showing different states, and this
// exposes it.
//
// Frames are compared where the latent lives and after the camera's
// exposure is taken out (see revisitMetric), so that a passer-by, a hand
// or a shadow the readout gives no weight, or an auto-exposure step, does
// not refuse a window whose latent is right, while an encoder that folds
// the motion it reads is still caught in the pixels it reads it from.
type Revisit struct {
	// Score is the median, over covered levels, of the largest difference
	// between the (linearly interpolated) frames at that level's
	// crossings, in units of what interpolation may explain: the mean
	// frame-to-frame change at the two crossings plus 5 % of the
	// difference between the frames at the latent's extremes. Below 1:
	// true revisits.
	Score float64 `json:"score"`
	// Levels is how many covered levels were compared.
	Levels int `json:"levels"`
	// Weighted is the fraction of the total weight on the busiest 10 % of
	// pixels: near 0.1 the latent is spread over the frame, near 1 it
	// lives in a small region.
	Weighted float64 `json:"weight_concentration"`
	// Normalised reports that frames were photometrically normalised
	// from the pixels the latent does not explain.
	Normalised bool `json:"exposure_normalised"`
}

// RevisitOf computes Revisit for the covered interval of cov, comparing
// at most maxLevels levels spread across it. frames[m][k] is clip m's
// frame k, pixel vectors of one length.
func RevisitOf(tr Trace, frames [][][]float64, cov Coverage, maxLevels int) Revisit {
	var r Revisit
	z, dt := tr.Z, tr.Dt
	if !cov.Holds || len(frames) != len(z) || maxLevels < 1 {
		return r
	}
	for m := range z {
		if len(frames[m]) != len(z[m]) || len(frames[m]) == 0 {
			return r
		}
	}
	met := newRevisitMetric(z, frames)
	r.Weighted, r.Normalised = met.concentration(), met.background != nil
	rmsDiff := met.diff
	frameAt := met.frameAt
	// Reference scale: frames at the latent's minimum and maximum.
	var lo, hi [2]int
	zl, zh := math.Inf(1), math.Inf(-1)
	for m, zm := range z {
		if len(frames[m]) != len(zm) {
			return r
		}
		for k, v := range zm {
			if v < zl {
				zl, lo = v, [2]int{m, k}
			}
			if v > zh {
				zh, hi = v, [2]int{m, k}
			}
		}
	}
	// The frames read: the extremes', and at each level's crossings the
	// two either side (frameAt) and the step from the one before it.
	crossings := make([][]Crossing, maxLevels)
	need := make([][]bool, len(frames))
	for m := range frames {
		need[m] = make([]bool, len(frames[m]))
	}
	need[lo[0]][lo[1]], need[hi[0]][hi[1]] = true, true
	for i := range crossings {
		u := cov.Lo + (cov.Hi-cov.Lo)*(float64(i)+0.5)/float64(maxLevels)
		cr := tr.Crossings(u)
		if len(cr) < 2 {
			continue
		}
		crossings[i] = cr
		for _, c := range cr {
			n := len(frames[c.Clip])
			x := c.Time / dt
			k := min(max(int(math.Floor(x)), 0), n-1)
			need[c.Clip][k] = true
			if k+1 < n {
				need[c.Clip][k+1] = true
			}
			k = min(int(x), n-2)
			need[c.Clip][k], need[c.Clip][k+1] = true, true
		}
	}
	met.normaliseFrames(need)
	ref := rmsDiff(met.frame(lo[0], lo[1]), met.frame(hi[0], hi[1]))
	if !(ref > 0) {
		return r
	}
	// The levels are scored on the caller's goroutine: the whole test
	// takes well under a millisecond a window, less than handing half of
	// it to another core costs (internal/par).
	level := make([]float64, maxLevels)
	scored := make([]bool, maxLevels)
	var blends [][]float64
	for i, cr := range crossings {
		if len(cr) < 2 {
			continue
		}
		imgs := make([][]float64, len(cr))
		step := make([]float64, len(cr))
		// The blends are written into buffers the levels share: a
		// level's images are compared before the next level's are made.
		for len(blends) < len(cr) {
			blends = append(blends, make([]float64, len(met.w)))
		}
		for j, c := range cr {
			imgs[j] = frameAt(blends[j], c.Clip, c.Time/dt)
			k := min(int(c.Time/dt), len(frames[c.Clip])-2)
			step[j] = rmsDiff(met.frame(c.Clip, k), met.frame(c.Clip, k+1))
		}
		var worst float64
		for a := range imgs {
			for b := a + 1; b < len(imgs); b++ {
				// Interpolated frames of fast motion are blends; allow
				// their difference to reach the frame-to-frame change.
				tol := 0.5*(step[a]+step[b]) + 0.05*ref
				worst = math.Max(worst, rmsDiff(imgs[a], imgs[b])/tol)
			}
		}
		level[i], scored[i] = worst, true
	}
	var scores []float64
	for i, ok := range scored {
		if ok {
			scores = append(scores, level[i])
		}
	}
	if len(scores) == 0 {
		return r
	}
	sort.Float64s(scores)
	r.Levels = len(scores)
	r.Score = scores[len(scores)/2]
	return r
}
