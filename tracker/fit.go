package tracker

import (
	"context"

	"github.com/physd/physd/estimator"
)

// Candidates follows the window's objects (Follow) and fits the ODE to
// each path's displacement (estimator.FitLatents), one Result per object
// followed; frames are the frames the certificate's revisit test reads
// (the encoder's, exposure normalised). It returns no candidates, and
// why, when nothing could be followed.
func Candidates(ctx context.Context, clips []estimator.Clip, frames [][][]float64, p estimator.Preset, opt Options) ([]*estimator.Result, error) {
	paths, err := Follow(ctx, clips, opt)
	if err != nil {
		return nil, err
	}
	var out []*estimator.Result
	var first error
	for i := range paths {
		r, err := estimator.FitLatents(ctx, paths[i].Name(), paths[i].Latents(), frames, clips[0].Dt, p)
		if err != nil {
			first = cmpErr(first, err)
			continue
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, first
	}
	return out, nil
}
