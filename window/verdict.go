package window

import (
	"fmt"
	"math"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/motion"
)

// Status is the outcome of certification.
type Status string

// Statuses a window can get.
const (
	// Certified: coverage holds, the design is well conditioned and the
	// fit is good, so (γ1, γ0) is the unique answer the video supports,
	// and its σ is within the precision limits, so it is worth acting on.
	Certified Status = "certified"
	// UndampedDiscrete: an undamped-looking window whose discrete
	// regression is well conditioned and fits, but with no slope coverage
	// (Prop. on sampled undamped trajectories): the sampled regression has
	// a unique target (0, γ0^Δ), yet the continuous-time problem is not
	// identified from this single clip. Reported, not certified.
	UndampedDiscrete Status = "undamped-uncertified"
	// NotCertified: one or more checks failed; see Reasons.
	NotCertified Status = "not-certified"
)

// Thresholds are the certification limits.
type Thresholds struct {
	Coverage CoverageOptions `json:"coverage"`
	// MinPsi is the least scale-normalised ψ_min accepted; default 0.1.
	MinPsi float64 `json:"min_psi"`
	// MaxRevisit is the largest Revisit score accepted (frames at one
	// latent level must look alike); default 2.
	MaxRevisit float64 `json:"max_revisit"`
	// MaxRelResidual is the largest RMS residual relative to RMS z''
	// accepted; default 0.5 (the ODE explains at least 75 % of the
	// acceleration's variance). The second difference amplifies pixel noise
	// by √6/Δt², so a clean fit through a lossy codec already reads 0.2–0.5.
	MaxRelResidual float64 `json:"max_rel_residual"`
	// MaxTrajectoryResidual is the largest RMS distance of the latent from
	// its fitted ODE solution, relative to the latent's RMS, accepted when
	// the estimate has an output-error fit; default 0.1 (the solution
	// explains at least 99 % of the latent's variance). It replaces
	// MaxRelResidual as the test of fit: it judges whether the latent is
	// an ODE trajectory, not how noisy its second difference is.
	MaxTrajectoryResidual float64 `json:"max_trajectory_residual"`
	// MaxStructured is the largest structured residual accepted: the
	// relative residual times its lag-one autocorrelation (when positive).
	// Pixel and codec noise leave a residual that alternates in sign (the
	// stencil differences white noise: autocorrelation near −2/3), while a
	// latent the ODE does not describe — a distorted encoder, the wrong
	// physics — leaves a smooth one. Default 0.1.
	MaxStructured float64 `json:"max_structured"`
	// MaxRelSigmaFn is the largest σ(f_n)/f_n accepted; default 0.01.
	MaxRelSigmaFn float64 `json:"max_rel_sigma_fn"`
	// MaxRelSigmaZeta and SigmaZetaFloor bound σ(ζ): it is accepted up to
	// max(MaxRelSigmaZeta·|ζ|, SigmaZetaFloor); defaults 0.3 and 0.005
	// (the floor: a lightly damped structure's ζ of 0.01 is worth
	// publishing at ± 0.005, where 30 % of it would ask for ± 0.003).
	MaxRelSigmaZeta float64 `json:"max_rel_sigma_zeta"`
	SigmaZetaFloor  float64 `json:"sigma_zeta_floor"`
}

// Resolved is t with every unset limit at its default: the limits
// Certify applies.
func (t Thresholds) Resolved() Thresholds { return t.withDefaults() }

func (t Thresholds) withDefaults() Thresholds {
	if t.MinPsi <= 0 {
		t.MinPsi = 0.1
	}
	if t.MaxRevisit <= 0 {
		t.MaxRevisit = 2
	}
	if t.MaxRelResidual <= 0 {
		t.MaxRelResidual = 0.5
	}
	if t.MaxStructured <= 0 {
		t.MaxStructured = 0.1
	}
	if t.MaxTrajectoryResidual <= 0 {
		t.MaxTrajectoryResidual = 0.1
	}
	if t.MaxRelSigmaFn <= 0 {
		t.MaxRelSigmaFn = defaultMaxRelSigmaFn
	}
	if t.MaxRelSigmaZeta <= 0 {
		t.MaxRelSigmaZeta = defaultMaxRelSigmaZeta
	}
	if t.SigmaZetaFloor <= 0 {
		t.SigmaZetaFloor = defaultSigmaZetaFloor
	}
	return t
}

// Verdict is a window's certificate, or the reasons it has none.
type Verdict struct {
	Status    Status `json:"verdict"`
	Certified bool   `json:"certified"`
	// Identified reports whether the paper's conditions hold — coverage,
	// conditioning, fit, a physical system: the answer is unique. A
	// window is Certified when it is Identified and Precision holds.
	Identified bool `json:"identified"`
	// Precision is the estimate's σ against the precision limits.
	Precision Precision `json:"precision"`
	Reasons   []string  `json:"reasons,omitempty"`
	// Checks are the certificate's tests in the order they were made,
	// each passed or failed (Check); Reasons are the failed ones' details.
	Checks       []Check      `json:"checks,omitempty"`
	Coverage     Coverage     `json:"coverage"`
	Conditioning Conditioning `json:"conditioning"`
	RelResidual  float64      `json:"rel_residual"`
	// ResidualLag1 is the residual's lag-one autocorrelation.
	ResidualLag1 float64 `json:"residual_lag1"`
	// TrajectoryResidual is the latent's RMS distance from the fitted ODE
	// solution over its RMS (NaN without an output-error fit).
	TrajectoryResidual float64 `json:"trajectory_residual"`
	// TrajectoryMisfit is TrajectoryResidual less the latent's noise (see
	// misfit), for a readout that measures its own noise
	// (estimator.Result.Noise; NaN for others); TrajectoryResidualLag1 is
	// the lag-one autocorrelation of that residual (NaN without an
	// output-error fit).
	TrajectoryMisfit       float64 `json:"trajectory_misfit"`
	TrajectoryResidualLag1 float64 `json:"trajectory_residual_lag1"`
	Revisit                Revisit `json:"revisit"`
	// Impulse is the test for a velocity jump inside the window.
	Impulse Impulse `json:"impulse"`
	// WindowNeeded, for an underdamped window refused for coverage, is
	// how long a window at this noise would need to be to resolve its
	// damping (WindowFor), in seconds; 0 otherwise or when none would.
	WindowNeeded float64 `json:"window_needed_s,omitempty"`
	// Camera is the test of the camera's own motion (Certify's cam); nil
	// when it was not measured.
	Camera *CameraCheck `json:"camera,omitempty"`
	// Readout names the latent certified (estimator.Result.Readout);
	// Alternatives are the other candidates Choose weighed.
	Readout      string        `json:"readout,omitempty"`
	Alternatives []Alternative `json:"alternatives,omitempty"`
}

// Certify decides whether an estimate is the unique answer its window
// supports: level-set slope coverage on the learned latents, a
// well-conditioned design, a good fit and a physical, stable system.
//
// cam is the camera's own motion over the window, as package motion
// measured it (and, when cam.Applied, removed it from the frames before
// the fit): a window whose latent follows the camera's motion is refused,
// since its estimate would describe the camera, not the object (see
// testCamera). A nil cam skips that test.
func Certify(r *estimator.Result, th Thresholds, cam *motion.Track) (v Verdict) {
	th = th.withDefaults()
	if r != nil {
		v.Readout = r.Readout
	}
	if r == nil || r.Stencil == nil {
		v.Status, v.Reasons = NotCertified, []string{"no estimate"}
		v.Checks = []Check{{Name: CheckEstimate, Detail: v.Reasons[0]}}
		return v
	}
	tr, err := NewTrace(r)
	if err != nil {
		v.Status, v.Reasons = NotCertified, []string{err.Error()}
		v.Checks = []Check{{Name: CheckEstimate, Detail: v.Reasons[0]}}
		return v
	}
	copt := th.Coverage
	copt.ClipOffsets = r.Stencil.ClipG != nil
	v.Coverage = CoverageOf(tr, copt)
	centres := make([]float64, len(r.Latents))
	if r.Stencil.Gamma0 != 0 {
		for m := range centres {
			centres[m] = -r.Stencil.OffsetOf(m) / r.Stencil.Gamma0
		}
	}
	v.Conditioning = Condition(r.Latents, r.Dt, centres, v.Coverage)
	v.RelResidual = r.Stencil.RelResidual()
	v.ResidualLag1 = lag1(r.Stencil.Resid)
	v.TrajectoryResidual, v.TrajectoryMisfit, v.TrajectoryResidualLag1 = math.NaN(), math.NaN(), math.NaN()
	if r.Trajectory != nil {
		v.TrajectoryResidual = r.Trajectory.RelResidual()
		v.TrajectoryResidualLag1 = lag1(r.Trajectory.Resid)
		v.TrajectoryMisfit = misfit(r.Trajectory, r.Noise)
	}
	v.Revisit = RevisitOf(tr, r.Frames, v.Coverage, 24)

	var cs checks
	// The paper's conditions and the latent's, the frames' and the fit's
	// tests read no σ (the trace's slope noise is the latent's own).
	coverage := ""
	if !v.Coverage.Holds {
		switch {
		case v.Coverage.Covered > 0:
			coverage = fmt.Sprintf("no level-set slope coverage: the covered interval holds %.1f%% of the samples and %.1f%% of the slope energy (need %.1f%% of each)", 100*v.Coverage.Width, 100*v.Coverage.SlopeShare, 100*v.Coverage.MinWidth)
		case v.Coverage.ClipOffsets:
			coverage = fmt.Sprintf("no level-set slope coverage with per-clip offsets: at most %d distinct sums of within-clip slope pairs at any level (need 2)", v.Coverage.MaxPairSums)
		default:
			coverage = fmt.Sprintf("no level-set slope coverage: at most %d distinct slopes at any level (need 3)", v.Coverage.MaxDistinct)
		}
		var advice string
		v.WindowNeeded, advice = windowAdvice(r, tr, v.Coverage.Levels)
		coverage += advice
	}
	cs.add(CheckCoverage, false, coverage)
	v.Impulse = testImpulse(r.Trajectory, tr, keyFramesOf(r))
	impulse := when(v.Impulse.Ratio > maxImpulse, func() string {
		return fmt.Sprintf("an impulse at %.2f s: the latent's velocity jumps by %.1f× the fitted solution's largest acceleration × Δt (> %g), a knock, a push or a new release; a window across it holds two free responses", v.Impulse.At, v.Impulse.Ratio, maxImpulse)
	})
	if note := v.Impulse.keyNote(); impulse == "" && note != "" {
		// Passed, with what was set aside said in its detail.
		cs.list = append(cs.list, Check{Name: CheckImpulse, Passed: true, Detail: note})
	} else {
		if note != "" {
			impulse += "; " + note
		}
		cs.add(CheckImpulse, false, impulse)
	}
	cs.add(CheckEnergyGrowth, false, when(v.Coverage.Holds && v.Coverage.Growing > 0, func() string {
		return fmt.Sprintf("energy grows: at %d of the covered levels' slope sequences |z'| rises with time (%d fall); a damped structure's never does", v.Coverage.Growing, v.Coverage.Decaying)
	}))
	cs.add(CheckRevisit, false, when(v.Coverage.Holds && v.Revisit.Levels > 0 && !(v.Revisit.Score <= th.MaxRevisit), func() string {
		return fmt.Sprintf("latent revisits are not scene revisits: frames at one latent level differ %.1f× more than motion explains (> %.1f); the encoder folds the state", v.Revisit.Score, th.MaxRevisit)
	}))
	cs.add(CheckConditioning, false, when(v.Conditioning.PsiMin < th.MinPsi, func() string {
		return fmt.Sprintf("ill-conditioned design: normalised ψ_min %.3g < %.3g", v.Conditioning.PsiMin, th.MinPsi)
	}))
	fit := ""
	switch {
	case r.Trajectory != nil:
		noiseFit := v.TrajectoryMisfit <= th.MaxTrajectoryResidual && v.TrajectoryResidualLag1 <= maxNoiseLag1
		if !(v.TrajectoryResidual <= th.MaxTrajectoryResidual) && !noiseFit {
			fit = fmt.Sprintf("poor fit: the latent is %.3g of its size from the fitted ODE solution (> %.3g)", v.TrajectoryResidual, th.MaxTrajectoryResidual)
			if !math.IsNaN(v.TrajectoryMisfit) {
				fit += fmt.Sprintf(", %.3g beyond its measured noise, the residual's lag-one autocorrelation %.2f (limit %g)", v.TrajectoryMisfit, v.TrajectoryResidualLag1, maxNoiseLag1)
			}
		}
	case !(v.RelResidual <= th.MaxRelResidual):
		fit = fmt.Sprintf("poor fit: residual %.3g of the signal > %.3g", v.RelResidual, th.MaxRelResidual)
	}
	cs.add(CheckFit, false, fit)
	s := v.RelResidual * math.Max(0, v.ResidualLag1)
	cs.add(CheckStructuredResidual, false, when(v.RelResidual <= th.MaxRelResidual && !(s <= th.MaxStructured), func() string {
		return fmt.Sprintf("structured residual: %.3g of the signal with lag-one autocorrelation %.2f (%.3g > %.3g); the ODE does not describe the latent", v.RelResidual, v.ResidualLag1, s, th.MaxStructured)
	}))
	// One clip covers a level with three distinct slopes only because its
	// amplitude decays between visits; when its damping cannot be told
	// from zero, the distinct slopes are not the physics' (noise, or a
	// readout that bends a sinusoid), and the window holds what an
	// undamped clip holds: no unique continuous-time answer. This reads σ.
	undampedOne := v.Coverage.Holds && r.ClipCount() == 1 && r.Physics.Regime == estimator.Undamped
	cs.add(CheckUndampedClip, true, when(undampedOne, func() string {
		return fmt.Sprintf("one clip's slopes are distinct only if its amplitude decays, yet its damping ζ = %.2g ± %.2g is not told from zero", r.Physics.Zeta, r.Physics.SigmaZ)
	}))
	cs.add(CheckDarkFrames, false, when(r.Exposure != nil && r.Exposure.DarkFrames > 0, func() string {
		return fmt.Sprintf("the view went dark in %d frame(s) (a lens cap, a dropped feed, a cut to black): the object was not seen there, and its latent there is no measurement", r.Exposure.DarkFrames)
	}))
	var camReason string
	v.Camera, camReason = testCamera(r, cam)
	cs.add(CheckCameraMotion, true, camReason)
	restoring := r.Gamma0 > 0 && !math.IsNaN(r.Gamma1)
	cs.add(CheckRestoring, false, when(!restoring, func() string {
		return fmt.Sprintf("not a restoring system: γ0 = %.4g", r.Gamma0)
	}))
	cs.add(CheckStable, true, when(restoring && r.Physics.Regime == estimator.Unstable, func() string {
		return fmt.Sprintf("negative damping: γ1 = %.4g ± %.2g", r.Gamma1, r.Sigma1)
	}))
	v.Identified = cs.passed()
	v.Precision = testPrecision(r, th)
	failed := cs.failed()
	switch {
	case v.Identified && v.Precision.Holds:
		v.Status, v.Certified = Certified, true
	case len(failed) == 1 && (failed[0].Name == CheckCoverage || failed[0].Name == CheckUndampedClip) && r.Physics.Regime == estimator.Undamped:
		// Its own verdict whatever its σ: no σ makes one undamped clip
		// identify the continuous-time answer.
		v.Status = UndampedDiscrete
		cs.note("undamped-looking window: the sampled regression is well posed, the continuous-time answer is not unique from one clip")
	default:
		v.Status = NotCertified
	}
	cs.add(CheckPrecision, true, when(!v.Precision.Holds, v.Precision.reason))
	omit := ""
	if v.Status == UndampedDiscrete {
		omit = CheckPrecision // no σ would make it unique
	}
	v.Checks, v.Reasons = cs.list, cs.reasons(omit)
	return v
}

// Screen reports whether r can still be certified whatever its σ: it
// passes every test of Certify that needs no σ — level-set coverage,
// energy growth, impulse, revisits, conditioning, the fit's residuals,
// dark frames, a restoring γ0. An estimator's Options.Screen: a window
// refused anyway does not pay for measuring σ (the block bootstrap and
// the readout jackknife, most of a fit's cost). Its verdict is refused
// with or without σ; only its σ-dependent reasons (the regime's, the
// camera's) may read otherwise.
//
// only, when given, names the checks (Check* constants) the screen asks;
// the others' failures are ignored, and a missing estimate is always
// refused. The tracker screens its paths on CheckCoverage alone: their
// refused fits are reported as alternatives, with the reasons σ gives.
func Screen(r *estimator.Result, th Thresholds, cam *motion.Track, only ...string) bool {
	return !sigmaFreeFailure(Certify(r, th, cam).Checks, only)
}

// windowAdvice says, for one underdamped clip refused for coverage, how
// long a window at this noise would need to be (WindowFor): the seconds
// (0 when none or no advice) and the text to append to the reason.
func windowAdvice(r *estimator.Result, tr Trace, levels int) (float64, string) {
	s := tr.PeakSlope()
	if r.ClipCount() != 1 || !(s > 0) || !(r.Physics.Zeta > 0) || !(r.Physics.Zeta < 1) || !(r.Gamma0 > 0) {
		return 0, ""
	}
	rel := tr.Noise.Slope / s
	need := WindowFor(r.Physics.Zeta, math.Sqrt(r.Gamma0), rel, levels)
	// Runs of one clip (an object hidden for a while) span from the
	// first's start to the last's end.
	have := clipSpan(r)
	switch {
	case math.IsInf(need, 0):
		return 0, fmt.Sprintf("; at this noise (slope noise %.2g%% of the peak slope) no window resolves damping ζ = %.3g", 100*rel, r.Physics.Zeta)
	case need > have:
		return need, fmt.Sprintf("; at this noise (slope noise %.2g%% of the peak slope) damping ζ = %.3g needs a window of about %.3g s (%.3g periods); this one is %.3g s",
			100*rel, r.Physics.Zeta, need, need*math.Sqrt(r.Gamma0)/(2*math.Pi), have)
	}
	return need, ""
}

// maxNoiseLag1 is the largest lag-one autocorrelation of an output-error
// residual that is read as the latent's measurement noise: a reading's
// noise is nearly independent from frame to frame (a codec's P-frames
// carry some of it over), while a model the latent does not follow — the
// wrong frequency, a drift, a second mode — leaves a residual smooth over
// many frames.
const maxNoiseLag1 = 0.5

// misfit is the part of an output-error fit's residual that the latent's
// noise does not explain, relative to the part of the latent it does not
// explain either,
//
//	m = √( max(RSS − N σ², 0) / max(Signal − N σ², 0) ),
//
// N the samples fitted: the noise adds N σ² to both the residual's and
// the latent's sum of squares, so m is the test of fit on the motion
// itself, and a faint motion read through noise has a residual the size
// of the noise and no misfit. σ is the larger of the readout's own
// measure (measured, 0: unknown, and then m is NaN) and the residual's
// rough part, read from its second differences as if white,
//
//	σ²_rough = Σ (Δ²e)² / (6 (N − 2)):
//
// a model the latent does not follow leaves a residual smooth over many
// frames, whose second differences are small, so only what varies from
// frame to frame is credited to noise. A codec's noise is correlated over
// a frame or two, which lowers σ_rough: the test errs towards refusing.
func misfit(t *estimator.TrajectoryFit, measured float64) float64 {
	if !(measured > 0) || math.IsInf(measured, 0) {
		return math.NaN()
	}
	var n, m int
	var rough float64
	for _, e := range t.Resid {
		n += len(e)
		for i := 2; i < len(e); i++ {
			d := e[i] - 2*e[i-1] + e[i-2]
			rough += d * d
			m++
		}
	}
	s2 := measured * measured
	if m > 0 {
		s2 = max(s2, rough/(6*float64(m)))
	}
	noise := float64(n) * s2
	sig := t.Signal - noise
	if !(sig > 0) {
		return math.Inf(1)
	}
	return math.Sqrt(max(t.RSS-noise, 0) / sig)
}

// lag1 is the lag-one autocorrelation of the residuals, pooled over clips.
func lag1(res [][]float64) float64 {
	var num, den float64
	for _, r := range res {
		var m float64
		for _, v := range r {
			m += v
		}
		m /= float64(max(1, len(r)))
		for i, v := range r {
			den += (v - m) * (v - m)
			if i > 0 {
				num += (v - m) * (r[i-1] - m)
			}
		}
	}
	if !(den > 0) {
		return 0
	}
	return num / den
}
