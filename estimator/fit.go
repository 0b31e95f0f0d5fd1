package estimator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/physd/physd/estimator/nn"
	"github.com/physd/physd/internal/par"
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
	if err := validateClips(clips); err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	var expo *Exposure
	switch {
	case p.Exposure && opt.Normalized != nil:
		n := opt.Normalized
		if len(n.Clips) != len(clips) {
			return nil, fmt.Errorf("fit: %d normalised clips for %d: %w", len(n.Clips), len(clips), ErrInvalidClip)
		}
		clips, expo = n.Clips, &n.Exposure
	case p.Exposure:
		var e Exposure
		clips, e = NormalizeExposure(clips)
		expo = &e
	}
	dt := clips[0].Dt
	var all [][]float64
	bounds := []int{0}
	for _, c := range clips {
		all = append(all, c.Frames...)
		bounds = append(bounds, len(all))
	}
	split := func(z []float64) [][]float64 {
		out := make([][]float64, len(clips))
		for m := range clips {
			out[m] = z[bounds[m]:bounds[m+1]]
		}
		return out
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x70687973))
	net, err := buildNetwork(rng, p, clips[0].W, clips[0].H, opt.Warm)
	if err != nil {
		return nil, err
	}
	params := net.Params()
	pass := net.pass
	// h holds the features while W is the one they were computed with
	// (nil: compute them); h0 those W started training from.
	var h, h0 []float64
	lr, _ := net.(*LowRank)
	if lr != nil {
		lr.workers = par.Workers(ctx)
	}
	encode := func() ([]float64, error) {
		if h != nil {
			z, _ := lr.head(h, len(all))
			return z, nil
		}
		return net.Encode(all)
	}
	freeze := false
	if lr != nil {
		freeze = p.Steps > 0 && (opt.Warm != nil && opt.FreezeFeatures || p.FixedFeatures)
		reproject := opt.Warm != nil && opt.WarmGamma != nil && p.ClosedForm && p.Loss.Reg == VarFloor
		if opt.Warm == nil {
			if h, err = initLowRank(rng, lr, clips, all, bounds, p); err != nil {
				return nil, fmt.Errorf("fit: %w", err)
			}
		}
		if h == nil && (reproject || freeze) {
			if h, err = lr.Features(all); err != nil {
				return nil, fmt.Errorf("fit: %w", err)
			}
		}
		if reproject {
			if err := reprojectLowRank(lr, clips, h, bounds, p, *opt.WarmGamma); err != nil {
				return nil, fmt.Errorf("fit: %w", err)
			}
		}
		if freeze {
			params = lr.headParams()
			pass = func([][]float64) ([]float64, func([]float64) error, error) {
				z, ps := lr.head(h, len(all))
				return z, func(dz []float64) error { lr.backward(ps, dz); return nil }, nil
			}
		}
		h0 = h
	}

	// The estimate comes from the output-error fit; training minimises the
	// stencil's residual, whose second difference can buy a smaller
	// residual with a latent further from any ODE solution. The encoder
	// training started from is kept if training made the output error
	// worse.
	var before paramSnapshot
	beforeErr := math.Inf(1)
	if p.Exact && p.Steps > 0 {
		if z, err := encode(); err == nil {
			before, beforeErr = snapshotParams(net), outputError(split(z), dt, p.Loss.Offset)
		}
	}
	coef := Coefficients{Gamma1: p.InitGamma[0], Gamma0: p.InitGamma[1]}
	adam := nn.NewAdam(p.LREncoder)
	gAdam := newScalarAdam(p.LRGamma, 3)
	var loss float64
	if !freeze && p.Steps > 0 {
		h = nil // W trains
	}
	steps := 0
	for step := range p.Steps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("fit: interrupted at step %d of %d: %w", step, p.Steps, err)
		}
		z, back, err := pass(all)
		if err != nil {
			return nil, fmt.Errorf("fit: step %d: %w", step, err)
		}
		lat := split(z)
		if err := checkFinite(lat); err != nil {
			return nil, fmt.Errorf("fit: step %d: %w: %w", step, ErrDiverged, err)
		}
		if p.SolveGamma {
			f, err := fitODECoef(lat, dt, p.Loss.Offset)
			if errors.Is(err, ErrNotFinite) {
				return nil, fmt.Errorf("fit: step %d: %w: %w", step, ErrDiverged, err)
			}
			if err != nil {
				return nil, fmt.Errorf("fit: step %d: %w", step, err)
			}
			coef = Coefficients{Gamma1: f.Gamma1, Gamma0: f.Gamma0, G: f.G}
		}
		var dz [][]float64
		var dc Coefficients
		loss, dz, dc = Objective(lat, dt, coef, p.Loss)
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return nil, fmt.Errorf("fit: step %d: loss is %g: %w", step, loss, ErrDiverged)
		}
		nn.ZeroGrad(params)
		flat := make([]float64, 0, len(all))
		for _, d := range dz {
			flat = append(flat, d...)
		}
		if err := back(flat); err != nil {
			return nil, fmt.Errorf("fit: step %d: backward: %w", step, err)
		}
		adam.Step(params)
		if !p.SolveGamma {
			v := []float64{coef.Gamma1, coef.Gamma0, coef.G}
			gAdam.step(v, []float64{dc.Gamma1, dc.Gamma0, dc.G})
			coef = Coefficients{Gamma1: v[0], Gamma0: v[1], G: v[2]}
			if p.Loss.Offset != SharedOffset {
				coef.G = 0
			}
		}
		steps++
		if opt.Progress != nil {
			opt.Progress(step+1, p.Steps, loss)
		}
		if opt.Budget > 0 && time.Since(start) > opt.Budget {
			break
		}
	}

	z, err := encode()
	if err != nil {
		return nil, fmt.Errorf("fit: final encode: %w", err)
	}
	lat := split(z)
	reverted := false
	if before != nil && !(outputError(lat, dt, p.Loss.Offset) <= beforeErr) {
		before.restore(net)
		h = h0
		if z, err = encode(); err != nil {
			return nil, fmt.Errorf("fit: final encode: %w", err)
		}
		lat, reverted = split(z), true
	}
	f, err := FitODE(lat, dt, p.Loss.Offset)
	if err != nil {
		return nil, fmt.Errorf("fit: final latents: %w", err)
	}
	if p.SolveGamma || p.Steps == 0 {
		coef = Coefficients{Gamma1: f.Gamma1, Gamma0: f.Gamma0, G: f.G}
	}
	loss, _, _ = Objective(lat, dt, coef, p.Loss)
	r := &Result{Readout: ReadoutEncoder, Gamma1: coef.Gamma1, Gamma0: coef.Gamma0, Cov: f.Cov, Stencil: f, Exposure: expo,
		Latents: lat, Dt: dt, Loss: loss, Steps: steps, Reverted: reverted, Encoder: net}
	for _, c := range clips {
		r.Frames = append(r.Frames, c.Frames)
	}
	if p.Exact {
		lens := make([]int, len(clips))
		for m := range clips {
			lens[m] = bounds[m+1] - bounds[m]
		}
		if err := r.fitExact(ctx, net, all, h, lens, p, !opt.TrainOnly, opt.Screen); err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
	} else {
		r.StencilCov = f.Cov
	}
	r.finish(start)
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

func buildNetwork(rng *rand.Rand, p Preset, w, h int, warm Encoder) (network, error) {
	if warm != nil {
		n, ok := warm.(network)
		if !ok {
			return nil, fmt.Errorf("fit: warm encoder %T is not trainable", warm)
		}
		return n, nil
	}
	switch p.Encoder {
	case "lowrank":
		return NewLowRank(rng, w*h, p.Features, p.Hidden), nil
	case "cnn":
		return newCNN(rng, p, w, h), nil
	}
	return nil, fmt.Errorf("fit: unknown encoder %q", p.Encoder)
}

// initLowRank sets W to a smooth spatial basis and u to the closed-form
// readout, which solves the variance-floor problem with the floor held as
// a constraint. Without ClosedForm (or with another regulariser, whose
// problem it does not solve) u starts random and training alone sets it.
// It returns the features of W for all, n×K (nil without the closed form).
func initLowRank(rng *rand.Rand, e *LowRank, clips []Clip, all [][]float64, bounds []int, p Preset) ([]float64, error) {
	k, err := e.spatialBasis(all, clips[0].W, clips[0].H)
	if err != nil {
		return nil, err
	}
	if !p.ClosedForm || p.Loss.Reg != VarFloor {
		u := data(e.U)
		for a := range k {
			u[a] = p.Loss.Tau * rng.NormFloat64() / math.Sqrt(float64(k))
		}
		return nil, nil
	}
	h, err := e.Features(all)
	if err != nil {
		return nil, err
	}
	feats := make([][]float64, len(clips))
	for m := range clips {
		feats[m] = compact(h[bounds[m]*e.K:bounds[m+1]*e.K], e.K, k)
	}
	u, err := solveReadout(feats, k, clips[0].Dt, p.Loss.Tau, p.Loss.Offset, e.workers)
	if err != nil {
		return nil, err
	}
	copy(data(e.U), u)
	// Centre the latent: the intercept absorbs the equilibrium.
	var mean float64
	for i := range len(all) {
		for a := range k {
			mean += u[a] * h[i*e.K+a]
		}
	}
	data(e.B)[0] = -mean / float64(len(all))
	return h, nil
}

// reprojectLowRank keeps W (the features) and re-solves the linear
// readout on this window's frames from the previous window's γ. The
// hidden layer's output weights restart at zero so that the latent is the
// readout just solved.
// h holds the window's features, n×K.
func reprojectLowRank(e *LowRank, clips []Clip, h []float64, bounds []int, p Preset, g [2]float64) error {
	feats := make([][]float64, len(clips))
	for m := range clips {
		feats[m] = h[bounds[m]*e.K : bounds[m+1]*e.K]
	}
	u, err := solveReadoutFrom(feats, e.K, clips[0].Dt, p.Loss.Tau, p.Loss.Offset, g[0], g[1])
	if err != nil {
		return err
	}
	copy(data(e.U), u)
	clear(data(e.V))
	n := len(h) / e.K
	var mean float64
	for i := range n {
		for a := range e.K {
			mean += u[a] * h[i*e.K+a]
		}
	}
	data(e.B)[0] = -mean / float64(n)
	return nil
}

// compact keeps the first k of K columns of an n×K matrix.
func compact(h []float64, K, k int) []float64 {
	n := len(h) / K
	out := make([]float64, n*k)
	for i := range n {
		copy(out[i*k:(i+1)*k], h[i*K:i*K+k])
	}
	return out
}

// scalarAdam is Adam for a handful of scalars (the ODE coefficients).
type scalarAdam struct {
	lr   float64
	m, v []float64
	t    int
}

func newScalarAdam(lr float64, n int) *scalarAdam {
	return &scalarAdam{lr: lr, m: make([]float64, n), v: make([]float64, n)}
}

func (a *scalarAdam) step(x, g []float64) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	a.t++
	c1 := 1 - math.Pow(b1, float64(a.t))
	c2 := 1 - math.Pow(b2, float64(a.t))
	for i := range x {
		a.m[i] = b1*a.m[i] + (1-b1)*g[i]
		a.v[i] = b2*a.v[i] + (1-b2)*g[i]*g[i]
		x[i] -= a.lr * (a.m[i] / c1) / (math.Sqrt(a.v[i]/c2) + eps)
	}
}

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
