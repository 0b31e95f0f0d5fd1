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
type Revisit struct {
	// Score is the median, over covered levels, of the largest RMS
	// difference between the (linearly interpolated) frames at that
	// level's crossings, in units of what interpolation may explain: the
	// mean frame-to-frame change at the two crossings plus 5 % of the
	// difference between the frames at the latent's extremes. Below 1:
	// true revisits.
	Score float64 `json:"score"`
	// Levels is how many covered levels were compared.
	Levels int `json:"levels"`
}

// TestRevisit computes Revisit for the covered interval of cov, comparing
// at most maxLevels levels spread across it. frames[m][k] is clip m's
// frame k, pixel vectors of one length.
func TestRevisit(z [][]float64, frames [][][]float64, dt float64, cov Coverage, maxLevels int) Revisit {
	var r Revisit
	if !cov.Holds || len(frames) != len(z) || maxLevels < 1 {
		return r
	}
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
	ref := rmsDiff(frames[lo[0]][lo[1]], frames[hi[0]][hi[1]])
	if !(ref > 0) {
		return r
	}
	var scores []float64
	for i := range maxLevels {
		u := cov.Lo + (cov.Hi-cov.Lo)*(float64(i)+0.5)/float64(maxLevels)
		cr := Crossings(z, dt, u)
		if len(cr) < 2 {
			continue
		}
		imgs := make([][]float64, len(cr))
		step := make([]float64, len(cr))
		for j, c := range cr {
			imgs[j] = frameAt(frames[c.Clip], c.Time/dt)
			k := min(int(c.Time/dt), len(frames[c.Clip])-2)
			step[j] = rmsDiff(frames[c.Clip][k], frames[c.Clip][k+1])
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
		scores = append(scores, worst)
	}
	if len(scores) == 0 {
		return r
	}
	sort.Float64s(scores)
	r.Levels = len(scores)
	r.Score = scores[len(scores)/2]
	return r
}

// frameAt interpolates linearly between the frames around fractional index x.
func frameAt(frames [][]float64, x float64) []float64 {
	k := min(max(int(math.Floor(x)), 0), len(frames)-1)
	f := x - float64(k)
	if k+1 >= len(frames) || f <= 0 {
		return frames[k]
	}
	out := make([]float64, len(frames[k]))
	for i := range out {
		out[i] = (1-f)*frames[k][i] + f*frames[k+1][i]
	}
	return out
}

func rmsDiff(a, b []float64) float64 {
	var s float64
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return math.Sqrt(s / float64(max(len(a), 1)))
}
