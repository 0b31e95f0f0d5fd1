package tracker

import (
	"context"
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
// own time. Why nothing could be followed is logged at debug level.
func Weigh(ctx context.Context, clips []estimator.Clip, enc *estimator.Result, p estimator.Preset, th window.Thresholds, cam *motion.Track, log *slog.Logger) (*estimator.Result, window.Verdict) {
	cands := []*estimator.Result{enc}
	if enc != nil && len(enc.Frames) == len(clips) {
		seen := make([]estimator.Clip, len(clips))
		for m, c := range clips {
			seen[m] = estimator.Clip{W: c.W, H: c.H, Frames: enc.Frames[m], Dt: enc.Dt}
		}
		// A path whose certificate fails level-set coverage on its
		// screening fit is refused whatever its σ: no bootstrap for it.
		screen := func(r *estimator.Result) bool { return window.Covered(r, th) }
		alts, err := Candidates(ctx, seen, enc.Frames, p, Options{MaxResidual: th.Resolved().MaxTrajectoryResidual, Screen: screen})
		if err != nil && log != nil {
			log.Debug("no tracked readout", "err", err)
		}
		cands = append(cands, alts...)
	}
	i, v := window.Choose(cands, th, cam)
	if i == 0 {
		return enc, v
	}
	r := *cands[i]
	r.Exposure, r.Steps, r.Reverted, r.Encoder = enc.Exposure, enc.Steps, enc.Reverted, enc.Encoder
	r.Elapsed += enc.Elapsed
	return &r, v
}
