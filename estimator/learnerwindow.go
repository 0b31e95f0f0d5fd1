package estimator

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// learnerWindow is one Learner.Window call as its attempts go: the
// window's clips and verdict, its motion energy, and the outcome so far.
type learnerWindow struct {
	clips  []Clip
	accept func(*Result) bool
	start  time.Time
	energy float64
	out    *Outcome
	// norm is the clips' exposure normalisation once made (normDone).
	norm     *Normalized
	normDone bool
}

// normalized is the normalisation the window's own fits (as it stands,
// after training, a cold start) share instead of each making its own
// copy of the frames; training, on the window with its replay,
// normalises those together as before. Clips Fit would refuse are left
// to Fit, which says why (nil).
func (w *learnerWindow) normalized(p Preset) *Normalized {
	if !w.normDone && p.Exposure {
		w.norm, _ = NormalizeClips(w.clips)
	}
	w.normDone = true
	return w.norm
}

// fitAsItStands is a lazy learner's first attempt (warmPolicy): the warm
// encoder's estimate without training. Accepted, the window needs no
// training; refused, it is trained as usual unless the scene's back-off
// holds the training too (TrainHeld), and then this estimate is the
// one reported if nothing better comes.
func (l *Learner) fitAsItStands(ctx context.Context, w *learnerWindow) (done bool, err error) {
	if l.enc == nil || !l.opt.Lazy {
		return false, nil
	}
	try, held := l.warm.fitOnly(w.energy)
	if !try {
		return false, nil
	}
	r, err := l.fitWindow(ctx, w)
	if err != nil && ctx.Err() != nil {
		return false, err
	}
	if err == nil && w.accept(r) {
		w.out.FitOnly = true
		l.keepWarm(w, r, false)
		return true, nil
	}
	if held {
		w.out.TrainHeld = true
		if err == nil {
			w.out.Result = r
		}
	}
	return false, nil
}

// trainWarm trains the warm encoder on the window with its replay, then
// estimates the window on its own frames. Warm training moves the
// encoder in place; a window that diverges or is not accepted leaves it
// as the last accepted one did (RolledBack), and the refused estimate
// is the one reported if nothing better comes.
func (l *Learner) trainWarm(ctx context.Context, w *learnerWindow) (done bool, err error) {
	if l.enc == nil || w.out.TrainHeld {
		return false, nil
	}
	good := snapshotParams(l.enc)
	r, err := l.trainOnWindow(ctx, w)
	if err != nil && ctx.Err() != nil {
		return false, err
	}
	if err == nil && w.accept(r) {
		l.keepWarm(w, r, true)
		return true, nil
	}
	good.restore(l.enc)
	w.out.RolledBack = true
	w.out.Diverged = errors.Is(err, ErrDiverged)
	if err == nil {
		w.out.Result = r
	}
	l.warm.refusedTrained(w.energy)
	return false, nil
}

// trainOnWindow runs the window's warm training (LearnerOptions.Steps
// on the window and its replay, the readout re-projected from the last
// accepted γ, the features frozen, σ unmeasured) and then the estimate
// on the window's own frames (fitWindow).
func (l *Learner) trainOnWindow(ctx context.Context, w *learnerWindow) (*Result, error) {
	p := l.opt.Preset
	p.Steps = l.opt.Steps
	train := append(append([]Clip(nil), w.clips...), l.replayLike(w.clips[0])...)
	r, err := Fit(ctx, train, Options{Preset: p, Warm: l.enc, WarmGamma: l.gamma, Budget: l.opt.Budget, FreezeFeatures: true, TrainOnly: true})
	if err != nil {
		return nil, err
	}
	w.out.TrainSteps += r.Steps
	l.steps += int64(r.Steps)
	return l.fitWindow(ctx, w)
}

// fitWindow is the warm encoder's estimate on the window's own frames,
// as the encoder stands (σ included unless screened out); its time is
// the window's FitTime.
func (l *Learner) fitWindow(ctx context.Context, w *learnerWindow) (*Result, error) {
	p := l.opt.Preset
	p.Steps = 0
	t0 := time.Now()
	r, err := Fit(ctx, w.clips, Options{Preset: p, Warm: l.enc, Screen: l.opt.Screen, Normalized: w.normalized(l.opt.Preset)})
	w.out.FitTime += time.Since(t0)
	return r, err
}

// keepWarm ends a window whose warm estimate r was accepted, trained on
// the window or not.
func (l *Learner) keepWarm(w *learnerWindow, r *Result, trained bool) {
	w.out.Result = r
	w.out.TrainTime = time.Since(w.start)
	l.remember(r, w.clips)
	l.cold.reset()
	l.warm.accepted(trained)
}

// holdCold ends a window whose warm estimate was refused without a cold
// start when the scene keeps refusing them (coldBackoff): the refused
// estimate is reported (ColdHeld).
func (l *Learner) holdCold(_ context.Context, w *learnerWindow) (done bool, err error) {
	if l.enc == nil || w.out.Result == nil || !l.cold.hold(w.energy) {
		return false, nil
	}
	w.out.ColdHeld = true
	w.out.TrainTime = time.Since(w.start)
	return true, nil
}

// startCold is the last attempt: a fresh encoder fitted on the window,
// with what is left of the budget (at least a quarter of it). It
// replaces the encoder if accepted (or if there is none); refused, the
// warm estimate, if any, is the one reported. It always ends the window.
func (l *Learner) startCold(ctx context.Context, w *learnerWindow) (done bool, err error) {
	budget := l.opt.Budget
	if budget > 0 {
		budget = max(budget-time.Since(w.start), budget/4)
	}
	w.out.ColdTried = true
	r, err := Fit(ctx, w.clips, Options{Preset: l.opt.Preset, Seed: l.opt.Seed + uint64(l.version), Budget: budget, Screen: l.opt.Screen, Normalized: w.normalized(l.opt.Preset)})
	w.out.TrainTime = time.Since(w.start)
	if err != nil {
		if w.out.Result != nil && ctx.Err() == nil {
			return true, nil // keep the warm estimate; the cold start failed too
		}
		return true, err
	}
	w.out.TrainSteps += r.Steps
	// The first encoder is kept whatever its verdict (there is nothing to
	// fall back on) and starts no backoff.
	kept := l.enc == nil || w.accept(r)
	l.cold.tried(w.energy, kept)
	if !kept {
		if w.out.Result == nil {
			w.out.Result = r
		}
		return true, nil
	}
	return true, l.adopt(w, r)
}

// adopt makes the cold start's encoder the learner's: a new lineage,
// with no replay and a scene policy anew.
func (l *Learner) adopt(w *learnerWindow, r *Result) error {
	n, ok := r.Encoder.(network)
	if !ok {
		return fmt.Errorf("learner: encoder %T is not trainable", r.Encoder)
	}
	if lr, ok := n.(*LowRank); ok {
		lr.EnableFeatureCache()
	}
	l.enc, l.w, l.h = n, w.clips[0].W, w.clips[0].H
	l.warm.reset()
	l.version++
	l.steps = int64(r.Steps)
	l.replay = nil
	w.out.Result, w.out.Cold = r, true
	l.remember(r, w.clips)
	return nil
}
