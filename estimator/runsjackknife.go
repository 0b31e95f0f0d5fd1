package estimator

import (
	"fmt"

	"github.com/physd/physd/internal/par"
)

// jackknifeRuns measures how much the positions of any one stretch of a
// clip's runs move the estimate, by a delete-a-group jackknife of the
// output-error fit on the latents as read (no readout is re-solved: a
// tracked object's positions, a small-motion reading). Each clip's seen
// frames — its runs in frame order — are cut into G contiguous blocks
// (jackknifeGroups), and each of the N = G·M groups (m, g) is deleted in
// turn, the runs it cuts split around it:
//
//	θ_mg = FitTrajectoryRuns(z without D_mg) started from Exact(FitODE(z without D_mg))
//	Cov  = (N − 1)/N Σ (θ_mg − θ̄)(θ_mg − θ̄)ᵀ
//
// Why, for runs seen for less than a period (seenForAPeriod): such runs
// show a swing's slopes only across a gap, where nothing but the fit's
// frequency and decay carry the state from one run to the next, and a
// stretch pulled by what hid the object (its match dragged towards a
// neighbour at a turning point) moves the amplitude ratio across the gap
// and γ1 with it. The residual bootstrap resamples within runs and does
// not see that; deleting the stretch does. A failed replicate counts as
// the largest deviation of those that had an estimate (replicateSpread).
func jackknifeRuns(r *Result, off Offset, workers int) (*JackknifeSigma, error) {
	lat := r.Latents
	first := func(m int) int { // a sequence's first frame in its clip
		if r.First == nil {
			return 0
		}
		return r.First[m]
	}
	// seen[c] is clip c's seen frames in order, as (run, index in run).
	type frame struct{ run, k int }
	seen := map[int][]frame{}
	var order []int
	for m, z := range lat {
		c := r.ClipOf(m)
		if _, ok := seen[c]; !ok {
			order = append(order, c)
		}
		for k := range z {
			seen[c] = append(seen[c], frame{m, k})
		}
	}
	G := jackknifeGroups
	type group struct{ clip, lo, hi int } // seen frames [lo, hi) of clip
	var groups []group
	for _, c := range order {
		n := len(seen[c])
		for g := range G {
			groups = append(groups, group{c, g * n / G, (g + 1) * n / G})
		}
	}
	reps := make([][2]float64, len(groups))
	ok := make([]bool, len(groups))
	par.For(workers, len(groups), func(g int) {
		gr := groups[g]
		// The deleted block as a range of one run or two: frames of run
		// m in [cut[m][0], cut[m][1]) are left out.
		cut := map[int][2]int{}
		for _, f := range seen[gr.clip][gr.lo:gr.hi] {
			c, has := cut[f.run]
			if !has {
				c = [2]int{f.k, f.k}
			}
			c[1] = f.k + 1
			cut[f.run] = c
		}
		var zs [][]float64
		var runs Runs
		for m, z := range lat {
			segs := [][2]int{{0, len(z)}}
			if c, has := cut[m]; has {
				segs = [][2]int{{0, c[0]}, {c[1], len(z)}}
			}
			for _, s := range segs {
				if s[1]-s[0] >= jackknifeMinSegment {
					zs = append(zs, z[s[0]:s[1]])
					runs.Clip, runs.First = append(runs.Clip, r.ClipOf(m)), append(runs.First, first(m)+s[0])
				}
			}
		}
		tf, err := refit(zs, &runs, r.Dt, off)
		if err != nil {
			return
		}
		reps[g], ok[g] = [2]float64{tf.Gamma1, tf.Gamma0}, true
	})
	jk, err := jackknifeSigma(reps, ok)
	if err != nil {
		return nil, fmt.Errorf("runs %w", err)
	}
	return jk, nil
}
