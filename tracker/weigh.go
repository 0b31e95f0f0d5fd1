package tracker

import (
	"context"
	"errors"
	"log/slog"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/motion"
	"github.com/physd/physd/window"
)

// Weigh certifies the encoder's fit enc of clips together with the fits
// of the objects followed through the same frames (Candidates on enc's
// frames, exposure normalised as the encoder saw them) and returns the
// fit to report and its verdict (window.Choose). A tracked fit reported
// keeps enc's training record (steps, exposure, encoder) and adds its
// own time. s places the window in its camera's stream (Stream; zero
// for a window on its own). extra are other readouts of the same frames
// (the small-motion readout's, package flow) weighed alongside. tracked
// are the followed objects' fits, for what they tell besides the choice
// (how far the object moved, in frame pixels). Why nothing could be
// followed is logged at debug level.
func Weigh(ctx context.Context, clips []estimator.Clip, enc *estimator.Result, p estimator.Preset, th window.Thresholds, cam *motion.Track, s Stream, log *slog.Logger, extra ...*estimator.Result) (r *estimator.Result, v window.Verdict, tracked []*estimator.Result) {
	return FollowStream(ctx, clips, enc, s).Weigh(ctx, clips, enc, p, th, cam, log, extra...)
}

// Ahead is the objects of a window followed while its encoder is fitted
// (FollowAhead): following needs only the frames, and the fit leaves one
// core idle much of the time (the spatial basis's eigendecomposition,
// the training steps of the readout's head).
type Ahead struct {
	done  chan struct{}
	paths []Path
	err   error
}

// FollowAhead starts following the objects of clips — their frames
// exposure normalised as the encoder will see them
// (estimator.NormalizeClips, passed to the fit as
// estimator.Options.Normalized) — on a goroutine of its own, for
// Ahead.Weigh once the encoder's fit is done. Cancel ctx to stop it.
func FollowAhead(ctx context.Context, clips []estimator.Clip) *Ahead {
	a := &Ahead{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.paths, a.err = Follow(ctx, clips, Options{})
	}()
	return a
}

// FollowStream follows the objects of the frames the encoder saw (enc's,
// which must be clips' exposure-normalised frames), keeping the matches
// in s's cache for the camera's next windows as Weigh does, and returns
// them as an Ahead already done: the caller can look at what moves
// (Swing) before it weighs. Weighing it gives Weigh's result, to the bit.
func FollowStream(ctx context.Context, clips []estimator.Clip, enc *estimator.Result, s Stream) *Ahead {
	a := &Ahead{done: make(chan struct{})}
	defer close(a.done)
	seen := seenFrames(clips, enc)
	if seen == nil {
		a.err = errors.New("tracker: no encoder frames to follow objects in")
		return a
	}
	opt := Options{Stream: s}
	if s.Cache != nil {
		opt.Stream.match = clips
	}
	a.paths, a.err = Follow(ctx, seen, opt)
	return a
}

// Swing is the largest rms displacement along its axis (Path.Spread, in
// frame px) of the objects a followed through at least cover of the
// window's frames (0 when none was): how far the scene's steady movers
// swing.
func (a *Ahead) Swing(cover float64) float64 {
	<-a.done
	var out float64
	for _, p := range a.paths {
		seen, all := 0, 0
		for _, n := range p.clipLen {
			all += n
		}
		for _, run := range p.Pos {
			seen += len(run)
		}
		if all > 0 && float64(seen) >= cover*float64(all) {
			out = max(out, p.Spread)
		}
	}
	return out
}

// Longest are the objects a followed through at least cover of every
// clip of the window without a break: each one's name (Path.Name) and,
// per clip, its longest run's latent (Path.Latents), the coordinate
// along the line or arc it moved on, in frame px — whether or not one
// mode's ODE fits it (a structure ringing in several does not). A fast
// swing can lose the template for a few frames at a release, where it is
// fastest.
func (a *Ahead) Longest(cover float64) (names []string, lat [][][]float64) {
	<-a.done
	for i := range a.paths {
		p := &a.paths[i]
		runs := p.Latents()
		best := make([]int, len(p.clipLen))
		for c := range best {
			best[c] = -1
		}
		for k, z := range runs {
			if c := p.Clip[k]; best[c] < 0 || len(z) > len(runs[best[c]]) {
				best[c] = k
			}
		}
		var per [][]float64
		for c, k := range best {
			if k < 0 || float64(len(runs[k])) < cover*float64(p.clipLen[c]) {
				per = nil
				break
			}
			per = append(per, runs[k])
		}
		if per != nil {
			names, lat = append(names, p.Name()), append(lat, per)
		}
	}
	return names, lat
}

// Weigh is Weigh with the objects a followed; enc must be the encoder's
// fit of a's frames. The result is Weigh's, to the bit.
func (a *Ahead) Weigh(ctx context.Context, clips []estimator.Clip, enc *estimator.Result, p estimator.Preset, th window.Thresholds, cam *motion.Track, log *slog.Logger, extra ...*estimator.Result) (r *estimator.Result, v window.Verdict, tracked []*estimator.Result) {
	<-a.done
	cands := []*estimator.Result{enc}
	if seen := seenFrames(clips, enc); seen != nil {
		// A path whose certificate fails level-set coverage on its
		// screening fit is refused whatever its σ: no bootstrap for it.
		screen := func(r *estimator.Result) bool { return window.Screen(r, th, nil, window.CheckCoverage) }
		opt := Options{MaxResidual: th.Resolved().MaxTrajectoryResidual, Screen: screen}
		var alts []*estimator.Result
		err := a.err
		if err == nil {
			alts, err = fitPaths(ctx, seen, a.paths, p, opt)
		}
		if err != nil && log != nil {
			log.Debug("no tracked readout", "err", err)
		}
		cands, tracked = append(cands, alts...), alts
	}
	cands = append(cands, extra...)
	i, v := window.Choose(cands, th, cam)
	if i == 0 {
		return enc, v, tracked
	}
	out := *cands[i]
	out.Exposure, out.Steps, out.Reverted, out.Encoder = enc.Exposure, enc.Steps, enc.Reverted, enc.Encoder
	out.Elapsed += enc.Elapsed
	return &out, v, tracked
}

// seenFrames is clips with the frames the encoder saw (enc's, exposure
// normalised), nil when enc has none for them.
func seenFrames(clips []estimator.Clip, enc *estimator.Result) []estimator.Clip {
	if enc == nil || len(enc.Frames) != len(clips) {
		return nil
	}
	seen := make([]estimator.Clip, len(clips))
	for m, c := range clips {
		seen[m] = estimator.Clip{W: c.W, H: c.H, Frames: enc.Frames[m], Dt: enc.Dt}
	}
	return seen
}
