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
	// Err bounds the slope's discretisation error: the chord between two
	// samples misplaces the crossing by up to Δt²|z''|/(8|chord slope|),
	// which moves the slope by |z''| times that: large near turning points.
	Err float64 `json:"slope_err"`
}

// Coverage is the outcome of the level-set slope coverage test (Def. 4.1):
// a level u is covered when the trajectories cross it at least three times
// with pairwise distinct slopes, distinct meaning further apart than
// SlopeTol; coverage holds when a run of at least three adjacent covered
// levels spans an interval U holding at least MinWidth of the samples.
type Coverage struct {
	Holds bool `json:"holds"`
	// Lo, Hi bound the widest interval U of covered levels (NaN if none).
	Lo float64 `json:"u_lo"`
	Hi float64 `json:"u_hi"`
	// Width is the fraction of samples whose latent lies in U (equal to
	// Rho); MinWidth the threshold.
	Width    float64 `json:"width"`
	MinWidth float64 `json:"min_width"`
	// Levels is the number of levels tested, Covered how many were covered.
	Levels  int `json:"levels"`
	Covered int `json:"covered"`
	// MaxDistinct is the most pairwise-distinct slopes found at any level.
	MaxDistinct int `json:"max_distinct_slopes"`
	// SlopeTol is the distinctness tolerance, from the latent noise NoiseZ.
	SlopeTol float64 `json:"slope_tol"`
	NoiseZ   float64 `json:"noise_z"`
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

// Crossings returns every passage of the trajectories through level u.
// Slopes come from the centred stencil at the two samples around the
// crossing, interpolated linearly to the crossing time (second-order
// one-sided differences at the ends).
func Crossings(z [][]float64, dt, u float64) []Crossing {
	var out []Crossing
	for m, zm := range z {
		if len(zm) < 2 {
			continue
		}
		for k := 0; k+1 < len(zm); k++ {
			a, b := zm[k]-u, zm[k+1]-u
			// Half-open so a sample exactly on the level counts once.
			if (a < 0 && b >= 0) || (a > 0 && b <= 0) {
				f := a / (a - b)
				s := (1-f)*slopeAt(zm, k, dt) + f*slopeAt(zm, k+1, dt)
				acc := math.Max(math.Abs(curvAt(zm, k, dt)), math.Abs(curvAt(zm, k+1, dt)))
				chord := math.Abs(zm[k+1]-zm[k]) / dt
				e := dt * dt * acc * acc / (8 * math.Max(chord, 1e-300))
				out = append(out, Crossing{Clip: m, Time: (float64(k) + f) * dt, Slope: s, Err: math.Min(e, math.MaxFloat64)})
			}
		}
	}
	return out
}

// curvAt is the second difference at k (at the nearest interior sample).
func curvAt(z []float64, k int, dt float64) float64 {
	if len(z) < 3 {
		return 0
	}
	k = min(max(k, 1), len(z)-2)
	return (z[k+1] - 2*z[k] + z[k-1]) / (dt * dt)
}

func slopeAt(z []float64, k int, dt float64) float64 {
	n := len(z)
	switch {
	case n < 3 && k == 0:
		return (z[1] - z[0]) / dt
	case n < 3:
		return (z[k] - z[k-1]) / dt
	case k == 0: // second-order one-sided, to match the centred stencil's order
		return (-3*z[0] + 4*z[1] - z[2]) / (2 * dt)
	case k == n-1:
		return (3*z[k] - 4*z[k-1] + z[k-2]) / (2 * dt)
	}
	return (z[k+1] - z[k-1]) / (2 * dt)
}

// distinct returns the largest number of slopes that are pairwise further
// apart than tol (greedy on the sorted values, which is optimal in 1-D).
func distinct(c []Crossing, tol float64) int {
	s := make([]float64, len(c))
	for i, x := range c {
		s[i] = x.Slope
	}
	sort.Float64s(s)
	n, last := 0, math.Inf(-1)
	for _, v := range s {
		if v-last > tol {
			n++
			last = v
		}
	}
	return n
}

// pairSums returns how many distinct sums s_i + s_j the pairs of
// crossings of one clip with distinct slopes (further apart than tol)
// have, capped at 2: all a level needs under per-clip offsets. Two sums
// of pairs sharing a crossing differ by a slope difference, distinct
// beyond tol; two of disjoint pairs carry twice the variance, √2·tol.
func pairSums(c []Crossing, tol float64) int {
	type pair struct {
		i, j int
		sum  float64
	}
	var ps []pair
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[i].Clip == c[j].Clip && math.Abs(c[i].Slope-c[j].Slope) > tol {
				ps = append(ps, pair{i, j, c[i].Slope + c[j].Slope})
			}
		}
	}
	if len(ps) == 0 {
		return 0
	}
	for a := range ps {
		for b := a + 1; b < len(ps); b++ {
			t := math.Sqrt2 * tol
			if ps[a].i == ps[b].i || ps[a].i == ps[b].j || ps[a].j == ps[b].i || ps[a].j == ps[b].j {
				t = tol
			}
			if math.Abs(ps[a].sum-ps[b].sum) > t {
				return 2
			}
		}
	}
	return 1
}

// SlopeTolerance is the distinctness tolerance for slopes estimated from a
// latent with white noise of standard deviation noiseZ: a centred
// difference has noise σ_v = σ_z/(√2 Δt), the difference of two slopes √2
// times that, and the bar rises with the number n of slopes compared (their
// expected spread grows like √(2 ln n)).
func SlopeTolerance(noiseZ, dt float64, n int, sigmas float64) float64 {
	sv := noiseZ / (math.Sqrt2 * dt)
	k := sigmas
	if n > 1 {
		k = math.Max(sigmas, math.Sqrt(2*math.Log(float64(n)))+2)
	}
	return k * math.Sqrt2 * sv
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

// TestCoverage runs the level-set slope coverage test on the latents of one
// or more clips sharing an encoder (Thm. 4.2 for one clip, Thm. 4.5 for
// three or more), with latent noise noiseZ.
func TestCoverage(z [][]float64, dt, noiseZ float64, opt CoverageOptions) Coverage {
	opt = opt.withDefaults()
	c := Coverage{Lo: math.NaN(), Hi: math.NaN(), MinWidth: opt.MinWidth, NoiseZ: noiseZ, Levels: opt.Levels, ClipOffsets: opt.ClipOffsets}
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
	disc := slopeDiscretisation(z, dt)
	covered := make([]bool, len(levels))
	for i, u := range levels {
		cr := Crossings(z, dt, u)
		var worst float64
		for _, x := range cr {
			worst = math.Max(worst, x.Err)
		}
		tol := math.Hypot(SlopeTolerance(noiseZ, dt, len(cr), opt.Sigmas), 2*(disc+worst))
		tol = math.Max(tol, 1e-12*span/dt)
		if tol > c.SlopeTol {
			c.SlopeTol = tol
		}
		d := distinct(cr, tol)
		c.MaxDistinct = max(c.MaxDistinct, d)
		ok := d >= 3
		if opt.ClipOffsets {
			ps := pairSums(cr, tol)
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
	if bestLen == 0 {
		return c
	}
	c.Lo = levels[bestEnd-bestLen+1]
	c.Hi = levels[bestEnd]
	// ρ, υ⋆ and the clips that reach U.
	var in, n int
	var ups float64
	clips := map[int]bool{}
	for m, zm := range z {
		d1, _ := estimator.Stencil(zm, dt)
		for i, v := range d1 {
			n++
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
	c.Width = c.Rho
	c.Holds = bestLen >= 3 && c.Width >= opt.MinWidth
	return c
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

// slopeDiscretisation bounds the error of an interpolated centred-difference
// slope on a smooth trajectory: the stencil errs by Δt²|z⁽³⁾|/6 and linear
// interpolation between samples by Δt²|z⁽³⁾|/8, with |z⁽³⁾| taken as the
// largest third difference in the window.
func slopeDiscretisation(z [][]float64, dt float64) float64 {
	var m float64
	for _, zm := range z {
		for k := 0; k+3 < len(zm); k++ {
			d3 := zm[k+3] - 3*zm[k+2] + 3*zm[k+1] - zm[k]
			m = math.Max(m, math.Abs(d3))
		}
	}
	return (1.0/6 + 1.0/8) * m / dt
}
