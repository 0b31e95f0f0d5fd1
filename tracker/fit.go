package tracker

import (
	"context"
	"fmt"

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
		lat := paths[i].Latents()
		if err := fitsAnODE(lat, clips[0].Dt, p, opt.MaxResidual); err != nil {
			first = cmpErr(first, fmt.Errorf("tracker: %s: %w", paths[i].Name(), err))
			continue
		}
		r, err := estimator.FitLatents(ctx, paths[i].Name(), lat, frames, clips[0].Dt, p)
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

// fitsAnODE is the cheap part of FitLatents — the stencil, the exact map
// and the output-error fit, without the bootstrap that costs most — and
// an error when the latent is further than maxResidual of its size from
// its fitted solution (0: no limit): such a candidate would be refused
// for its fit, so its σ is not worth measuring.
func fitsAnODE(lat [][]float64, dt float64, p estimator.Preset, maxResidual float64) error {
	if maxResidual <= 0 || !p.Exact {
		return nil
	}
	f, err := estimator.FitODE(lat, dt, p.Loss.Offset)
	if err != nil {
		return err
	}
	g1, g0, err := estimator.Exact(f.Gamma1, f.Gamma0, dt)
	if err != nil {
		return err
	}
	tf, err := estimator.FitTrajectory(lat, dt, g1, g0, p.Loss.Offset)
	if err != nil {
		return err
	}
	if r := tf.RelResidual(); !(r <= maxResidual) {
		return fmt.Errorf("%w: the path is %.3g of its size from its fitted ODE solution (> %.3g)", ErrPoorFit, r, maxResidual)
	}
	return nil
}
