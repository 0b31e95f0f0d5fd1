package ambient

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/modes"
	"github.com/physd/physd/window"
)

// Defaults of Options.
const (
	// DefaultGroups is how many groups of consecutive segments the
	// jackknife deletes in turn. Over 40 seeds of white-noise-driven
	// modes (ζ = 1–2 %, 10–30 min) the rms of error/σ was 1.1–1.2 with 10
	// groups and 1.0 with 20: the groups of a 10-min record are then 30 s,
	// still several decay times of such a mode.
	DefaultGroups = 20
	// DefaultDecays is how many decay times 1/(ζω) of the signature are
	// fitted (at least MinPeriods+1 periods): its envelope falls to
	// e^{−1/2} ≈ 61 % there. The signature's error does not decay with
	// the lag (Bartlett): over 20 seeds of white-noise-driven modes, ζ's
	// rms error grew from 15 % at half a decay time to 26 % at two and
	// 28 % at three (ζ = 2 %, 10 min; 13 → 20 → 21 % at ζ = 1 %, 30 min).
	DefaultDecays = 0.5
	// DefaultMaxBend is how many σ the damping fitted over LongDecays
	// decay times may exceed the damping over the fitted lags (Bend):
	// two modes within each other's half-power bandwidth beat, so the
	// envelope of their sum bends down and a longer span reads more
	// damping. Over 10 seeds of one mode (ζ = 2 %, 10 min) the bend was
	// within 1.3σ; of modes at 1 and 1.03 Hz, 0.4–3.4σ. A bend the other
	// way, beyond 3σ, is a component that does not decay (a forcing's
	// line under the mode). It is also how many σ the signature's peak
	// deficit (Peak) may fall below zero.
	DefaultMaxBend = 2.0
	// DefaultMaxRelSigmaFn and DefaultMaxRelSigmaZeta are the precision
	// limits of an ambient estimate: σ(f_n) within 1/6 % of f_n and σ(ζ)
	// within 10 % of ζ, so that 3σ is within 1 % of γ0 and 30 % of ζ — the
	// accuracy a certificate promises, at the coverage a certificate needs
	// (a calibrated σ puts 0.3 % of estimates beyond 3σ, 4.6 % beyond 2σ).
	// A record's statistical error falls only like 1/√(ζωT) (ζ: 15 % rms
	// for ζ = 2 % over 10 min at 1 Hz, 13 % for ζ = 1 % over 30 min; f_n:
	// 0.3 % and 0.2 %), so these limits are what ask for a record long
	// enough. At 2σ (0.25 % and 15 %) make ambient certified 42 of 180
	// records, one of them with ζ 31 % high (1.9σ): what a 2σ promise
	// gives, one certificate in twenty at the limit; with 0.5 % and 20 %,
	// 2 of 19 ten-minute records beyond 1 % in γ0 and 12 of 18 records of
	// two modes 0.03 Hz apart as one (make ambient, 2026-11-29).
	DefaultMaxRelSigmaFn   = 0.005 / 3
	DefaultMaxRelSigmaZeta = 0.10
	// MinPeriods is the fewest periods of the mode the fitted lags must
	// hold.
	MinPeriods = 3
)

// Options tune Identify. Zero fields select the defaults.
type Options struct {
	Groups  int
	Decays  float64
	MaxBend float64
	// Thresholds are the certificate's; unset precision limits become
	// DefaultMaxRelSigmaFn and DefaultMaxRelSigmaZeta, with no floor on
	// σ(ζ).
	Thresholds window.Thresholds
}

func (o Options) withDefaults() Options {
	if o.Groups <= 1 {
		o.Groups = DefaultGroups
	}
	if !(o.Decays > 0) {
		o.Decays = DefaultDecays
	}
	if !(o.MaxBend > 0) {
		o.MaxBend = DefaultMaxBend
	}
	if o.Thresholds.MaxRelSigmaFn <= 0 {
		o.Thresholds.MaxRelSigmaFn = DefaultMaxRelSigmaFn
	}
	if o.Thresholds.MaxRelSigmaZeta <= 0 {
		o.Thresholds.MaxRelSigmaZeta = DefaultMaxRelSigmaZeta
	}
	if o.Thresholds.SigmaZetaFloor <= 0 {
		o.Thresholds.SigmaZetaFloor = 1e-9
	}
	return o
}

// Estimate is an ambient record's mode and its certificate.
type Estimate struct {
	// Result is the fit of the signature: its Latents are the signature
	// R(τ) from τ = Δt on, and Cov the jackknife's.
	Result *estimator.Result `json:"-"`
	// Verdict is the certificate of the signature, with the ambient
	// checks (window.CheckBroadband, window.CheckSignatureFit).
	Verdict window.Verdict `json:"verdict"`
	// Record is the record's length in seconds, and Frames its latents.
	Record float64 `json:"record_s"`
	Frames int     `json:"frames"`
	// Lags is how many lags were fitted (from τ = Δt), LagSpan the
	// longest in seconds.
	Lags    int     `json:"lags"`
	LagSpan float64 `json:"lag_span_s"`
	// Groups is how many groups the jackknife deleted.
	Groups int `json:"groups"`
	// Kurtosis is the latents' (Stats.Kurtosis); RMS their standard
	// deviation, in latent units.
	Kurtosis float64 `json:"kurtosis"`
	RMS      float64 `json:"rms"`
	// Bend is ζ fitted over LongDecays decay times less ζ over the
	// fitted lags, BendSigma its jackknife σ: one mode's envelope is one
	// exponential (Bend ≈ 0), two close modes' is not.
	Bend      float64 `json:"bend"`
	BendSigma float64 `json:"bend_sigma"`
	// Peak is the signature's deficit at the mode against the one mode
	// fitted over the lags, over PeakDecays decay times (peakDeficit),
	// PeakSigma its jackknife σ: two close modes beat, so their signature
	// falls below the one-mode extrapolation and their spectral peak is
	// lower and broader than the fitted damping gives. Both 0 when not
	// measured.
	Peak      float64 `json:"peak"`
	PeakSigma float64 `json:"peak_sigma"`
	// ResolvesHz is the record's resolution of close modes, in Hz: the
	// bend test refuses about half the pairs of equal modes that far
	// apart, nearly all twice as far, few closer (NaN when the bend was
	// not measured; see resolvedSpacing). One channel reads a closer pair
	// as one mode at their mean frequency.
	ResolvesHz float64 `json:"resolves_hz"`
	// Modes are the record's modes when its signature holds several
	// spectral lines, each identified and certified on its own
	// (identifyModes); nil otherwise. The one-mode fit above is then of
	// their sum.
	Modes []modes.Mode `json:"-"`
	// Signature is R(τ), τ = 0 … the fitted lags.
	Signature []float64 `json:"signature"`
	// Fitted is the fitted free response at τ = Δt … (as Signature[1:]).
	Fitted []float64 `json:"fitted"`
}

// ErrShort reports a record too short to give a signature and its σ.
var ErrShort = errors.New("ambient: record too short")

// Identify fits one mode to the record's correlation function and
// certifies it. The signature R(τ) is fitted from τ = Δt (R(0) carries
// the measurement noise's variance) over DefaultDecays decay times of the
// mode, found by fitting twice: first over every lag, then over the span
// the first fit's ζω gives. The fit is the paper's, on the signature as
// one free response with an offset (the record's mean is estimated, which
// shifts R by a constant). Its σ is the jackknife's over groups of
// consecutive segments,
//
//	Cov = (G−1)/G · Σ_g (θ_g − θ̄)(θ_g − θ̄)ᵀ,
//
// θ_g the fit with group g deleted, widened for its degrees of freedom
// (jackknifeCov); the same replicates give the
// signature's variance per lag, against which the fit's misfit is read.
func Identify(ctx context.Context, c *Correlation, dt float64, opt Options) (*Estimate, error) {
	opt = opt.withDefaults()
	if !(dt > 0) || math.IsInf(dt, 0) {
		return nil, fmt.Errorf("ambient: time step %v: %w", dt, ErrOptions)
	}
	groups := min(opt.Groups, c.Segments())
	if groups < 2 {
		return nil, fmt.Errorf("%w: %d segments (need ≥ 2 for a σ)", ErrShort, c.Segments())
	}
	sig, st := c.Signature(nil)
	maxLag := c.Lags() - 1
	if st.N < 4*maxLag {
		return nil, fmt.Errorf("%w: %d latents for %d lags", ErrShort, st.N, maxLag)
	}
	est := &Estimate{Frames: c.Frames(), Record: float64(c.Frames()) * dt, Groups: groups,
		Kurtosis: st.Kurtosis, RMS: math.Sqrt(math.Max(st.Variance, 0))}
	lags, fitted := initialSpan(sig, opt.Decays, maxLag), 0
	var r *estimator.Result
	for range 3 {
		var err error
		if r, err = fitSignature(ctx, sig, lags, dt); err != nil {
			return nil, err
		}
		fitted = lags
		// Only ever shorter: a fit that reads the tail's noise as light
		// damping would otherwise lengthen the span, read more of it, and
		// so on.
		if lags = min(spanOf(r, dt, opt.Decays, maxLag), fitted); lags == fitted {
			break
		}
	}
	lags = fitted
	// At least MinPeriods+1 periods, whatever the span's rule says: the
	// envelope of a low, well-damped mode falls fast in periods.
	if floor := periodsFloor(r, dt, maxLag); floor > lags {
		var err error
		if r, err = fitSignature(ctx, sig, floor, dt); err != nil {
			return nil, err
		}
		lags = floor
	}
	est.Lags, est.LagSpan = lags, float64(lags)*dt
	est.Signature = sig[:lags+1]
	if r.Trajectory != nil {
		est.Fitted = r.Trajectory.Fitted[0]
	}

	// The jackknife over groups of consecutive segments.
	nseg := c.Segments()
	// The decay over a longer span: one mode's envelope is one
	// exponential, two close modes' bends (they beat).
	long := min(int(math.Ceil(LongDecays*2/math.Max(r.Gamma1, 1e-12)/dt)), maxLag)
	var rl *estimator.Result
	if r.Gamma1 > 0 && float64(long) >= 1.5*float64(lags) {
		rl, _ = fitSignature(ctx, sig, long, dt)
	}
	peakLags := min(max(int(math.Ceil(PeakDecays*2/math.Max(r.Gamma1, 1e-12)/dt)), lags), maxLag)
	var bends, peaks []float64
	thetas := make([][2]float64, 0, groups)
	for g := range groups {
		sg, _ := c.Signature(func(i int) bool { return i*groups/nseg != g })
		if sg == nil {
			continue
		}
		rg, err := fitSignature(ctx, sg, lags, dt)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		if rl != nil {
			if rlg, err := fitSignature(ctx, sg, long, dt); err == nil {
				bends = append(bends, zetaOf(rlg)-zetaOf(rg))
			}
		}
		if p, ok := peakDeficit(sg, rg, lags, peakLags, dt); ok {
			peaks = append(peaks, p)
		}
		thetas = append(thetas, [2]float64{rg.Gamma1, rg.Gamma0})
	}
	cov, note := jackknifeCov(thetas, groups)
	r.Cov, r.Sigma1, r.Sigma0 = cov, math.Sqrt(cov[0][0]), math.Sqrt(cov[1][1])
	r.Physics = estimator.Derive(r.Gamma1, r.Gamma0, cov)
	r.Uncertainty = &estimator.Uncertainty{Source: "segments-jackknife", Note: note,
		StencilSigma1: math.Sqrt(math.Max(0, r.StencilCov[0][0])), StencilSigma0: math.Sqrt(math.Max(0, r.StencilCov[1][1]))}
	est.Result = r
	est.ResolvesHz = math.NaN()
	if rl != nil && len(bends) >= 2 {
		est.Bend = zetaOf(rl) - zetaOf(r)
		est.BendSigma = jackknifeSigma(bends)
		est.ResolvesHz = resolvedSpacing(ctx, r, dt, lags, long, opt.MaxBend, est.BendSigma)
	}

	if p, ok := peakDeficit(sig, r, lags, peakLags, dt); ok && len(peaks) >= 2 {
		est.Peak, est.PeakSigma = p, jackknifeSigma(peaks)
	}

	if ms, err := identifyModes(ctx, c, sig, dt, groups, searchSpan(r, dt, maxLag), opt); err == nil {
		est.Modes = ms
	} else if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	v := window.Certify(r, opt.Thresholds, nil)
	recordAdvice(&v, r, est.Record, opt.Thresholds)
	v.Hold(window.CheckBroadband, true, broadband(r))
	v.Hold(window.CheckSignatureFit, false, signatureFit(est, r, opt.MaxBend))
	est.Verdict = v
	return est, nil
}

// resolvedSpacing is the spacing Δ, in Hz, at which a pair of equal modes
// at the fitted one's frequency and damping would bend, by the noise-free
// signature, (most+1) of the record's bend σ. Measured (2 Hz, ζ = 2 %,
// 10 min, 8 seeds a spacing), the bend test then refuses about half the
// pairs (4 of 8; at 2Δ 8, at Δ/3 1): a pair's own bend σ is about 1.2×
// a single mode's and its bend 0.86× the noise-free one, so Δ is the
// spacing the record resolves half the time. A pair's beat
// bends the envelope by about k Δ² for Δ within the half-power bandwidth
// (the envelope of e^{−στ}(cos ω₁τ + cos ω₂τ) is e^{−στ}|cos(Δω τ/2)|,
// whose logarithm falls by (Δω τ)²/8 more than one mode's), so k is read
// from the noise-free signature of the pair Δ_ref = ζ f_n apart (half
// the half-power bandwidth), fitted over the same lags as the record's,
//
//	Δ = Δ_ref √((most+1) σ_bend / bend(Δ_ref)).
//
// NaN when the fitted mode does not oscillate or the reference pair does
// not bend.
func resolvedSpacing(ctx context.Context, r *estimator.Result, dt float64, lags, long int, most, sigma float64) float64 {
	if !(r.Gamma0 > r.Gamma1*r.Gamma1/4) || !(r.Gamma1 > 0) || !(sigma > 0) {
		return math.NaN()
	}
	// Half the half-power bandwidth 2ζf_n is ζω_n/2π = decay/2π Hz: the
	// pair's modes lie decay/2 rad/s either side of ω_n.
	wn, decay := math.Sqrt(r.Gamma0), r.Gamma1/2
	ref := decay / (2 * math.Pi)
	sig := make([]float64, long+1)
	for k := range sig {
		t := float64(k) * dt
		for _, w := range [2]float64{wn - decay/2, wn + decay/2} {
			sig[k] += math.Exp(-decay*t) * math.Cos(math.Sqrt(max(w*w-decay*decay, 0))*t)
		}
	}
	short, err := fitSignature(ctx, sig, lags, dt)
	if err != nil {
		return math.NaN()
	}
	longFit, err := fitSignature(ctx, sig, long, dt)
	if err != nil {
		return math.NaN()
	}
	bend := zetaOf(longFit) - zetaOf(short)
	if !(bend > 0) {
		return math.NaN()
	}
	return ref * math.Sqrt((most+1)*sigma/bend)
}

// searchDecays and searchPeriods: the lags whose spectral lines are the
// record's modes (identifyModes) hold searchDecays decay times of the
// one-mode fit, and at least searchPeriods of its periods (a line needs
// 7 bins: window.DecayLines). On a 30-min record of modes at 1 and 2.7 Hz
// (ζ = 1 and 2 %) both lines stood out over 10–30 s of lags, the upper
// one not over 7 s (too few bins) nor over 60 s (the tail's noise).
const (
	searchDecays  = 1.0
	searchPeriods = 10
)

// searchSpan is the lags identifyModes searches for lines.
func searchSpan(r *estimator.Result, dt float64, maxLag int) int {
	n := spanOf(r, dt, searchDecays, maxLag)
	if q := r.Gamma0 - r.Gamma1*r.Gamma1/4; q > 0 {
		n = max(n, int(math.Ceil(searchPeriods*2*math.Pi/math.Sqrt(q)/dt)))
	}
	return min(n, maxLag)
}

// LongDecays is the span, in decay times, over which the signature's
// envelope is tested for one exponential.
const LongDecays = 2.0

// PeakDecays is the span, in decay times, over which the signature is
// compared with the one-mode extrapolation (peakDeficit). Over 12 seeds
// each of single modes (0.6–3 Hz, ζ 0.5–3 %, 10–60 min) the deficit
// was within ±2.3σ (rms 0.8–1.1σ) over one decay time, and similar over
// two and three; pairs of equal modes 0.75 half-power bandwidths apart
// read −1.3σ to −6.6σ over 60 min (20 seeds).
const PeakDecays = 1.0

// peakDeficit is the signature's part along the mode beyond what the one
// mode fitted over lags predicts, over the lags 1 … m:
//
//	P = Σ_{k=1}^{m} e^{−σ τ_k} cos(ω_d τ_k) (R(τ_k) − R̂(τ_k)) Δt / R(Δt),
//
// τ_k = kΔt, σ = γ1/2 and ω_d = √(γ0 − σ²) the fit's, R̂ the free
// response a e^{−στ} cos ω_dτ + b e^{−στ} sin ω_dτ + c fitted to R over
// the fitted lags by least squares and extrapolated. P is the
// lag-windowed spectral density at the mode less the model's, relative to
// the signature's size. One mode's R is its extrapolation (P ≈ 0); two
// modes Δω apart beat, their envelope e^{−στ}|cos(Δω τ/2)| falls by
// (Δωτ)²/8 more, so P < 0. false when the fit does not oscillate or the
// least squares are singular.
func peakDeficit(sig []float64, r *estimator.Result, lags, m int, dt float64) (float64, bool) {
	s := r.Gamma1 / 2
	q := r.Gamma0 - s*s
	if !(q > 0) || !(r.Gamma1 > 0) || lags < 3 || m > len(sig)-1 || !(math.Abs(sig[1]) > 0) {
		return 0, false
	}
	wd := math.Sqrt(q)
	basis := func(k int) (c, sn float64) {
		t := float64(k) * dt
		e := math.Exp(-s * t)
		return e * math.Cos(wd*t), e * math.Sin(wd*t)
	}
	// Normal equations of the 3-term least squares over the fitted lags.
	var a mat.SymDense
	a.ReuseAsSym(3)
	var y mat.VecDense
	y.ReuseAsVec(3)
	for k := 1; k <= lags; k++ {
		c, sn := basis(k)
		x := [3]float64{c, sn, 1}
		for i := range 3 {
			for j := i; j < 3; j++ {
				a.SetSym(i, j, a.At(i, j)+x[i]*x[j])
			}
			y.SetVec(i, y.AtVec(i)+x[i]*sig[k])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(&a) {
		return 0, false
	}
	var coef mat.VecDense
	if err := ch.SolveVecTo(&coef, &y); err != nil {
		return 0, false
	}
	var p float64
	for k := 1; k <= m; k++ {
		c, sn := basis(k)
		model := coef.AtVec(0)*c + coef.AtVec(1)*sn + coef.AtVec(2)
		p += c * (sig[k] - model)
	}
	return p * dt / sig[1], true
}

// jackknifeSigma is the delete-a-group jackknife's σ of the replicates
// x, widened by t_{0.975,k−1}/z_{0.975} for their k−1 degrees of freedom.
func jackknifeSigma(x []float64) float64 {
	k := float64(len(x))
	var m, v float64
	for _, b := range x {
		m += b / k
	}
	for _, b := range x {
		v += (b - m) * (b - m) * (k - 1) / k
	}
	return studentT975(len(x)-1) / 1.959964 * math.Sqrt(v)
}

func zetaOf(r *estimator.Result) float64 {
	if !(r.Gamma0 > 0) {
		return math.NaN()
	}
	return r.Gamma1 / (2 * math.Sqrt(r.Gamma0))
}

// fitSignature fits the ODE to R(τ), τ = Δt … lags·Δt, as one free
// response with an offset, without a bootstrap (the σ is the jackknife's).
func fitSignature(ctx context.Context, sig []float64, lags int, dt float64) (*estimator.Result, error) {
	p := estimator.Preset{Exact: true, Loss: estimator.LossConfig{Offset: estimator.SharedOffset}}
	r, err := estimator.ScreenLatents(ctx, "correlation", [][]float64{sig[1 : lags+1]}, nil, dt, p)
	if err != nil {
		return nil, fmt.Errorf("ambient: fit of the signature over %d lags: %w", lags, err)
	}
	return r, nil
}

// spanOf is the lags that hold decays decay times 1/(ζω) = 2/γ1 of the
// fitted mode, and at least MinPeriods+1 of its periods, within [16,
// maxLag]; maxLag when the fit is not an underdamped decay.
func spanOf(r *estimator.Result, dt, decays float64, maxLag int) int {
	if !(r.Gamma1 > 0) || !(r.Gamma0 > r.Gamma1*r.Gamma1/4) {
		return maxLag
	}
	tau := decays * 2 / r.Gamma1
	period := 2 * math.Pi / math.Sqrt(r.Gamma0-r.Gamma1*r.Gamma1/4)
	tau = math.Max(tau, (MinPeriods+1)*period)
	return min(max(int(math.Ceil(tau/dt)), 16), maxLag)
}

// initialSpan is the lags over which the signature's envelope falls to
// e^{−decays} of R(Δt), read from the signature itself before any fit: a
// first fit over every lag would read the noise of the tail, which does
// not decay, as light damping. The envelope at τ is the largest |R| over
// the period that follows, the period the first zero crossings' spacing.
// maxLag when the signature does not cross zero twice or its envelope
// stays up.
func initialSpan(sig []float64, decays float64, maxLag int) int {
	var cross []int
	for tau := 2; tau <= maxLag && len(cross) < 3; tau++ {
		if (sig[tau-1] > 0) != (sig[tau] > 0) {
			cross = append(cross, tau)
		}
	}
	if len(cross) < 3 {
		return maxLag
	}
	period := cross[2] - cross[0]
	lim := math.Exp(-decays) * math.Abs(sig[1])
	for tau := 1; tau+period <= maxLag; tau++ {
		var peak float64
		for _, v := range sig[tau : tau+period] {
			peak = math.Max(peak, math.Abs(v))
		}
		if peak < lim {
			return max(tau, 16)
		}
	}
	return maxLag
}

// periodsFloor is the lags that hold MinPeriods+1 periods of the fitted
// mode (0 when it does not oscillate), at most maxLag.
func periodsFloor(r *estimator.Result, dt float64, maxLag int) int {
	q := r.Gamma0 - r.Gamma1*r.Gamma1/4
	if !(q > 0) {
		return 0
	}
	return min(int(math.Ceil((MinPeriods+1)*2*math.Pi/math.Sqrt(q)/dt)), maxLag)
}

// jackknifeCov is the delete-a-group jackknife's covariance of the
// replicates θ_g of G groups,
//
//	Cov = (t_{0.975,k−1}/z_{0.975})² (k−1)/k · Σ_g (θ_g − θ̄)(θ_g − θ̄)ᵀ,
//
// k the replicates: a jackknife of k has k−1 degrees of freedom, and its
// σ is widened so that 2σ covers as a normal σ would (1.07 for 20
// groups, 1.15 for 10).
func jackknifeCov(thetas [][2]float64, groups int) (cov [2][2]float64, note string) {
	k := len(thetas)
	if k < 2 {
		inf := math.Inf(1)
		return [2][2]float64{{inf, 0}, {0, inf}}, fmt.Sprintf("%d of %d jackknife replicates had a fit", k, groups)
	}
	var mean [2]float64
	for _, t := range thetas {
		mean[0] += t[0] / float64(k)
		mean[1] += t[1] / float64(k)
	}
	w := studentT975(k-1) / 1.959964
	f := w * w * float64(k-1) / float64(k)
	for _, t := range thetas {
		d := [2]float64{t[0] - mean[0], t[1] - mean[1]}
		for i := range 2 {
			for j := range 2 {
				cov[i][j] += f * d[i] * d[j]
			}
		}
	}
	if k < groups {
		note = fmt.Sprintf("%d of %d jackknife replicates had a fit", k, groups)
	}
	return cov, note
}

// studentT975 is the 97.5 % quantile of Student's t with dof degrees of
// freedom, by the Cornish–Fisher expansion about the normal's (within
// 0.2 % from 3 dof on).
func studentT975(dof int) float64 {
	z := 1.959964
	n := float64(dof)
	z3, z5, z7 := z*z*z, z*z*z*z*z, z*z*z*z*z*z*z
	return z + (z3+z)/(4*n) + (5*z5+16*z3+3*z)/(96*n*n) + (3*z7+19*z5+17*z3-15*z)/(384*n*n*n)
}

// recordAdvice rewrites a refusal for precision in a record's terms: the
// certificate's advice is a free decay's (a longer window, more
// releases), while a record's statistical error falls like 1/√T, so the
// record that would reach both limits is T·max(σ/limit)².
func recordAdvice(v *window.Verdict, r *estimator.Result, record float64, th window.Thresholds) {
	limF, limZ := th.MaxRelSigmaFn*r.FreqN, th.MaxRelSigmaZeta*math.Abs(r.Zeta)
	if !(limF > 0) || !(limZ > 0) {
		return
	}
	k := math.Max(r.SigmaF/limF, r.SigmaZ/limZ)
	why := fmt.Sprintf("imprecise: σ(f_n) is %.3g%% of f_n (limit %.3g%%) and σ(ζ) is %.2g (limit %.2g); the record of %.0f s is too short for the damping (its error falls like 1/√(ζωT)): about %.0f s would reach both limits",
		100*r.SigmaF/r.FreqN, 100*th.MaxRelSigmaFn, r.SigmaZ, limZ, record, record*k*k)
	for i, c := range v.Checks {
		if c.Name != window.CheckPrecision || c.Passed {
			continue
		}
		for j, reason := range v.Reasons {
			if reason == c.Detail {
				v.Reasons[j] = why
			}
		}
		v.Checks[i].Detail = why
	}
}

// broadband is the reason a record does not look like a structure's
// response to broadband forcing ("" when it does): its signature does not
// decay (ζ within 2σ of zero, or below), as a forcing at one frequency
// leaves it. The latents' kurtosis (Estimate.Kurtosis: a Gaussian's 3, a
// sinusoid's 1.5) is reported but does not refuse: a readout that
// saturates on the largest swings lowers a Gaussian's to 1.6–1.7 (1 px rms
// modes read on 64×64 frames), where a 1 px forcing under a 0.2 px mode
// read 1.71–1.78.
func broadband(r *estimator.Result) string {
	if r.Regime == estimator.Undamped || r.Regime == estimator.Unstable {
		return fmt.Sprintf("the excitation is not broadband: the signature does not decay (ζ = %.2g ± %.2g at %.4g Hz), as a forcing at one frequency (a machine at fixed speed) leaves it; that frequency is the forcing's, not the structure's", r.Zeta, r.SigmaZ, r.FreqN)
	}
	return ""
}

// signatureFit is the reason the signature is not one mode's free
// response ("" when it is).
func signatureFit(est *Estimate, r *estimator.Result, most float64) string {
	if r.FreqD > 0 {
		if periods := est.LagSpan * r.FreqD; periods < MinPeriods {
			return fmt.Sprintf("the signature holds %.1f periods of the mode (need %d): the record's lags are too short for this frequency", periods, MinPeriods)
		}
	}
	if est.BendSigma > 0 {
		switch b := est.Bend / est.BendSigma; {
		case b > most:
			return fmt.Sprintf("the signature is not one mode's free response: over %g decay times it decays as ζ = %.4f, over the fitted lags as ζ = %.4f (%.1fσ apart, limit %g): two close modes beating", LongDecays, r.Zeta+est.Bend, r.Zeta, b, most)
		case b < -1.5*most:
			return fmt.Sprintf("the signature is not one mode's free response: over %g decay times it decays as ζ = %.4f, over the fitted lags as ζ = %.4f (%.1fσ apart): a component that does not decay", LongDecays, r.Zeta+est.Bend, r.Zeta, -b)
		}
	}
	if est.PeakSigma > 0 {
		if p := est.Peak / est.PeakSigma; p < -most {
			return fmt.Sprintf("the signature is not one mode's free response: over %g decay time its part at %.4g Hz falls %.1fσ below the one mode fitted over the lags (limit %g): two close modes beating, their peak lower and broader than ζ = %.4f gives", PeakDecays, r.FreqD, -p, most, r.Zeta)
		}
	}
	return ""
}
