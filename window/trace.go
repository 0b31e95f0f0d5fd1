package window

import (
	"fmt"
	"math"
	"sort"

	"github.com/physd/physd/estimator"
	"gonum.org/v1/gonum/mathext"
)

// Trace is a window's latent as the coverage test reads it: the samples,
// the slope estimator and its noise, and the smooth reference that
// discretisation and crossing-placement bounds are taken from.
//
// With an output-error fit (NewTrace on an estimate that has one) the
// noise is measured once, from the residual e_k = z_k − ẑ_k of the fitted
// ODE solution ẑ, colour included, and every bound on what sampling does
// to a slope comes from ẑ's exact motion, not from differences of the
// noisy latent. Without one (a bare latent, or a preset with no exact
// fit) the latent is its own reference and its noise is taken as white,
// which is conservative.
type Trace struct {
	Z  [][]float64
	Dt float64
	// Noise is the latent's noise as measured.
	Noise Noise
	// motion[m][k] is the reference's (position, velocity, acceleration,
	// jerk) at sample k of clip m; nil without a fit.
	motion [][][4]float64
	// slope[m][k] is the slope estimate at each sample.
	slope [][]float64
	// bound is a global discretisation bound used without a reference.
	bound float64
}

// Noise is the latent's noise as the certificate counts it.
type Noise struct {
	// Z is the RMS of the residual e = z − ẑ (the latent's noise).
	Z float64 `json:"sigma_z"`
	// Slope is the RMS of the slope estimator applied to e: the noise of
	// one slope estimate, measured, so coloured noise counts as it is.
	Slope float64 `json:"sigma_slope"`
	// HalfWidth is h of the local-linear slope estimator (h = 1: the
	// centred difference).
	HalfWidth int `json:"slope_half_width"`
	// SlopeFrom says which measurement of Slope was kept: "residual",
	// "crossings" (see newFittedTrace) or "white" (NewTraceWhite).
	SlopeFrom string `json:"sigma_slope_from"`
	// Lag1 is e's lag-one autocorrelation (0 for white noise).
	Lag1 float64 `json:"lag1"`
	// Source says where the noise was measured: "output-error" (the
	// fitted solution's residual) or "stencil" (the equation error's,
	// assuming white noise).
	Source string `json:"source"`
}

// maxHalfWidth caps the slope estimator's half-width.
const maxHalfWidth = 12

// localSlope is the local-linear least-squares slope at sample k over
// ±h samples (fewer near the ends, down to the centred difference; a
// second-order one-sided difference at the two end samples):
//
//	s_k = Σ_{j=−h..h} j z_{k+j} / (Δt Σ_{j=−h..h} j²).
//
// It is the centred difference for h = 1 and averages white noise down
// as h^{−3/2}; its error on a smooth trajectory is Δt² z”' Σj⁴/(6 Σj²).
func localSlope(z []float64, k, h int, dt float64) float64 {
	n := len(z)
	switch {
	case n < 2:
		return 0
	case n < 3 && k == 0:
		return (z[1] - z[0]) / dt
	case n < 3:
		return (z[k] - z[k-1]) / dt
	case k == 0:
		return (-3*z[0] + 4*z[1] - z[2]) / (2 * dt)
	case k == n-1:
		return (3*z[k] - 4*z[k-1] + z[k-2]) / (2 * dt)
	}
	h = min(h, k, n-1-k)
	var num, den float64
	for j := 1; j <= h; j++ {
		num += float64(j) * (z[k+j] - z[k-j])
		den += 2 * float64(j*j)
	}
	return num / (den * dt)
}

// slopeGain is the white-noise gain of localSlope at sample k of n
// relative to its interior ±h stencil: √(Σ w_j²) of the stencil used
// there over the interior's, 1/√(2 Σ_{j≤h} j²). Near the ends the stencil
// shrinks, down to the one-sided (−3, 4, −1)/2 at the end samples, and
// its noise grows; the measured σ_s is for the interior.
func slopeGain(k, n, h int) float64 {
	g := func(h int) float64 { return 1 / math.Sqrt(float64(h*(h+1)*(2*h+1))/3) }
	switch {
	case n < 3:
		return math.Sqrt2 / g(h)
	case k == 0 || k == n-1:
		return math.Sqrt(26) / 2 / g(h)
	}
	return g(min(h, k, n-1-k)) / g(h)
}

// slopes applies localSlope to every sample of z.
func slopes(z []float64, h int, dt float64) []float64 {
	out := make([]float64, len(z))
	for k := range z {
		out[k] = localSlope(z, k, h, dt)
	}
	return out
}

// NewTrace prepares an estimate's latents for the coverage test. Without
// an output-error fit it is NewTraceWhite with the stencil's noise; with
// one, see newFittedTrace.
func NewTrace(r *estimator.Result) (Trace, error) {
	if r == nil || len(r.Latents) == 0 {
		return Trace{}, fmt.Errorf("trace: no latents")
	}
	tf := r.Trajectory
	if tf == nil || len(tf.Resid) != len(r.Latents) {
		var noise float64
		if r.Stencil != nil {
			noise = NoiseFromResidual(r.Stencil.Resid, r.Dt)
		}
		return NewTraceWhite(r.Latents, r.Dt, noise), nil
	}
	motion, err := tf.Motion(r.Dt)
	if err != nil {
		return Trace{}, fmt.Errorf("trace: %w", err)
	}
	return newFittedTrace(r.Latents, r.Dt, tf.Resid, motion, tf.Gamma0), nil
}

// newFittedTrace builds a Trace from latents z, the residual e = z − ẑ of
// a fitted solution ẑ and ẑ's exact motion.
//
// Slopes: the local-linear slope F_h(z) minus its error on the reference,
// F_h(ẑ) − ẑ', so that what remains is ẑ' + F_h(e): the reference's exact
// velocity plus the smoothed slope of what the model leaves. Smoothing
// over ±h samples then costs no bias on the model's part, only on e's.
//
// Noise: the slope noise σ_s(h) is measured twice and the smaller kept:
//   - from the residual, the RMS of F_h(e) (colour included, but so is any
//     misfit, e.g. a timing jump, whose effect on the slope at a level the
//     shifted crossing time cancels);
//   - from the crossings themselves: at a few central levels, the slopes
//     of successive same-sign crossings of one clip form a sequence whose
//     second differences have variance 6σ_s² plus a damping trend that
//     only inflates it; counted as one level's worth of degrees of freedom
//     ν (the levels share samples) and raised to its one-sided 95 % upper
//     confidence bound σ̂ √(ν/χ²_ν(0.05)).
//
// h runs from 1 (the centred difference) up to an eighth of the fitted
// period (at most maxHalfWidth) and the h with the least σ_s is used.
func newFittedTrace(z [][]float64, dt float64, resid [][]float64, motion [][][4]float64, gamma0 float64) Trace {
	t := Trace{Z: z, Dt: dt, motion: motion}
	t.Noise.Source = "output-error"
	var ss, lag float64
	n := 0
	for _, e := range resid {
		for i, v := range e {
			ss += v * v
			n++
			if i > 0 {
				lag += v * e[i-1]
			}
		}
	}
	if n > 0 {
		t.Noise.Z = math.Sqrt(ss / float64(n))
	}
	if ss > 0 {
		t.Noise.Lag1 = lag / ss
	}
	hmax := maxHalfWidth
	if gamma0 > 0 {
		hmax = min(hmax, max(1, int(2*math.Pi/math.Sqrt(gamma0)/(8*dt))))
	}
	best := math.Inf(1)
	for h := 1; h <= hmax; h++ {
		sl := correctedSlopes(z, motion, h, dt)
		sa := residualSlopeNoise(resid, h, dt)
		sb, nu := crossingSlopeNoise(z, sl)
		sig, src := sa, "residual"
		if nu >= 3 {
			if up := sb * math.Sqrt(float64(nu)/chi2Quantile(0.05, float64(nu))); up < sa {
				sig, src = up, "crossings"
			}
		}
		if sig < best || t.slope == nil {
			best = sig
			t.Noise.Slope, t.Noise.HalfWidth, t.Noise.SlopeFrom = sig, h, src
			t.slope = sl
		}
	}
	return t
}

// correctedSlopes is F_h(z) − (F_h(ẑ) − ẑ') at every sample.
func correctedSlopes(z [][]float64, motion [][][4]float64, h int, dt float64) [][]float64 {
	out := make([][]float64, len(z))
	for m, zm := range z {
		s := make([]float64, len(zm))
		for k := range zm {
			s[k] = localSlope(zm, k, h, dt) - (slopeOfMotion(motion[m], k, h, dt) - motion[m][k][1])
		}
		out[m] = s
	}
	return out
}

// residualSlopeNoise is the RMS of F_h(e) over the samples where the full
// ±h stencil applies.
func residualSlopeNoise(resid [][]float64, h int, dt float64) float64 {
	var se float64
	n := 0
	for _, e := range resid {
		for k := h; k+h < len(e); k++ {
			v := localSlope(e, k, h, dt)
			se += v * v
			n++
		}
	}
	if n == 0 {
		return math.Inf(1)
	}
	return math.Sqrt(se / float64(n))
}

// crossingSlopeNoise estimates σ_s from the scatter of successive
// same-sign slopes sl at five central levels (the pooled samples'
// quantiles 0.3…0.7, where slopes are steep and crossing times sharp). It
// returns σ̂ and ν, the most second differences found at one level (the
// levels share samples, so they are not counted as independent).
func crossingSlopeNoise(z, sl [][]float64) (float64, int) {
	var all []float64
	for _, zm := range z {
		all = append(all, zm...)
	}
	if len(all) < 8 {
		return 0, 0
	}
	sort.Float64s(all)
	var sum float64
	var cnt, perLevel int
	for _, q := range []float64{0.3, 0.4, 0.5, 0.6, 0.7} {
		u := all[int(q*float64(len(all)-1))]
		here := 0
		for m, zm := range z {
			var seq [2][]float64
			for k := 0; k+1 < len(zm); k++ {
				a, b := zm[k]-u, zm[k+1]-u
				if !((a < 0 && b >= 0) || (a > 0 && b <= 0)) {
					continue
				}
				f := a / (a - b)
				i := 0
				if b < a {
					i = 1
				}
				seq[i] = append(seq[i], (1-f)*sl[m][k]+f*sl[m][k+1])
			}
			for _, q := range seq {
				for i := 2; i < len(q); i++ {
					d := q[i] - 2*q[i-1] + q[i-2]
					sum += d * d
					cnt++
					here++
				}
			}
		}
		perLevel = max(perLevel, here)
	}
	if cnt == 0 {
		return 0, 0
	}
	return math.Sqrt(sum / (6 * float64(cnt))), perLevel
}

// slopeOfMotion is localSlope applied to the reference's positions.
func slopeOfMotion(mo [][4]float64, k, h int, dt float64) float64 {
	n := len(mo)
	pos := func(i int) float64 { return mo[i][0] }
	switch {
	case n < 3:
		return mo[k][1]
	case k == 0:
		return (-3*pos(0) + 4*pos(1) - pos(2)) / (2 * dt)
	case k == n-1:
		return (3*pos(k) - 4*pos(k-1) + pos(k-2)) / (2 * dt)
	}
	h = min(h, k, n-1-k)
	var num, den float64
	for j := 1; j <= h; j++ {
		num += float64(j) * (pos(k+j) - pos(k-j))
		den += 2 * float64(j*j)
	}
	return num / (den * dt)
}

// NewTraceWhite prepares bare latents with white noise of standard
// deviation noiseZ and no reference solution: slopes by the centred
// difference, whose noise is σ_z/(√2 Δt), and discretisation bounded by
// the window's largest third difference (the stencil errs by Δt²|z⁽³⁾|/6
// and linear interpolation by Δt²|z⁽³⁾|/8). Conservative: a noisy latent's
// third differences are noise extremes.
func NewTraceWhite(z [][]float64, dt, noiseZ float64) Trace {
	t := Trace{Z: z, Dt: dt}
	t.Noise = Noise{Z: noiseZ, Slope: noiseZ / (math.Sqrt2 * dt), HalfWidth: 1, SlopeFrom: "white", Source: "stencil"}
	t.slope = make([][]float64, len(z))
	var m float64
	for i, zm := range z {
		t.slope[i] = slopes(zm, 1, dt)
		for k := 0; k+3 < len(zm); k++ {
			d3 := zm[k+3] - 3*zm[k+2] + 3*zm[k+1] - zm[k]
			m = math.Max(m, math.Abs(d3))
		}
	}
	t.bound = (1.0/6 + 1.0/8) * m / dt
	return t
}

// Crossings returns every passage of the latents through level u, with
// each slope's statistical uncertainty and discretisation bound.
func (t Trace) Crossings(u float64) []Crossing {
	var out []Crossing
	dt := t.Dt
	for m, zm := range t.Z {
		if len(zm) < 2 {
			continue
		}
		for k := 0; k+1 < len(zm); k++ {
			a, b := zm[k]-u, zm[k+1]-u
			// Half-open so a sample exactly on the level counts once.
			if !((a < 0 && b >= 0) || (a > 0 && b <= 0)) {
				continue
			}
			f := a / (a - b)
			s := (1-f)*t.slope[m][k] + f*t.slope[m][k+1]
			c := Crossing{Clip: m, Time: (float64(k) + f) * dt, Slope: s}
			c.ref = s
			if t.motion != nil {
				c.Err, c.Sigma = t.fittedBounds(m, k, f)
				c.ref = (1-f)*t.motion[m][k][1] + f*t.motion[m][k+1][1]
			} else {
				c.Err, c.Sigma = t.whiteBounds(zm, k)
			}
			// Near a clip's ends the slope stencil is shorter and noisier.
			h, n := max(t.Noise.HalfWidth, 1), len(zm)
			if g := math.Max(slopeGain(k, n, h), slopeGain(k+1, n, h)); g > 1 {
				c.Sigma = math.Hypot(c.Sigma, (g-1)*t.Noise.Slope)
			}
			out = append(out, c)
		}
	}
	return out
}

// fittedBounds bounds a crossing between samples k and k+1 of clip m, at
// fraction f, from the reference's motion:
//   - discretisation: linear interpolation of the slope between samples,
//     Δt²|z⁽³⁾|/8, and the chord's misplacement of the crossing time,
//     Δt²z”²/(8|z'|) (the estimator's own error is corrected);
//   - noise: the slope estimate's σ_s, and the crossing time's scatter
//     σ_z/|z'|, which moves the slope by |z”| σ_z/|z'|.
func (t Trace) fittedBounds(m, k int, f float64) (disc, sigma float64) {
	dt := t.Dt
	mo := t.motion[m]
	a, b := mo[k], mo[k+1]
	v := math.Max(math.Abs((1-f)*a[1]+f*b[1]), 1e-300)
	acc := math.Max(math.Abs(a[2]), math.Abs(b[2]))
	jerk := math.Max(math.Abs(a[3]), math.Abs(b[3]))
	disc = dt*dt*jerk/8 + dt*dt*acc*acc/(8*v)
	sigma = math.Hypot(t.Noise.Slope, acc*t.Noise.Z/v)
	return math.Min(disc, math.MaxFloat64), math.Min(sigma, math.MaxFloat64)
}

// whiteBounds is fittedBounds without a reference: curvature from the
// latent's second differences, the window's global third-difference bound.
func (t Trace) whiteBounds(z []float64, k int) (disc, sigma float64) {
	dt := t.Dt
	acc := math.Max(math.Abs(curvAt(z, k, dt)), math.Abs(curvAt(z, k+1, dt)))
	chord := math.Max(math.Abs(z[k+1]-z[k])/dt, 1e-300)
	disc = t.bound + dt*dt*acc*acc/(8*chord)
	return math.Min(disc, math.MaxFloat64), t.Noise.Slope
}

// curvAt is the second difference at k (at the nearest interior sample).
func curvAt(z []float64, k int, dt float64) float64 {
	if len(z) < 3 {
		return 0
	}
	k = min(max(k, 1), len(z)-2)
	return (z[k+1] - 2*z[k] + z[k-1]) / (dt * dt)
}

// chi2Quantile is the p-quantile of the χ² distribution with nu degrees
// of freedom: 2·P⁻¹(ν/2, p), P the regularised lower incomplete gamma.
func chi2Quantile(p, nu float64) float64 {
	return 2 * mathext.GammaIncRegInv(nu/2, p)
}

// PeakSlope is the largest slope magnitude in the window: the
// reference's velocity with a fit, the slope estimates without.
func (t Trace) PeakSlope() float64 {
	var m float64
	if t.motion != nil {
		for _, mo := range t.motion {
			for _, s := range mo {
				m = math.Max(m, math.Abs(s[1]))
			}
		}
		return m
	}
	for _, s := range t.slope {
		for _, v := range s {
			m = math.Max(m, math.Abs(v))
		}
	}
	return m
}
