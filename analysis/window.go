package analysis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/flow"
	"github.com/physd/physd/motion"
	"github.com/physd/physd/tracker"
	"github.com/physd/physd/window"
)

// Fitter fits the encoder to a window's clips; accept says whether an
// estimate it considers is certified (a learner keeps its training only
// for those). estimator.Learner.Window is one.
type Fitter func(ctx context.Context, clips []estimator.Clip, accept func(*estimator.Result) bool) (*estimator.Outcome, error)

// Options are what the callers of Window choose.
type Options struct {
	// Preset is the training recipe; Thresholds the certificate's.
	Preset     estimator.Preset
	Thresholds window.Thresholds
	// Motion says how the camera's own motion is measured.
	Motion Motion
	// Fit fits the window (a learner's warm window); nil fits a cold
	// encoder with Seed, Budget and Progress (estimator.Fit).
	Fit      Fitter
	Seed     uint64
	Budget   time.Duration
	Progress func(step, total int, loss float64)
	// EncoderOnly certifies the encoder's readout alone, weighing no
	// followed objects: the loss and τ ablations, which measure the
	// encoder's training, and a lone event fitted for its diagnostic.
	EncoderOnly bool
	// Stream places the window in its camera's stream for the tracker's
	// caches (zero for a window on its own).
	Stream tracker.Stream
	// Concurrent runs the steps side by side on a board's cores for a
	// single window (a one-shot command): the cold fit starts while the
	// camera's motion is measured, and is redone on the moved frames
	// only when the motion is removed; the objects are followed while
	// the encoder is fitted. The result is the same. It needs the cold
	// fit (Fit nil): a learner's training cannot be undone.
	Concurrent bool
	// SourcePx is how many of the source's pixels a frame pixel spans
	// (a region resized to the preset's frame: its width over the
	// frame's), so that amplitudes are told in the camera's pixels; 0
	// means 1.
	SourcePx float64
	// Modes also separates the modes of a window of one clip on its
	// displacement readouts (Report.Modes): a structure ringing in
	// several, each certified on its own.
	Modes bool
	// Log receives the steps' warnings; nil discards.
	Log *slog.Logger
}

// Timings is the wall time a window's steps took. Train is the fit's
// time less its estimate fits (FitTime) and the certificates judged
// meanwhile.
type Timings struct {
	Motion, Train, Fit, Certify, Weigh time.Duration
}

// Report is one window's analysis.
type Report struct {
	// Result is the reported readout's estimate and Verdict its
	// certificate (window.Choose's pick when objects were weighed).
	Result  *estimator.Result
	Verdict window.Verdict
	// Encoder is the encoder's fit and what training it took.
	Encoder *estimator.Outcome
	// Camera is the camera's measured motion (nil: not measured).
	Camera *motion.Track
	// Amplitude is how far the region moves and the noise floor, in
	// source pixels (flow.Amplitude); nil when it could not be told: a
	// window of several clips, or motion too large for the small-motion
	// readout with no object followed.
	Amplitude *flow.Amplitude
	// Peak is the highest frequency, in Hz, at which a readout of the
	// window (the encoder's, the small-motion reading, each followed
	// object) holds a spectral line (window.TopPeak); 0: none.
	Peak float64
	// Modes are the window's modes when Options.Modes asked for them and
	// a readout holds two spectral lines or more; nil otherwise.
	Modes *Modes
	Times Timings
}

// ErrConcurrentLearner reports Options.Concurrent with a learner's Fit.
var ErrConcurrentLearner = errors.New("analysis: a concurrent analysis needs the cold fit")

// Window analyses one window: the camera's motion, measured and moved out
// of clips (in place), the fit, each estimate certified once, and the
// encoder's readout weighed against the followed objects. The clips must
// share one frame size and rate.
func Window(ctx context.Context, clips []estimator.Clip, opt Options) (*Report, error) {
	if opt.Concurrent && opt.Fit != nil {
		return nil, ErrConcurrentLearner
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	a := &run{opt: opt, judged: map[*estimator.Result]window.Verdict{}}
	if opt.Concurrent {
		return a.concurrent(ctx, clips)
	}
	t0 := time.Now()
	track, err := opt.Motion.Measure(ctx, clips, opt.Log)
	a.rep.Times.Motion = time.Since(t0)
	if err != nil {
		return nil, err
	}
	a.rep.Camera = track
	if err := a.fit(ctx, clips, nil); err != nil {
		return nil, err
	}
	a.weigh(ctx, clips, nil)
	return &a.rep, nil
}

// run is one window's analysis in progress.
type run struct {
	opt Options
	rep Report
	// judged holds each estimate's verdict: the fit and the weighing
	// ask about the same ones.
	judged map[*estimator.Result]window.Verdict
}

// certify is an estimate's verdict, judged once.
func (a *run) certify(r *estimator.Result) window.Verdict {
	v, ok := a.judged[r]
	if !ok {
		t0 := time.Now()
		v = window.Certify(r, a.opt.Thresholds, a.rep.Camera)
		a.rep.Times.Certify += time.Since(t0)
		a.judged[r] = v
	}
	return v
}

// fit fits the encoder (norm: the clips exposure normalised already) and
// splits its time into training, estimate fits and certificates.
func (a *run) fit(ctx context.Context, clips []estimator.Clip, norm *estimator.Normalized) error {
	t0 := time.Now()
	var o *estimator.Outcome
	var err error
	if a.opt.Fit != nil {
		o, err = a.opt.Fit(ctx, clips, func(r *estimator.Result) bool { return a.certify(r).Certified })
	} else {
		o, err = a.cold(ctx, clips, norm)
	}
	spent := time.Since(t0)
	if err != nil {
		return err
	}
	a.rep.Encoder = o
	a.rep.Times.Fit = o.FitTime
	a.rep.Times.Train = max(spent-o.FitTime-a.rep.Times.Certify, 0)
	return nil
}

// cold fits a fresh encoder (estimator.Fit).
func (a *run) cold(ctx context.Context, clips []estimator.Clip, norm *estimator.Normalized) (*estimator.Outcome, error) {
	t0 := time.Now()
	r, err := estimator.Fit(ctx, clips, estimator.Options{Preset: a.opt.Preset, Seed: a.opt.Seed, Budget: a.opt.Budget,
		Progress: a.opt.Progress, Normalized: norm})
	if err != nil {
		return nil, err
	}
	return &estimator.Outcome{Result: r, Cold: true, TrainSteps: r.Steps, TrainTime: time.Since(t0)}, nil
}

// weigh certifies the encoder's readout alone (EncoderOnly) or weighs it
// against the objects followed through its frames (ahead: followed
// already).
func (a *run) weigh(ctx context.Context, clips []estimator.Clip, ahead *tracker.Ahead) {
	enc := a.rep.Encoder.Result
	if a.opt.EncoderOnly {
		a.rep.Result, a.rep.Verdict = enc, a.certify(enc)
		a.rep.Peak = topPeak(enc)
		return
	}
	t0 := time.Now()
	if ahead == nil {
		ahead = tracker.FollowStream(ctx, clips, enc, a.opt.Stream)
	}
	// The small-motion readout reads the scene's dominant change on the
	// linear model; where an object swings many times its range through
	// the whole window (a cart, a pendulum's bob), that change is far past
	// it and the reading would be refused anyway (flow.ErrLarge) after
	// costing a fifth of a real camera's analysis.
	var small *estimator.Result
	var reading *flow.Reading
	if sw := ahead.Swing(largeCover); sw < largeSwing {
		small, reading = a.smallMotion(ctx, clips, enc)
	} else {
		a.opt.Log.Debug("no small-motion readout: an object swings far past its linear model", "swing_px", sw)
	}
	var extra []*estimator.Result
	if small != nil {
		extra = append(extra, small)
	}
	var tracked []*estimator.Result
	a.rep.Result, a.rep.Verdict, tracked = ahead.Weigh(ctx, clips, enc, a.opt.Preset, a.opt.Thresholds, a.rep.Camera, a.opt.Log, extra...)
	a.rep.Amplitude = amplitudeOf(a.rep.Result, small, reading, tracked, a.opt.SourcePx)
	a.rep.Peak = topPeak(append(append([]*estimator.Result{enc}, extra...), tracked...)...)
	if a.rep.Amplitude != nil && enc != nil {
		for _, f := range enc.Frames {
			a.rep.Amplitude.HeldShare = max(a.rep.Amplitude.HeldShare, flow.HeldShare(f))
		}
	}
	// The small-motion readout's certificate holds its motion to the
	// noise floor; another readout's refusal says why when the motion is
	// below it. A certified encoder's readout of what is not a
	// displacement (a gray level, a size) is not held to it.
	if amp := a.rep.Amplitude; amp != nil && (!a.rep.Verdict.Certified || a.rep.Result != nil && a.rep.Result.Readout == flow.ReadoutFlow) {
		a.rep.Verdict.Resolve(amp.Px, amp.NoisePx, amp.HeldShare)
	}
	a.pairCheck()
	if a.opt.Modes {
		a.rep.Modes = a.findModes(ctx, clips, seenOf(clips, enc), reading, ahead)
	}
	a.rep.Times.Weigh = time.Since(t0)
}

// topPeak is window.TopPeak over the latents of every readout rs.
func topPeak(rs ...*estimator.Result) float64 {
	var series [][]float64
	dt := 0.0
	for _, r := range rs {
		if r == nil {
			continue
		}
		series = append(series, r.Latents...)
		dt = r.Dt
	}
	return window.TopPeak(series, dt)
}

// largeSwing and largeCover: an object followed through largeCover of the
// window whose rms displacement along its axis is largeSwing frame px or
// more (a swing of about 8.5 px, over five times the binned reading's
// 1.5 px range) moves too far for the small-motion readout.
const (
	largeSwing = 8 * flow.MaxPeak
	largeCover = 0.8
)

// smallMotion reads the window's displacement from its intensity
// gradients, on the frames the encoder saw (exposure normalised), and
// fits it as a readout when the motion is small enough and above the
// noise (flow.Candidate). The reading is nil when the frames could not be
// read at all.
func (a *run) smallMotion(ctx context.Context, clips []estimator.Clip, enc *estimator.Result) (*estimator.Result, *flow.Reading) {
	seen := seenOf(clips, enc)
	if seen == nil {
		return nil, nil
	}
	th := a.opt.Thresholds
	screen := func(r *estimator.Result) bool { return window.Screen(r, th, nil, window.CheckCoverage) }
	r, rd, err := flow.Candidate(ctx, seen, a.opt.Preset, screen)
	if err != nil {
		a.opt.Log.Debug("no small-motion readout", "err", err)
	}
	return r, rd
}

// seenOf is the clips as the encoder saw them (enc's frames), nil without
// them.
func seenOf(clips []estimator.Clip, enc *estimator.Result) []estimator.Clip {
	if enc == nil || len(enc.Frames) != len(clips) {
		return nil
	}
	seen := make([]estimator.Clip, len(clips))
	for m, c := range clips {
		seen[m] = estimator.Clip{W: c.W, H: c.H, Frames: enc.Frames[m], Dt: enc.Dt}
	}
	return seen
}

// concurrent is Window with its steps side by side (Options.Concurrent).
// Most windows show no camera motion, and then the fit started on the
// frames as read is the answer; when the motion is removed, that fit is
// stopped and redone on the moved frames.
func (a *run) concurrent(ctx context.Context, clips []estimator.Clip) (*Report, error) {
	type fitted struct {
		run   *run
		ahead *tracker.Ahead
		err   error
	}
	start := func(ctx context.Context) fitted {
		seen, norm := clips, (*estimator.Normalized)(nil)
		if a.opt.Preset.Exposure {
			if n, err := estimator.NormalizeClips(clips); err == nil {
				seen, norm = n.Clips, n
			}
		}
		f := fitted{run: &run{opt: a.opt, judged: map[*estimator.Result]window.Verdict{}}}
		if !a.opt.EncoderOnly {
			f.ahead = tracker.FollowAhead(ctx, seen)
		}
		f.err = f.run.fit(ctx, clips, norm)
		return f
	}
	fitCtx, stopFit := context.WithCancel(ctx)
	defer stopFit()
	early := make(chan fitted, 1)
	go func() { early <- start(fitCtx) }()
	t0 := time.Now()
	track, err := a.opt.Motion.measure(ctx, clips, a.opt.Log)
	a.rep.Times.Motion = time.Since(t0)
	if err != nil {
		stopFit()
		<-early
		return nil, err
	}
	var f fitted
	if track != nil && track.Applied {
		stopFit()
		<-early
		if err := track.StabilizeClips(clips); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCameraMotion, err)
		}
		redoCtx, stopRedo := context.WithCancel(ctx)
		defer stopRedo()
		f = start(redoCtx)
	} else {
		f = <-early
	}
	if f.err != nil {
		return nil, f.err
	}
	// The fit's own record, with this run's motion.
	f.run.rep.Camera, f.run.rep.Times.Motion = track, a.rep.Times.Motion
	f.run.weigh(ctx, clips, f.ahead)
	return &f.run.rep, nil
}
