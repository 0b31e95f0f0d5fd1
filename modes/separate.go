package modes

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/window"
)

// Defaults of Options.
const (
	// DefaultMaxModes is how many of a readout's strongest spectral lines
	// are fitted as modes.
	DefaultMaxModes = 4
	// CloseBandwidths is how many half-power bandwidths 2ζf_n (the wider
	// of the two) two modes must stand apart to be read on their own.
	// Closer, the joint fit trades one's amplitude and damping for the
	// other's and a free decay's beat is barely begun before it dies.
	CloseBandwidths = 3.0
	// SpanFloor is the mode's envelope, in units of the joint fit's
	// residual rms, at which its modal coordinate is cut: past it the
	// coordinate is noise and the other modes' misfit (flow cuts a decay
	// where it meets the floor the same way). At 3 a cable's third
	// harmonic at 10× its noise (3.9 Hz, ζ = 1 %, 0.5 px) lost level-set
	// coverage on 3 of 5 seeds, as the lone mode cut there did on 1; the
	// whole window (the floor at 0) lost it on every seed.
	SpanFloor = 2.0
	// startZeta is the damping ratio the joint fit starts every mode from.
	startZeta = 0.01
)

// Options tune Separate. The zero value takes the defaults.
type Options struct {
	// Preset is the estimator's recipe for the modal coordinates' fits.
	Preset estimator.Preset
	// Thresholds are the certificate's.
	Thresholds window.Thresholds
	// MaxModes bounds the modes fitted (DefaultMaxModes).
	MaxModes int
}

// Mode is one mode of a readout.
type Mode struct {
	// Index numbers the readout's modes from 1 by frequency.
	Index int
	// Term is the joint fit's term of the mode, in the readout's units.
	Term Term
	// Result is the paper's fit of the modal coordinate and Verdict its
	// certificate, with CheckSeparated.
	Result  *estimator.Result
	Verdict window.Verdict
	// Span is how many leading samples of the coordinate were fitted.
	Span int
}

// Separate finds the modes of x, one clip of a readout sampled dt seconds
// apart, and fits and certifies each on its own. It returns nil (and the
// window's own analysis speaks for x) when x holds fewer than two
// spectral lines. The modes are fitted jointly through the readout's
// static nonlinearity (FitReadout); the modal coordinate of mode i is
//
//	q_i(t) = T_i(t) + (x(t) − c − g(u(t))) / g'(u(t))   (Model.Coordinate),
//
// for a linear readout x(t) − c − Σ_{j≠i} T_j(t), the joint fit's other
// terms taken out; it is fitted over its first Span samples (to where its
// envelope meets SpanFloor times the fit's residual) as a free response
// (estimator.FitRuns, named name), its noise the joint fit's residual
// rms, its covariance widened by how far the mode moves with g's degree
// (Model.Shift). A readout whose gain is not bounded over the swing
// (Model.Nonlinear) has its modes refused (window.CheckReadoutLinear).
func Separate(ctx context.Context, name string, x []float64, dt float64, opt Options) ([]Mode, error) {
	return SeparateClips(ctx, name, [][]float64{x}, dt, opt)
}

// SeparateClips is Separate over several clips of one readout — the
// releases of an event window — sampled dt seconds apart. The lines are
// every clip's, one where two clips' lie within the coarser one's
// frequency bin; each clip is fitted jointly with a term per line, and
// each mode's coordinates in the clips that carry it (its envelope above
// SpanFloor times that clip's residual: a release that did not excite a
// mode holds no trajectory of it) are fitted together, one trajectory a
// clip, and certified as a window of those clips is: one clip of an
// underdamped mode, or three of distinct velocities. A mode's Term and
// Span are those of the clip where it is strongest.
func SeparateClips(ctx context.Context, name string, xs [][]float64, dt float64, opt Options) ([]Mode, error) {
	if opt.MaxModes <= 0 {
		opt.MaxModes = DefaultMaxModes
	}
	lines := modeLines(xs, dt, opt.MaxModes)
	if len(lines) < 2 {
		return nil, nil
	}
	lines = lines[:min(len(lines), opt.MaxModes)]
	omegas := make([]float64, len(lines))
	for i, l := range lines {
		omegas[i] = 2 * math.Pi * l.Hz
	}
	fits := make([]*Model, len(xs))
	var fitErr error
	for c, x := range xs {
		m, err := FitReadout(x, dt, omegas, startZeta)
		if err != nil {
			fitErr = err
			continue
		}
		fits[c] = m
	}
	if !slices.ContainsFunc(fits, func(m *Model) bool { return m != nil }) {
		return nil, fitErr
	}
	// The strongest clip's terms stand for the modes.
	terms := make([]Term, len(lines))
	strongest := make([]int, len(lines))
	for i := range lines {
		strongest[i] = -1
		for c, m := range fits {
			if m != nil && (strongest[i] < 0 || m.Terms[i].Amplitude() > terms[i].Amplitude()) {
				terms[i], strongest[i] = m.Terms[i], c
			}
		}
	}
	// Modes by frequency, as the fitted terms place them.
	order := make([]int, len(lines))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(terms[a].Hz(), terms[b].Hz()) })
	sorted := make([]Term, len(order))
	for k, i := range order {
		sorted[k] = terms[i]
	}
	out := make([]Mode, 0, len(lines))
	for k, i := range order {
		var lat [][]float64
		var runs estimator.Runs
		var noise2, lastRMS float64
		var shift [2]float64
		var nonlinear string
		span := 0
		for c, m := range fits {
			if m == nil {
				continue
			}
			tm := m.Terms[i]
			if len(xs) > 1 && !(tm.Amplitude() > SpanFloor*m.RMS) {
				continue
			}
			n := spanOf(tm, m.RMS, dt, len(xs[c]))
			q := make([]float64, n)
			m.Coordinate(q, xs[c], i, dt)
			lat = append(lat, q)
			runs.Clip, runs.First = append(runs.Clip, len(runs.Clip)), append(runs.First, 0)
			noise2 += m.RMS * m.RMS
			lastRMS = m.RMS
			if m.Nonlinear != "" && nonlinear == "" {
				nonlinear = m.Nonlinear
			}
			if m.Shift != nil {
				shift[0], shift[1] = max(shift[0], m.Shift[i][0]), max(shift[1], m.Shift[i][1])
			}
			if c == strongest[i] {
				span = n
			}
		}
		if len(lat) == 0 {
			continue
		}
		r, err := estimator.FitRuns(ctx, fmt.Sprintf("%s mode %d", name, k+1), lat, runs, dt, opt.Preset)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("modes: mode %d at %.3g Hz: %w", k+1, terms[i].Hz(), err)
		}
		r.Noise = math.Sqrt(noise2 / float64(len(lat)))
		if len(lat) == 1 {
			r.Noise = lastRMS
		}
		widen(r, shift)
		v := window.Certify(r, opt.Thresholds, nil)
		why := CloseReason(sorted, k)
		if why == "" && len(lat) > 1 {
			if ag, err := Agree(lat, dt, terms[i].Omega); err == nil {
				_, why = ag.Apart()
			}
		}
		v.Hold(window.CheckSeparated, false, why)
		v.Hold(window.CheckReadoutLinear, false, nonlinear)
		out = append(out, Mode{Index: k + 1, Term: terms[i], Result: r, Verdict: v, Span: span})
	}
	return out, nil
}

// widen adds the readout model's uncertainty, the shift of (γ1, γ0) when
// g's degree is raised (Model.Shift), to r's covariance in quadrature and
// derives r's physics again: a mode is as precise as its readout is
// known.
func widen(r *estimator.Result, shift [2]float64) {
	if shift == [2]float64{} {
		return
	}
	r.Cov[0][0] += shift[0] * shift[0]
	r.Cov[1][1] += shift[1] * shift[1]
	r.Sigma1, r.Sigma0 = math.Sqrt(r.Cov[0][0]), math.Sqrt(r.Cov[1][1])
	r.Physics = estimator.Derive(r.Gamma1, r.Gamma0, r.Cov)
}

// spanOf is how many leading samples of n hold the term above SpanFloor
// times the noise rms: A e^{−σt} ≥ SpanFloor·rms, t < n·dt; all n when
// the term does not decay or the noise is nil.
func spanOf(tm Term, rms, dt float64, n int) int {
	a := tm.Amplitude()
	if !(tm.Sigma > 0) || !(rms > 0) || !(a > SpanFloor*rms) {
		return n
	}
	t := math.Log(a/(SpanFloor*rms)) / tm.Sigma
	return min(n, max(int(math.Ceil(t/dt)), 8))
}

// CloseReason is the reason mode i of terms is not read on its own:
// another within CloseBandwidths of the wider half-power bandwidth 2ζf_n
// ("" when none is).
func CloseReason(terms []Term, i int) string {
	fi, bi := terms[i].Hz(), 2*terms[i].Zeta()*terms[i].Hz()
	for j, o := range terms {
		if j == i {
			continue
		}
		fj, bj := o.Hz(), 2*o.Zeta()*o.Hz()
		bw := math.Max(math.Abs(bi), math.Abs(bj))
		if d := math.Abs(fi - fj); d < CloseBandwidths*bw {
			return fmt.Sprintf("mode %d (%.4g Hz) is %.2g half-power bandwidths from the mode at %.4g Hz (need %g): one readout does not tell two modes that close apart", i+1, fi, d/bw, fj, CloseBandwidths)
		}
	}
	return ""
}
