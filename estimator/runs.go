package estimator

import "fmt"

// Runs places latent sequences on their clips' time axes when some are
// runs of one clip: an object followed until it was hidden (behind a
// hand, a passer-by, another object) and found again. Sequence m is clip
// Clip[m] from its frame First[m]; runs of one clip come one after the
// other, in frame order. The output-error fit gives the runs of a clip
// one initial state — they are one free response seen with gaps — so a
// run that strays from it (another object taken for the first, a
// position pulled by a neighbour) shows in the residual instead of being
// absorbed by a start of its own.
type Runs struct {
	Clip, First []int
}

// layout places the stacked samples of the latent sequences: sequence m
// has lens[m] samples, shares the initial state (and a per-clip offset)
// of group[m], and starts skip[m] frames after its group's first sample.
type layout struct {
	lens   []int
	group  []int
	skip   []int
	groups int
}

// seqLayout is the layout of sequences that are clips of their own.
func seqLayout(lens []int) layout {
	l := layout{lens: lens, group: make([]int, len(lens)), skip: make([]int, len(lens)), groups: len(lens)}
	for m := range lens {
		l.group[m] = m
	}
	return l
}

// latentsLayout is the layout of latents, placed by runs (nil: each
// sequence its own clip).
func latentsLayout(latents [][]float64, runs *Runs) (layout, error) {
	lens := make([]int, len(latents))
	for m, z := range latents {
		lens[m] = len(z)
	}
	if runs == nil {
		return seqLayout(lens), nil
	}
	if len(runs.Clip) != len(latents) || len(runs.First) != len(latents) {
		return layout{}, fmt.Errorf("runs: %d clips and %d starts for %d latent sequences: %w", len(runs.Clip), len(runs.First), len(latents), ErrInvalidClip)
	}
	l := layout{lens: lens, group: make([]int, len(lens)), skip: make([]int, len(lens))}
	for m := range lens {
		switch {
		case runs.First[m] < 0:
			return layout{}, fmt.Errorf("runs: sequence %d starts at frame %d: %w", m, runs.First[m], ErrInvalidClip)
		case m > 0 && runs.Clip[m] == runs.Clip[m-1]:
			if end := runs.First[m-1] + lens[m-1]; runs.First[m] < end {
				return layout{}, fmt.Errorf("runs: sequence %d starts at frame %d of clip %d, before the previous run's end %d: %w", m, runs.First[m], runs.Clip[m], end, ErrInvalidClip)
			}
			l.group[m] = l.group[m-1]
			l.skip[m] = l.skip[m-1] + runs.First[m] - runs.First[m-1]
		default:
			if m > 0 && l.groups > 0 && runs.Clip[m] < runs.Clip[m-1] {
				return layout{}, fmt.Errorf("runs: sequence %d of clip %d after clip %d: %w", m, runs.Clip[m], runs.Clip[m-1], ErrInvalidClip)
			}
			l.group[m] = l.groups
			l.groups++
		}
	}
	return l, nil
}

// n is the number of samples.
func (l layout) n() int {
	n := 0
	for _, v := range l.lens {
		n += v
	}
	return n
}

// q is the number of linear parameters: two initial-state coordinates
// per group and the offsets off asks for.
func (l layout) q(off Offset) int { return 2*l.groups + offsetColumns(off, l.groups) }

// layout is how f's sequences are placed: as fitted, or each its own
// clip for a fit assembled elsewhere.
func (f *TrajectoryFit) layout() layout {
	if f.lay.group != nil {
		return f.lay
	}
	lens := make([]int, len(f.Fitted))
	for m, z := range f.Fitted {
		lens[m] = len(z)
	}
	return seqLayout(lens)
}

// runs places r's latent sequences when some are runs of one clip
// (Result.Clips); nil when each is a clip.
func (r *Result) runs() *Runs {
	if r.Clips == nil {
		return nil
	}
	return &Runs{Clip: r.Clips, First: r.First}
}

// Solution is the fitted solution of clip g (its runs' shared free
// response) at n frames from frame k0 of it (counted from its first
// sample; negative before it), the offset included: through the gaps
// between runs, where the object was hidden, and a little either side.
//
//	ẑ_k = c_g + e₁ᵀ Φᵏ x_g,  k = k0 … k0+n−1,  Φ^{−1} = e^{−AΔt}.
func (f *TrajectoryFit) Solution(g, k0, n int, dt float64) ([]float64, error) {
	if g < 0 || g >= len(f.X0) {
		return nil, fmt.Errorf("solution: no clip %d of %d", g, len(f.X0))
	}
	step := dt
	if k0 < 0 {
		step = -dt
	}
	to, err := stateMap(f.Gamma1, f.Gamma0, step)
	if err != nil {
		return nil, fmt.Errorf("solution: %w", err)
	}
	p, v := f.X0[g][0], f.X0[g][1]
	for range abs(k0) {
		p, v = to[0][0]*p+to[0][1]*v, to[1][0]*p+to[1][1]*v
	}
	phi, err := stateMap(f.Gamma1, f.Gamma0, dt)
	if err != nil {
		return nil, fmt.Errorf("solution: %w", err)
	}
	c := f.Offset
	if g < len(f.ClipOffsets) {
		c = f.ClipOffsets[g]
	}
	out := make([]float64, n)
	for k := range out {
		out[k] = c + p
		p, v = phi[0][0]*p+phi[0][1]*v, phi[1][0]*p+phi[1][1]*v
	}
	return out, nil
}

func abs(k int) int {
	if k < 0 {
		return -k
	}
	return k
}
