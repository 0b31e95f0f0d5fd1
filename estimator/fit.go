package estimator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/physd/physd/estimator/nn"
)

// Options controls one Fit.
type Options struct {
	Preset Preset
	// Seed fixes every random choice (initial weights); the same seed,
	// preset and frames give the same result.
	Seed uint64
	// Progress, when set, is called after every training step.
	Progress func(step, total int, loss float64)
	// Warm, when set, is the encoder to start from (online fine-tuning);
	// it must have been built for the same frame size and preset.
	Warm Encoder
	// WarmGamma, with a low-rank Warm encoder and a closed-form preset, is
	// the previous window's stencil (γ1, γ0): the readout is re-projected
	// onto this window from there before training (see solveReadoutFrom).
	WarmGamma *[2]float64
	// FreezeFeatures, with a low-rank encoder, trains only the layers after
	// the spatial features W (readout, hidden layer, bias) of a warm fit:
	// the features are computed once per fit instead of every step, which
	// is what makes online fine-tuning cheap enough for a small board. A
	// preset with FixedFeatures does so in every fit.
	FreezeFeatures bool
	// TrainOnly leaves the estimate's σ unmeasured (no bootstrap, no
	// readout jackknife; Uncertainty.Source "stencil"): for a fit whose
	// only product is the trained encoder, such as the learner's warm
	// training on the window and its replay, which is estimated on the
	// window alone afterwards. Those measurements were most of a warm
	// window's cost.
	TrainOnly bool
	// Screen, when set, is asked of the fit before its σ is measured
	// whether the measurement is worth it: a fit it refuses keeps the
	// stencil's σ (Uncertainty.Source "stencil"). For the certificate's
	// σ-free tests (level-set coverage): a window they refuse is refused
	// whatever its σ, and the bootstrap and readout jackknife are most of
	// a warm window's cost.
	Screen func(*Result) bool
	// Budget, when positive, caps the wall time of training: the loop stops
	// after the step that crosses it (at least one step runs), so a slow
	// board trains less per window instead of falling behind.
	Budget time.Duration
	// Normalized, with a preset that normalises exposure, is the clips'
	// normalisation made by the caller (NormalizeClips on these very
	// clips), used instead of making another copy: the caller needed the
	// frames the encoder sees before the fit (tracker.FollowAhead), or
	// fits one window more than once (the Learner). Fit still validates
	// the clips it is given, as without it.
	Normalized *Normalized
}

// Result is an estimate of (γ1, γ0) with what it rests on.
type Result struct {
	// Readout names where the latents came from: ReadoutEncoder for
	// Fit's, or what FitLatents was told (an object's tracked position).
	Readout string `json:"readout"`
	// First holds, per latent sequence, the window frame it starts at,
	// for a readout that saw part of a clip (an object followed until it
	// was hidden); nil when every clip's latents start at its first
	// frame.
	First []int `json:"first,omitempty"`
	// Clips holds, per latent sequence, the clip it was read from, for a
	// readout that saw a clip in several runs (an object hidden for a
	// while and found again); nil when sequence m is clip m (ClipOf).
	Clips  []int   `json:"clips,omitempty"`
	Gamma1 float64 `json:"gamma1"`
	Gamma0 float64 `json:"gamma0"`
	// Sigma1, Sigma0 are 1σ uncertainties; Cov is the covariance of
	// (γ1, γ0). With an output-error fit it is measured by a bootstrap of
	// that fit and a jackknife of the readout (see Uncertainty);
	// otherwise it is the stencil's (StencilCov).
	Sigma1 float64       `json:"gamma1_sigma"`
	Sigma0 float64       `json:"gamma0_sigma"`
	Cov    [2][2]float64 `json:"cov"`
	// StencilCov is the stencil's Newey–West covariance, through the
	// exact map with an Exact preset: the reported one without an
	// output-error fit, kept for diagnostics otherwise.
	StencilCov [2][2]float64 `json:"stencil_cov"`
	// Uncertainty says what Cov is made of (nil unless an Exact preset).
	Uncertainty *Uncertainty `json:"uncertainty,omitempty"`
	// Exposure says whether per-frame exposure changes were undone (nil
	// unless the preset asks for it).
	Exposure *Exposure `json:"exposure,omitempty"`
	Physics
	// Stencil is the least-squares fit on the final latents, in the
	// stencil's coefficients, with its residuals.
	Stencil *ODEFit `json:"-"`
	// Trajectory, with an Exact preset, is the output-error fit the
	// estimate comes from: the fitted ODE solution per clip.
	Trajectory *TrajectoryFit `json:"-"`
	// Latents are the encoder's outputs, per clip.
	Latents [][]float64 `json:"-"`
	// Frames are the clips' frames the latents came from (shared, not
	// copied), so a certificate can check that latent revisits are image
	// revisits.
	Frames [][][]float64 `json:"-"`
	Dt     float64       `json:"dt"`
	Loss   float64       `json:"loss"`
	Steps  int           `json:"steps"`
	// Reverted reports that training made the output error worse and the
	// encoder it started from was kept (the steps still count in Steps).
	Reverted bool          `json:"reverted,omitempty"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	Encoder  Encoder       `json:"-"`
	// Keys holds, per clip of the window (indexed as Frames, and as
	// Clips names them), the clip's key frames (Clip.Keys), so that the
	// certificate's impulse test does not read a key frame's
	// re-quantisation as a knock; nil when no clip's are known. A readout
	// fitted from latents alone (FitLatents) has none of its own: the
	// window's are its encoder fit's (window.Choose lends them).
	Keys [][]int `json:"-"`
	// KeysGuessed reports that some clip's Keys were guessed from the
	// pictures (Clip.KeysGuessed).
	KeysGuessed bool `json:"-"`
	// Noise is the rms noise of one latent sample in the latents' units,
	// measured by the readout from its pixels and not from the fit (the
	// small-motion readout's: flow.Reading.Noise); 0 when unknown (the
	// encoder's, a tracked object's). The certificate's test of fit
	// judges the residual beyond it (window.Verdict.TrajectoryMisfit).
	Noise float64 `json:"-"`
}

// ReadoutEncoder is Result.Readout for Fit's latents: the learned
// encoder's.
const ReadoutEncoder = "encoder"

// Fit learns the encoder and (γ1, γ0) from clips that share the physics
// (one clip: Eq. loss-total; several: Eq. loss-total-multi) and returns the
// estimate. Frames must already be preprocessed to the preset's size.
func Fit(ctx context.Context, clips []Clip, opt Options) (*Result, error) {
	start := time.Now()
	p := opt.Preset
	if err := p.Validate(); err != nil {
		return nil, err
	}
	clips, expo, err := prepareClips(clips, p, opt.Normalized)
	if err != nil {
		return nil, err
	}
	f := &fitRun{opt: opt, p: p, clips: clips, expo: expo, dt: clips[0].Dt, frames: stackFrames(clips)}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x70687973))
	if err := f.buildEncoder(ctx, rng); err != nil {
		return nil, err
	}
	from := f.startingPoint()
	coef, steps, err := f.train(ctx, start)
	if err != nil {
		return nil, err
	}
	lat, reverted, err := f.finalLatents(from)
	if err != nil {
		return nil, err
	}
	r, err := f.stencilEstimate(lat, coef, steps, reverted)
	if err != nil {
		return nil, err
	}
	if p.Exact {
		if err := r.fitExact(ctx, f.net, f.frames.all, f.h, f.frames.lens(), p, !opt.TrainOnly, opt.Screen); err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
	} else {
		r.StencilCov = r.Stencil.Cov
	}
	r.finish(start)
	return r, nil
}

// fitRun is one Fit between its steps: the clips as the encoder sees
// them and the encoder with what training moves.
type fitRun struct {
	opt    Options
	p      Preset
	clips  []Clip
	expo   *Exposure
	dt     float64
	frames frameStack
	net    network
	// lr is net when it is the low-rank encoder.
	lr *LowRank
	// params and pass are what training moves and runs: the encoder's,
	// or with frozen features its head's on h (headPass).
	params []*nn.Param
	pass   func([][]float64) ([]float64, func([]float64) error, error)
	// h holds the features while W is the one they were computed with
	// (nil: compute them).
	h []float64
	// freeze trains only the layers after the features (FreezeFeatures,
	// FixedFeatures).
	freeze bool
}

// prepareClips validates the clips and, with a preset that normalises
// exposure, returns them normalised (by the caller's normalisation when
// given) with what was undone.
func prepareClips(clips []Clip, p Preset, norm *Normalized) ([]Clip, *Exposure, error) {
	if err := validateClips(clips); err != nil {
		return nil, nil, fmt.Errorf("fit: %w", err)
	}
	switch {
	case !p.Exposure:
		return clips, nil, nil
	case norm != nil:
		if len(norm.Clips) != len(clips) {
			return nil, nil, fmt.Errorf("fit: %d normalised clips for %d: %w", len(norm.Clips), len(clips), ErrInvalidClip)
		}
		return norm.Clips, &norm.Exposure, nil
	}
	clips, e := NormalizeExposure(clips)
	return clips, &e, nil
}

// frameStack is the clips' frames end to end, which the encoder sees as
// one batch: clip m's are all[bounds[m]:bounds[m+1]].
type frameStack struct {
	all    [][]float64
	bounds []int
}

func stackFrames(clips []Clip) frameStack {
	s := frameStack{bounds: []int{0}}
	for _, c := range clips {
		s.all = append(s.all, c.Frames...)
		s.bounds = append(s.bounds, len(s.all))
	}
	return s
}

// split cuts the batch's latents z into the clips'.
func (s frameStack) split(z []float64) [][]float64 {
	out := make([][]float64, len(s.bounds)-1)
	for m := range out {
		out[m] = z[s.bounds[m]:s.bounds[m+1]]
	}
	return out
}

// lens are the clips' lengths.
func (s frameStack) lens() []int {
	lens := make([]int, len(s.bounds)-1)
	for m := range lens {
		lens[m] = s.bounds[m+1] - s.bounds[m]
	}
	return lens
}

// trainStart is the encoder training starts from, to go back to if
// training makes the output error worse: its weights (nil: nothing to go
// back to), its output error, and its features if known (fitRun.h).
type trainStart struct {
	params   paramSnapshot
	outErr   float64
	features []float64
}

// startingPoint keeps the encoder training starts from. The estimate
// comes from the output-error fit; training minimises the stencil's
// residual, whose second difference can buy a smaller residual with a
// latent further from any ODE solution. The encoder training started
// from is kept if training made the output error worse.
func (f *fitRun) startingPoint() trainStart {
	s := trainStart{outErr: math.Inf(1), features: f.h}
	if f.p.Exact && f.p.Steps > 0 {
		if z, err := f.encode(); err == nil {
			s.params, s.outErr = snapshotParams(f.net), outputError(f.frames.split(z), f.dt, f.p.Loss.Offset)
		}
	}
	return s
}

// finalLatents encodes the frames with the trained encoder, or with the
// one training started from if training made the output error worse
// (reverted).
func (f *fitRun) finalLatents(from trainStart) (lat [][]float64, reverted bool, err error) {
	z, err := f.encode()
	if err != nil {
		return nil, false, fmt.Errorf("fit: final encode: %w", err)
	}
	lat = f.frames.split(z)
	if from.params != nil && !(outputError(lat, f.dt, f.p.Loss.Offset) <= from.outErr) {
		from.params.restore(f.net)
		f.h = from.features
		if z, err = f.encode(); err != nil {
			return nil, false, fmt.Errorf("fit: final encode: %w", err)
		}
		lat, reverted = f.frames.split(z), true
	}
	return lat, reverted, nil
}

// stencilEstimate is the least-squares fit of the stencil on the final
// latents, in closed form: the estimate unless the preset maps it to
// continuous time (fitExact). γ is the fit's when it is solved for (or
// nothing trained), training's otherwise.
func (f *fitRun) stencilEstimate(lat [][]float64, coef Coefficients, steps int, reverted bool) (*Result, error) {
	p := f.p
	s, err := FitODE(lat, f.dt, p.Loss.Offset)
	if err != nil {
		return nil, fmt.Errorf("fit: final latents: %w", err)
	}
	if p.SolveGamma || p.Steps == 0 {
		coef = Coefficients{Gamma1: s.Gamma1, Gamma0: s.Gamma0, G: s.G}
	}
	loss, _, _ := Objective(lat, f.dt, coef, p.Loss)
	r := &Result{Readout: ReadoutEncoder, Gamma1: coef.Gamma1, Gamma0: coef.Gamma0, Cov: s.Cov, Stencil: s, Exposure: f.expo,
		Latents: lat, Dt: f.dt, Loss: loss, Steps: steps, Reverted: reverted, Encoder: f.net}
	for _, c := range f.clips {
		r.Frames = append(r.Frames, c.Frames)
	}
	r.Keys, r.KeysGuessed = ClipKeys(f.clips)
	return r, nil
}

// fitExact maps the stencil's coefficients to continuous time (Exact) and
// reads the estimate from the output-error fit started there: it weighs
// pixel noise once, not through a second difference. Its σ is measured,
// not taken from a formula: neither its own sandwich (it sees neither the
// readout chosen on these frames nor the noise the fit absorbs; on the
// paper's cells it covered the truth within 2σ in 54–68 % of fits) nor
// the stencil's (tens of times too large on video). net, all and lens
// are the encoder, its frames and the clips' lengths, for the readout's
// jackknife, and h the encoder's features of all if known (nil: computed
// there); a nil net has no readout to measure. measure false, or a
// screen that refuses the fit, leaves σ unmeasured.
func (r *Result) fitExact(ctx context.Context, net network, all [][]float64, h []float64, lens []int, p Preset, measure bool, screen func(*Result) bool) error {
	f := r.Stencil
	g1, g0, err := Exact(r.Gamma1, r.Gamma0, r.Dt)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoContinuousModel, err)
	}
	cov, err := exactCov(r.Gamma1, r.Gamma0, r.Dt, f.Cov)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoContinuousModel, err)
	}
	r.Gamma1, r.Gamma0, r.Cov, r.StencilCov = g1, g0, cov, cov
	tf, err := FitTrajectoryRuns(r.Latents, r.runs(), r.Dt, g1, g0, p.Loss.Offset)
	if err != nil || !(tf.Gamma0 > 0) {
		r.Uncertainty = &Uncertainty{Source: "stencil", Note: "no output-error fit",
			StencilSigma1: math.Sqrt(math.Max(0, cov[0][0])), StencilSigma0: math.Sqrt(math.Max(0, cov[1][1]))}
		return nil
	}
	r.Gamma1, r.Gamma0, r.Trajectory = tf.Gamma1, tf.Gamma0, tf
	if measure && screen != nil {
		r.finish(time.Now()) // the screen sees the fit's physics
		measure = screen(r)
	}
	if !measure {
		r.Uncertainty = &Uncertainty{Source: "stencil", Note: "screened: σ not measured",
			StencilSigma1: math.Sqrt(math.Max(0, cov[0][0])), StencilSigma0: math.Sqrt(math.Max(0, cov[1][1]))}
		return nil
	}
	if err := measureUncertainty(ctx, r, net, all, h, lens, p, f); err != nil {
		return fmt.Errorf("uncertainty: %w", err)
	}
	return nil
}

// finish sets the reported σ and physics from r.Cov and the wall time.
func (r *Result) finish(start time.Time) {
	r.Sigma1 = math.Sqrt(math.Max(0, r.Cov[0][0]))
	r.Sigma0 = math.Sqrt(math.Max(0, r.Cov[1][1]))
	r.Physics = Derive(r.Gamma1, r.Gamma0, r.Cov)
	r.Elapsed = time.Since(start)
}

// outputError is the relative residual of the output-error fit of the
// latents, started from the stencil's exact coefficients: the criterion
// the estimate is read from. It is +Inf when either fit fails.
func outputError(lat [][]float64, dt float64, off Offset) float64 {
	f, err := fitODECoef(lat, dt, off)
	if err != nil {
		return math.Inf(1)
	}
	g1, g0, err := Exact(f.Gamma1, f.Gamma0, dt)
	if err != nil {
		return math.Inf(1)
	}
	tf, err := FitTrajectory(lat, dt, g1, g0, off)
	if err != nil {
		return math.Inf(1)
	}
	return tf.RelResidual()
}

// ErrDiverged reports a training run whose loss became NaN or infinite.
var ErrDiverged = errors.New("training diverged")

// ErrNoContinuousModel reports latents whose AR(2) recursion no
// continuous-time second-order system produces.
var ErrNoContinuousModel = errors.New("no continuous-time model")

// ClipOf is the clip latent sequence m was read from (Clips).
func (r *Result) ClipOf(m int) int {
	if r.Clips == nil {
		return m
	}
	return r.Clips[m]
}

// ClipCount is how many clips the latent sequences were read from: the
// number of trajectories they observe, which runs of one clip do not
// multiply.
func (r *Result) ClipCount() int {
	if r.Clips == nil {
		return len(r.Latents)
	}
	seen := map[int]bool{}
	for _, c := range r.Clips {
		seen[c] = true
	}
	return len(seen)
}
