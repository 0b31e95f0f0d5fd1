package window

import (
	"math"
	"sort"

	"github.com/physd/physd/estimator"
)

// Crossing is one passage of a trajectory through a level.
type Crossing struct {
	Clip  int     `json:"clip"`
	Time  float64 `json:"t"`     // seconds from the clip's first frame, linearly interpolated
	Slope float64 `json:"slope"` // dz/dt at the crossing
	// Err bounds the slope's discretisation error (the slope estimator's
	// error on the reference, interpolation between samples, and the
	// chord's misplacement of the crossing, Δt²z''²/(8|z'|): large near
	// turning points). See Trace.
	Err float64 `json:"slope_err"`
	// Sigma is the slope's noise: the estimator's σ and the crossing
	// time's scatter σ_z/|z'| times |z''|.
	Sigma float64 `json:"slope_sigma"`
	// trend, when non-zero, marks the two ends of one resolved trend.
	trend int
	// ref is the reference's slope at the crossing (the fitted solution's
	// velocity; the estimate itself without one).
	ref float64
}

// resolved keeps the crossings that the trajectory makes, as opposed to
// those its noise makes: where the reference's slope is within a few σ
// of zero — the latent lingering near the level at a turning point or in
// an asymptotic tail — noise adds crossings whose slopes are selected by
// the crossing itself (a downward crossing happens where the noise
// falls) and say nothing of the motion. A crossing counts when the
// reference crosses decisively, |ref| ≥ 3σ, in the direction measured.
func resolved(c []Crossing) []Crossing {
	out := c[:0:0]
	for _, x := range c {
		if math.Abs(x.ref) >= 3*x.Sigma && (x.ref > 0) == (x.Slope > 0) {
			out = append(out, x)
		}
	}
	return out
}

// Coverage is the outcome of the level-set slope coverage test (Def. 4.1):
// a level u is covered when the trajectories cross it at least three times
// with pairwise distinct slopes, distinct meaning further apart than their
// noise and discretisation allow; coverage holds when a run of at least
// three adjacent covered levels spans an interval U holding at least
// MinWidth of the samples.
type Coverage struct {
	Holds bool `json:"holds"`
	// Lo, Hi bound the widest interval U of covered levels (NaN if none).
	Lo float64 `json:"u_lo"`
	Hi float64 `json:"u_hi"`
	// Width is the fraction of samples whose latent lies in U (equal to
	// Rho); SlopeShare the fraction of the slope energy Σ z'² they carry
	// (ρυ⋆ over the lemma's G11). Coverage needs MinWidth of each: samples
	// of a latent that rests in U — a clip whose motion the encoder
	// collapsed to a constant — fill U without informing the design.
	Width      float64 `json:"width"`
	SlopeShare float64 `json:"slope_share"`
	MinWidth   float64 `json:"min_width"`
	// Levels is the number of levels tested, Covered how many were covered.
	Levels  int `json:"levels"`
	Covered int `json:"covered"`
	// MaxDistinct is the most pairwise-distinct slopes found at any level
	// (counted up to 3, all a level needs).
	MaxDistinct int `json:"max_distinct_slopes"`
	// SlopeTol is the distinctness tolerance where coverage is decided:
	// the median, over the levels of U (or over every level crossed
	// twice when there is no U), of the typical tolerance of two slopes
	// at that level, k·√2·σ + 2·Err, σ and Err the crossings' medians.
	SlopeTol float64 `json:"slope_tol"`
	// NoiseZ is the latent's noise σ_z; Noise says how it was measured.
	NoiseZ float64 `json:"noise_z"`
	Noise  Noise   `json:"noise"`
	// Growing and Decaying count, over the levels of U, the resolved
	// slope sequences (see representatives) whose |slope| grows or decays
	// with time. A damped system's energy falls, and with it the slope at
	// every level: growth is energy the latent gains.
	Growing  int `json:"sequences_growing"`
	Decaying int `json:"sequences_decaying"`
	// Clips is how many trajectories cross some level of U.
	Clips int `json:"clips"`
	// ClipOffsets is set when each clip carries its own offset g_m; a
	// level is then covered by within-clip slope pairs (see
	// CoverageOptions.ClipOffsets), and MaxPairSums is the most distinct
	// within-clip pair sums found at any level (need 2).
	ClipOffsets bool `json:"clip_offsets,omitempty"`
	MaxPairSums int  `json:"max_distinct_pair_sums,omitempty"`
	// Rho is the fraction of interior samples with z_k ∈ U and UpsStar the
	// mean of z'_k² over them: the lemma's ρ and υ⋆.
	Rho     float64 `json:"rho"`
	UpsStar float64 `json:"upsilon_star"`
}

// CoverageOptions tune the test.
type CoverageOptions struct {
	Levels   int     // levels tested, at quantiles of the pooled latent samples; default 200
	MinWidth float64 // minimum fraction of samples inside U; default 0.05
	// Sigmas is how many standard deviations of the slope difference make
	// two slopes distinct; default 3 (raised with the number of crossings).
	Sigmas float64
	// ClipOffsets tests latents fitted with one offset g_m per clip
	// (estimator.ClipOffsets). Def. 4.1's argument then changes: if
	// another latent φ(z) fits with (γ̃, g̃_m), every crossing (clip m,
	// slope s) of a level u gives φ''(u)s² + (γ̃1 − γ1)φ'(u)s + C_m(u) = 0,
	// with C_m(u) = φ'(u)(g_m − γ0 u) + γ̃0 φ(u) − g̃_m unknown per clip.
	// Two crossings of one clip eliminate C_m: (s_i + s_j)φ'' + (γ̃1 −
	// γ1)φ' = 0. Two such pairs with different sums s_i + s_j force φ'' =
	// 0 and γ̃1 = γ1, on an interval of u that makes φ affine and γ̃0 = γ0.
	// So a level is covered when its within-clip pairs of distinct slopes
	// have at least two distinct sums; crossings of clips crossing once
	// count for nothing. With one shared offset C_m is one unknown and
	// the test is Def. 4.1's three distinct slopes.
	ClipOffsets bool `json:"-"`
}

func (o CoverageOptions) withDefaults() CoverageOptions {
	if o.Levels <= 0 {
		o.Levels = 200
	}
	if o.MinWidth <= 0 {
		o.MinWidth = 0.05
	}
	if o.Sigmas <= 0 {
		o.Sigmas = 3
	}
	return o
}

// Crossings returns every passage of the trajectories through level u,
// read as bare latents with no noise (NewTraceWhite): slopes by the
// centred difference interpolated to the crossing time.
func Crossings(z [][]float64, dt, u float64) []Crossing {
	return NewTraceWhite(z, dt, 0).Crossings(u)
}

// multiplicity is how many standard deviations make two of n slopes
// distinct: at least sigmas, and rising like √(2 ln n), the expected
// largest of n standard normal deviates, so that the many comparisons at
// a level crossed often do not turn noise into distinct slopes.
func multiplicity(n int, sigmas float64) float64 {
	if n > 1 {
		return math.Max(sigmas, math.Sqrt(2*math.Log(float64(n)))+2)
	}
	return sigmas
}

// apart reports whether two crossings' slopes are distinct: further apart
// than k standard deviations of their difference plus both
// discretisation bounds. The two ends of one resolved trend (see
// representatives) are distinct by construction.
func apart(a, b Crossing, k float64) bool {
	if a.trend != 0 && a.trend == b.trend {
		return true
	}
	return math.Abs(a.Slope-b.Slope) > k*math.Hypot(a.Sigma, b.Sigma)+a.Err+b.Err
}

// representatives reduces a level's crossings to the slopes the
// distinctness test compares, and the k it compares them with.
//
// Crossings of one clip in one direction, n ≥ 3 of them, are one
// sequence: under damping their slopes drift steadily with time (at the
// equilibrium level s_n = s_0 e^{−ζω_n t_n}), under none they are equal.
// Comparing them pair by pair would ask of the extreme pair of n noisy
// values what their scatter alone produces in the tails; instead the
// sequence is fitted by weighted least squares, s = a + b t (weights
// 1/σ_i²), and its first and last fitted values count as two distinct
// slopes when the drift between them is resolved,
//
//	|b| (t_n − t_1) > k_t σ_b (t_n − t_1) + 2 max Err_i,
//
// k_t = max(k, √(2 ln(levels × sequences)) + 1) standing for every
// sequence at every level tested. Otherwise the sequence counts once, at
// its weighted mean. Sequences of one or two crossings are kept as they
// are (for two, the fit is the pair). The remaining comparisons, between
// sequences, use k = multiplicity(number of representatives).
//
// It also returns how many resolved sequences (and resolved pairs of
// passes in one direction) grow and decay in |slope|.
func representatives(c []Crossing, sigmas float64, levels int) (reps []Crossing, k float64, grow, decay int) {
	type key struct {
		clip int
		up   bool
	}
	groups := map[key][]Crossing{}
	var order []key
	for _, x := range c {
		g := key{x.Clip, x.Slope > 0}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], x)
	}
	kt := math.Max(sigmas, math.Sqrt(2*math.Log(float64(max(2, levels*len(order)))))+1)
	kp := multiplicity(len(c), sigmas)
	trend := 0
	for _, g := range order {
		xs := groups[g]
		if len(xs) == 2 && apart(xs[0], xs[1], kp) {
			// Two resolved passes: the later one's |slope| says which way
			// the energy went.
			if math.Abs(xs[1].Slope) > math.Abs(xs[0].Slope) {
				grow++
			} else {
				decay++
			}
		}
		if len(xs) < 3 {
			reps = append(reps, xs...)
			continue
		}
		var sw, st, ss, maxErr float64
		for _, x := range xs {
			w := 1 / math.Max(x.Sigma*x.Sigma, 1e-300)
			sw += w
			st += w * x.Time
			ss += w * x.Slope
			maxErr = math.Max(maxErr, x.Err)
		}
		tbar, sbar := st/sw, ss/sw
		var stt, sts float64
		for _, x := range xs {
			w := 1 / math.Max(x.Sigma*x.Sigma, 1e-300)
			stt += w * (x.Time - tbar) * (x.Time - tbar)
			sts += w * (x.Time - tbar) * (x.Slope - sbar)
		}
		first, last := xs[0], xs[len(xs)-1]
		if !(stt > 0) {
			reps = append(reps, Crossing{Clip: g.clip, Time: tbar, Slope: sbar, Sigma: 1 / math.Sqrt(sw), Err: maxErr})
			continue
		}
		b, sb := sts/stt, 1/math.Sqrt(stt)
		span := last.Time - first.Time
		if math.Abs(b)*span > kt*sb*span+2*maxErr {
			trend++
			if (b > 0) == g.up {
				grow++
			} else {
				decay++
			}
			at := func(t float64) Crossing {
				// σ of a + b t at t: √(1/Σw + (t − t̄)²/Σw(t−t̄)²).
				return Crossing{Clip: g.clip, Time: t, Slope: sbar + b*(t-tbar), Err: maxErr,
					Sigma: math.Sqrt(1/sw + (t-tbar)*(t-tbar)/stt), trend: trend}
			}
			reps = append(reps, at(first.Time), at(last.Time))
			continue
		}
		reps = append(reps, Crossing{Clip: g.clip, Time: tbar, Slope: sbar, Sigma: 1 / math.Sqrt(sw), Err: maxErr})
	}
	return reps, multiplicity(len(reps), sigmas), grow, decay
}

// distinct returns how many pairwise-distinct slopes the crossings have,
// counted up to 3.
func distinct(c []Crossing, k float64) int {
	if len(c) == 0 {
		return 0
	}
	best := 1
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if !apart(c[i], c[j], k) {
				continue
			}
			best = 2
			for l := j + 1; l < len(c); l++ {
				if apart(c[i], c[l], k) && apart(c[j], c[l], k) {
					return 3
				}
			}
		}
	}
	return best
}

// pairSums returns how many distinct sums s_i + s_j the pairs of
// crossings of one clip with distinct slopes have, capped at 2: all a
// level needs under per-clip offsets. Two sums are distinct beyond k
// standard deviations of their difference plus the discretisation bounds
// of the crossings that do not cancel (a crossing shared by both pairs
// cancels).
func pairSums(c []Crossing, k float64) int {
	type pair struct{ i, j int }
	var ps []pair
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[i].Clip == c[j].Clip && apart(c[i], c[j], k) {
				ps = append(ps, pair{i, j})
			}
		}
	}
	if len(ps) == 0 {
		return 0
	}
	for a := range ps {
		for b := a + 1; b < len(ps); b++ {
			// Σ over the symmetric difference of the two pairs.
			count := map[int]int{}
			for _, x := range []int{ps[a].i, ps[a].j} {
				count[x]++
			}
			for _, x := range []int{ps[b].i, ps[b].j} {
				count[x]--
			}
			var v, e float64
			for x, n := range count {
				if n != 0 {
					v += c[x].Sigma * c[x].Sigma
					e += c[x].Err
				}
			}
			d := c[ps[a].i].Slope + c[ps[a].j].Slope - c[ps[b].i].Slope - c[ps[b].j].Slope
			if math.Abs(d) > k*math.Sqrt(v)+e {
				return 2
			}
		}
	}
	return 1
}

// levelTolerance is the typical distinctness tolerance of two slopes at
// a level: k·√2·σ + 2·Err with σ and Err the crossings' medians.
func levelTolerance(c []Crossing, k float64) float64 {
	s := make([]float64, len(c))
	e := make([]float64, len(c))
	for i, x := range c {
		s[i], e[i] = x.Sigma, x.Err
	}
	return k*math.Sqrt2*median(s) + 2*median(e)
}

// median returns the median of v (0 for none); v is reordered.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// NoiseFromResidual estimates the latent's white-noise level from the
// stencil residual: noise σ_z in z puts σ_z √6 / Δt² into z” (weights 1, −2,
// 1), which dominates r_k for small Δt. Model misfit counts as noise too,
// which only makes the test more conservative.
func NoiseFromResidual(resid [][]float64, dt float64) float64 {
	var s float64
	n := 0
	for _, r := range resid {
		for _, v := range r {
			s += v * v
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return math.Sqrt(s/float64(n)) * dt * dt / math.Sqrt(6)
}

// CoverageOf runs the level-set slope coverage test on a trace of one
// or more clips sharing an encoder (Thm. 4.2 for one clip, Thm. 4.5 for
// three or more).
func CoverageOf(tr Trace, opt CoverageOptions) Coverage {
	opt = opt.withDefaults()
	z, dt := tr.Z, tr.Dt
	c := Coverage{Lo: math.NaN(), Hi: math.NaN(), MinWidth: opt.MinWidth, NoiseZ: tr.Noise.Z, Noise: tr.Noise, Levels: opt.Levels, ClipOffsets: opt.ClipOffsets}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, zm := range z {
		for _, v := range zm {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	span := hi - lo
	if !(span > 0) || math.IsInf(span, 0) {
		return c
	}
	levels := quantileLevels(z, opt.Levels)
	c.Levels = len(levels)
	covered := make([]bool, len(levels))
	tols := make([]float64, len(levels))
	grows, decays := make([]int, len(levels)), make([]int, len(levels))
	for i, u := range levels {
		cr := resolved(tr.Crossings(u))
		for j := range cr {
			// A noise-free latent still has rounding: keep a floor.
			cr[j].Err = math.Max(cr[j].Err, 1e-12*span/dt)
		}
		k := multiplicity(len(cr), opt.Sigmas)
		tols[i] = math.NaN()
		if len(cr) >= 2 {
			tols[i] = levelTolerance(cr, k)
		}
		reps, kr, gr, de := representatives(cr, opt.Sigmas, len(levels))
		grows[i], decays[i] = gr, de
		d := distinct(reps, kr)
		c.MaxDistinct = max(c.MaxDistinct, d)
		ok := d >= 3
		if opt.ClipOffsets {
			ps := pairSums(cr, k)
			c.MaxPairSums = max(c.MaxPairSums, ps)
			ok = ps >= 2
		}
		if ok {
			covered[i] = true
			c.Covered++
		}
	}
	// Widest run of covered levels.
	bestLen, bestEnd, run := 0, -1, 0
	for i, ok := range covered {
		if ok {
			run++
			if run > bestLen {
				bestLen, bestEnd = run, i
			}
		} else {
			run = 0
		}
	}
	c.SlopeTol = finiteMedian(tols)
	if bestLen == 0 {
		return c
	}
	c.SlopeTol = finiteMedian(tols[bestEnd-bestLen+1 : bestEnd+1])
	for i := bestEnd - bestLen + 1; i <= bestEnd; i++ {
		c.Growing += grows[i]
		c.Decaying += decays[i]
	}
	c.Lo = levels[bestEnd-bestLen+1]
	c.Hi = levels[bestEnd]
	// ρ, υ⋆, the slope share and the clips that reach U.
	var in, n int
	var ups, all float64
	clips := map[int]bool{}
	for m, zm := range z {
		d1, _ := estimator.Stencil(zm, dt)
		for i, v := range d1 {
			n++
			all += v * v
			if x := zm[i+1]; x >= c.Lo && x <= c.Hi {
				in++
				ups += v * v
				clips[m] = true
			}
		}
	}
	c.Clips = len(clips)
	if n > 0 {
		c.Rho = float64(in) / float64(n)
	}
	if in > 0 {
		c.UpsStar = ups / float64(in)
	}
	if all > 0 {
		c.SlopeShare = ups / all
	}
	c.Width = c.Rho
	c.Holds = bestLen >= 3 && c.Width >= opt.MinWidth && c.SlopeShare >= opt.MinWidth
	return c
}

// finiteMedian is the median of v's finite values (0 for none).
func finiteMedian(v []float64) float64 {
	var f []float64
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			f = append(f, x)
		}
	}
	return median(f)
}

// quantileLevels returns up to n distinct levels at the pooled samples'
// quantiles (i+1)/(n+1). Levels follow the data rather than the range:
// three clips whose initial velocities differ by orders of magnitude share
// only a sliver of the range, yet that sliver holds a third of the samples,
// and it is the samples there (the lemma's ρ) that condition the design.
func quantileLevels(z [][]float64, n int) []float64 {
	var all []float64
	for _, zm := range z {
		all = append(all, zm...)
	}
	sort.Float64s(all)
	out := make([]float64, 0, n)
	for i := range n {
		q := float64(i+1) / float64(n+1) * float64(len(all)-1)
		j := int(q)
		u := all[j]
		if j+1 < len(all) {
			u += (q - float64(j)) * (all[j+1] - all[j])
		}
		if len(out) == 0 || u > out[len(out)-1] {
			out = append(out, u)
		}
	}
	return out
}
