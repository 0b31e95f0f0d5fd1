package ambient

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/modes"
	"github.com/physd/physd/window"
)

// signatureLineRatio is how far above its floor a line of the signature
// must stand to be tried as a mode: lower than window.PeakRatio, because
// the signature's tail is smooth noise (it does not decay) that raises
// the floor; a spurious line's mode has the jackknife σ of noise, and the
// precision limits refuse it.
const signatureLineRatio = 10

// identifyModes identifies each mode of a record whose signature holds
// several (window.DecayLinesAbove of R(τ) over τ = Δt … search·Δt:
// beyond that the signature is mostly its noise, which does not decay):
// a structure under broadband forcing rings in all its modes, and its
// correlation function is a sum of their free responses,
//
//	R(τ) = Σ_i e^{−σ_i τ}(a_i cos ω_i τ + b_i sin ω_i τ),  τ > 0,
//
// each satisfying its own R_i″ + γ1 R_i′ + γ0 R_i = 0. The terms are
// fitted jointly (modes.Fit) over the lags that hold opt.Decays decay
// times of the slowest; mode i's signature is R less the offset and the
// other terms, fitted as Identify fits a one-mode record over its own
// span; its σ is the jackknife's over the same groups, each group's joint
// fit started from the whole record's. Each mode is certified on its own:
// window.Certify, the record's precision advice, the broadband check and
// modes.CloseReason. nil when the signature holds fewer than two lines.
func identifyModes(ctx context.Context, c *Correlation, sig []float64, dt float64, groups, search int, opt Options) ([]modes.Mode, error) {
	maxLag := len(sig) - 1
	lines := window.DecayLinesAbove(sig[1:search+1], dt, signatureLineRatio)
	if len(lines) < 2 {
		return nil, nil
	}
	lines = lines[:min(len(lines), modes.DefaultMaxModes)]
	omegas := make([]float64, len(lines))
	for i, l := range lines {
		omegas[i] = 2 * math.Pi * l.Hz
	}
	byHz := func(a, b modes.Term) int { return cmp.Compare(a.Hz(), b.Hz()) }
	joint, err := modes.Fit(sig[1:search+1], dt, omegas, 0.01)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(joint.Terms, byHz)
	span := jointSpan(joint.Terms, dt, opt.Decays, maxLag)
	if m, err := modes.Fit(sig[1:span+1], dt, termOmegas(joint.Terms), 0.01); err == nil {
		slices.SortFunc(m.Terms, byHz)
		joint = m
	}
	record := float64(c.Frames()) * dt
	// Each group's signature and joint fit, once for every mode.
	type replicate struct {
		sig   []float64
		joint *modes.Model
	}
	nseg := c.Segments()
	var reps []replicate
	for g := range groups {
		sg, _ := c.Signature(func(k int) bool { return k*groups/nseg != g })
		if sg == nil {
			continue
		}
		jg, err := modes.Fit(sg[1:span+1], dt, termOmegas(joint.Terms), 0.01)
		if err != nil || len(jg.Terms) != len(joint.Terms) {
			continue
		}
		slices.SortFunc(jg.Terms, byHz)
		reps = append(reps, replicate{sg, jg})
	}
	out := make([]modes.Mode, len(joint.Terms))
	for i, tm := range joint.Terms {
		lags := modeLags(tm, dt, opt.Decays, maxLag)
		r, err := fitSignature(ctx, modalSignature(sig, joint, i, dt), lags, dt)
		if err != nil {
			return nil, fmt.Errorf("ambient: mode %d at %.3g Hz: %w", i+1, tm.Hz(), err)
		}
		thetas := make([][2]float64, 0, groups)
		for _, rep := range reps {
			rg, err := fitSignature(ctx, modalSignature(rep.sig, rep.joint, i, dt), lags, dt)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				continue
			}
			thetas = append(thetas, [2]float64{rg.Gamma1, rg.Gamma0})
		}
		cov, note := jackknifeCov(thetas, groups)
		r.Cov, r.Sigma1, r.Sigma0 = cov, math.Sqrt(cov[0][0]), math.Sqrt(cov[1][1])
		r.Physics = estimator.Derive(r.Gamma1, r.Gamma0, cov)
		r.Uncertainty = &estimator.Uncertainty{Source: "segments-jackknife", Note: note}
		v := window.Certify(r, opt.Thresholds, nil)
		recordAdvice(&v, r, record, opt.Thresholds)
		v.Hold(window.CheckBroadband, true, broadband(r))
		v.Hold(window.CheckSeparated, false, modes.CloseReason(joint.Terms, i))
		out[i] = modes.Mode{Index: i + 1, Term: tm, Result: r, Verdict: v, Span: lags}
	}
	return out, nil
}

// modalSignature is mode i's signature: R(τ) less the joint fit's offset
// and its other terms, τ = 0 … len(sig)−1 (R(0) kept as it is: it is not
// fitted). The joint fit's time origin is τ = Δt.
func modalSignature(sig []float64, joint *modes.Model, i int, dt float64) []float64 {
	q := make([]float64, len(sig))
	q[0] = sig[0]
	for k := 1; k < len(sig); k++ {
		t := float64(k-1) * dt
		q[k] = sig[k] - joint.Offset
		for j, o := range joint.Terms {
			if j != i {
				q[k] -= o.At(t)
			}
		}
	}
	return q
}

func termOmegas(terms []modes.Term) []float64 {
	w := make([]float64, len(terms))
	for i, t := range terms {
		w[i] = t.Omega
	}
	return w
}

// modeLags is the lags one mode is fitted over: decays decay times 1/σ
// and at least MinPeriods+1 periods, within [16, maxLag].
func modeLags(tm modes.Term, dt, decays float64, maxLag int) int {
	if !(tm.Sigma > 0) || !(tm.Omega > 0) {
		return maxLag
	}
	tau := math.Max(decays/tm.Sigma, (MinPeriods+1)*2*math.Pi/tm.Omega)
	return min(max(int(math.Ceil(tau/dt)), 16), maxLag)
}

// jointSpan is the longest of the modes' lags.
func jointSpan(terms []modes.Term, dt, decays float64, maxLag int) int {
	n := 16
	for _, tm := range terms {
		n = max(n, modeLags(tm, dt, decays, maxLag))
	}
	return min(n, maxLag)
}
