package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/physd/physd/analysis"
	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/internal/par"
	"github.com/physd/physd/motion"
	"github.com/physd/physd/tracker"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
)

// learning is a line's learning stage: its learner, and each job's
// window analysis and certificate.
type learning struct {
	log    *slog.Logger
	preset estimator.Preset
	th     window.Thresholds
	est    config.Estimator
	dir    string // where the encoder's checkpoint is kept
	// roi and reference are the camera's region and still reference
	// region, to measure its motion on (motionOf).
	roi, reference config.ROI
	gate           gate
	motionCache    *motion.Cache
	trackCache     *tracker.Cache
	work           *stageWork
	dash           *camDash
	rec            *record // the encoder restored
}

// run estimates each job of in and certifies it, and hands the outcome to
// the reporting stage on out, after the windows skipped before it.
func (c *learning) run(ctx context.Context, in <-chan batch, out chan<- outcome) {
	est := c.est
	th := c.th
	learner, err := estimator.NewLearner(estimator.LearnerOptions{Preset: c.preset, Steps: est.StepsPerWindow,
		Budget: est.MaxWindowTime, Replay: est.Replay, Seed: uint64(est.Seed), Lazy: true,
		Screen: func(r *estimator.Result) bool { return window.Screen(r, th, nil) }})
	if err != nil {
		c.log.Error("camera learner", "err", err)
		return
	}
	c.restore(learner)
	// A window's loops run on as many goroutines as estimator.workers
	// says (0: one per core); see config.Estimator.Workers.
	wctx := ctx
	if est.Workers > 0 {
		wctx = par.WithWorkers(ctx, est.Workers)
	}
	lastSave := time.Now()
	defer c.save(learner)
	for b := range in {
		if ctx.Err() != nil {
			return
		}
		for _, s := range b.skipped {
			out <- outcome{job: s, skipped: true}
		}
		j := b.next
		if !c.gate.acquire(ctx) {
			return
		}
		o, ok := c.estimate(wctx, learner, th, j)
		c.gate.release()
		if !ok {
			return
		}
		out <- o
		if time.Since(lastSave) >= est.CheckpointEvery && learner.Ready() {
			c.save(learner)
			lastSave = time.Now()
		}
	}
}

// estimate analyses one job — the camera's motion, the learner's fit (a
// lone event: a cold fit of its own), the certificate, the tracked
// objects weighed — and charges each step's time; ok is false when the
// camera was stopped meanwhile. An ambient record is identified from its
// correlation function instead (estimateAmbient).
func (c *learning) estimate(ctx context.Context, learner *estimator.Learner, th window.Thresholds, j job) (outcome, bool) {
	if j.ambient != nil {
		return c.estimateAmbient(ctx, learner, th, j)
	}
	opt := analysis.Options{Preset: c.preset, Thresholds: th, Motion: c.motionOf(j), Log: c.log.With("window_start", j.start, "window_end", j.end),
		Stream: tracker.Stream{Cache: c.trackCache, First: j.first, Hop: j.hop}, SourcePx: c.sourcePx(j), Modes: !j.single}
	if j.single {
		// A lone event never certifies by itself (Thm. 4.5 needs three);
		// it is fitted with a cold encoder of its own, without touching the
		// camera's learner, for its diagnostic only.
		opt.Seed, opt.Budget, opt.EncoderOnly = 1, c.est.MaxWindowTime, true
	} else {
		opt.Fit = func(ctx context.Context, clips []estimator.Clip, accept func(*estimator.Result) bool) (*estimator.Outcome, error) {
			c.dash.setTraining(true)
			defer c.dash.setTraining(false)
			return learner.Window(ctx, clips, accept)
		}
	}
	an, err := analysis.Window(ctx, j.clips, opt)
	if err != nil {
		if ctx.Err() != nil {
			return outcome{}, false
		}
		return outcome{job: j, err: err}, true
	}
	t := an.Times
	c.work.addDuration(stageMotion, t.Motion)
	c.work.addDuration(stageFit, t.Fit)
	c.work.addDuration(stageCertify, t.Certify)
	c.work.addDuration(stageTrain, t.Train)
	c.work.addDuration(stageWeigh, t.Weigh)
	o := an.Encoder
	if o.ColdTried {
		c.work.coldStarts.Add(1)
	}
	if o.ColdHeld {
		c.work.coldHeld.Add(1)
	}
	if o.FitOnly || o.TrainHeld {
		c.work.untrained.Add(1)
	}
	if o.Diverged {
		c.log.Warn("training diverged; encoder rolled back to the last accepted window", "window_start", j.start, "window_end", j.end)
	}
	info := wire.EncoderInfo{Version: learner.Version(), TotalSteps: learner.TotalSteps(), Steps: o.TrainSteps, Cold: o.Cold,
		TrainMS: float64(o.TrainTime.Microseconds()) / 1000}
	return outcome{job: j, res: an.Result, verdict: an.Verdict, info: info, train: o.TrainTime, amp: an.Amplitude, peak: an.Peak, modes: an.Modes}, true
}

// motionOf is how the job's camera motion is measured: on the camera's
// reference region when it has one, else from the frames themselves; a
// window that cannot be measured is analysed without it (BestEffort).
func (c *learning) motionOf(j job) analysis.Motion {
	m := analysis.Motion{BestEffort: true, Cache: c.motionCache}
	ref := c.reference
	if ref.IsZero() || len(j.refs) != len(j.clips) || len(j.clips) == 0 {
		return m
	}
	roiW, roiH := c.roi.W, c.roi.H
	if c.roi.IsZero() {
		roiW, roiH = j.srcW, j.srcH
	}
	m.Reference = &analysis.Reference{Name: fmt.Sprintf("%d,%d,%d,%d", ref.X, ref.Y, ref.W, ref.H), Patches: j.refs, W: j.refW, H: j.refH,
		Scale: motion.ReferenceScale(ref.W, ref.H, j.refW, j.refH, roiW, roiH, j.clips[0].W, j.clips[0].H)}
	return m
}

// sourcePx is how many source pixels one of the job's frame pixels spans:
// the region's width (the whole frame's without one) over the frame's.
func (c *learning) sourcePx(j job) float64 {
	w := c.roi.W
	if c.roi.IsZero() {
		w = j.srcW
	}
	var fw int
	switch {
	case len(j.clips) > 0:
		fw = j.clips[0].W
	case j.ambient != nil:
		fw = j.ambient.frameW
	}
	if fw == 0 || w == 0 {
		return 0
	}
	return float64(w) / float64(fw)
}

func thresholds(c config.Certify) window.Thresholds {
	return window.Thresholds{MinPsi: c.MinPsi, MaxRelResidual: c.MaxRelResidual, MaxRevisit: c.MaxRevisit,
		Coverage:      window.CoverageOptions{MinWidth: c.MinWidth},
		MaxRelSigmaFn: c.MaxRelSigmaFn, MaxRelSigmaZeta: c.MaxRelSigmaZeta, SigmaZetaFloor: c.SigmaZetaFloor}
}

func (c *learning) checkpointPath() string { return filepath.Join(c.dir, "encoder.ckpt") }

// restore loads the encoder checkpoint; a corrupt one is set aside with a
// warning and the camera starts clean.
func (c *learning) restore(l *estimator.Learner) {
	if tmp := removeTemps(c.dir); len(tmp) > 0 {
		c.log.Warn("removed unfinished state writes from before a crash", "dir", c.dir, "files", tmp)
	}
	path := c.checkpointPath()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err == nil {
		err = l.Load(bytes.NewReader(b))
	}
	switch {
	case err == nil:
		c.log.Info("encoder restored", "checkpoint", path, "version", l.Version(), "steps", l.TotalSteps())
		c.rec.setEncoder(wire.EncoderInfo{Version: l.Version(), TotalSteps: l.TotalSteps()})
	case errors.Is(err, estimator.ErrCheckpointMismatch):
		c.log.Info("encoder checkpoint is for another configuration; starting cold", "checkpoint", path, "err", err)
	case errors.Is(err, estimator.ErrCheckpointCorrupt):
		to, rerr := setAside(path)
		c.log.Warn("encoder checkpoint is corrupt; set aside, starting cold", "checkpoint", path, "moved_to", to, "err", err, "rename_err", rerr)
	default:
		c.log.Warn("encoder checkpoint unreadable; starting cold", "checkpoint", path, "err", err)
	}
}

func (c *learning) save(l *estimator.Learner) {
	if !l.Ready() {
		return
	}
	err := writeAtomic(c.checkpointPath(), func(f *os.File) error { return l.Save(f) })
	if err != nil {
		c.log.Error("encoder checkpoint not written", "err", err)
		return
	}
	c.log.Debug("encoder checkpointed", "path", c.checkpointPath(), "version", l.Version(), "steps", l.TotalSteps())
}
