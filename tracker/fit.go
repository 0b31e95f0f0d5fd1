package tracker

import (
	"context"
	"fmt"

	"github.com/physd/physd/estimator"
)

// Candidates follows the window's objects (Follow) and fits the ODE to
// each path's displacement (estimator.FitLatents), one Result per object
// followed. It returns no candidates, and why, when nothing could be
// followed.
//
// A tracked latent is held to the certificate's tests on its own terms.
// State consistency — one latent level, one state — is geometric here:
// the template matched the same object in every frame (normalised
// cross-correlation ≥ Options.MinScore), and the latent is a coordinate
// along the curve the object moved on, which cannot fold; what it could
// miss is motion across that curve, so a path that strays from it by
// more than maxAcross of its spread is dropped (ErrTwoDimensional). The
// pixel revisit test, which asks that of an encoder's readout of whole
// frames, is therefore not run on tracked readouts (their Results carry
// no frames): the rest of the scene — a swaying string, a passer-by, a
// square parked beside the path — is no part of a position's claim.
// frames are unused and kept for the callers' symmetry with the
// encoder's Result.
func Candidates(ctx context.Context, clips []estimator.Clip, frames [][][]float64, p estimator.Preset, opt Options) ([]*estimator.Result, error) {
	paths, err := Follow(ctx, clips, opt)
	if err != nil {
		return nil, err
	}
	var out []*estimator.Result
	var first error
	for i := range paths {
		pa := &paths[i]
		if pa.Across > maxAcross*pa.Spread {
			first = cmpErr(first, fmt.Errorf("tracker: %s strays %.2f px rms from its curve, %.0f %% of its %.2f px spread (> %.0f %%): %w", pa.Name(), pa.Across, 100*pa.Across/pa.Spread, pa.Spread, 100*maxAcross, ErrTwoDimensional))
			continue
		}
		lat := pa.Latents()
		if err := fitsAnODE(lat, clips[0].Dt, p, opt.MaxResidual); err != nil {
			first = cmpErr(first, fmt.Errorf("tracker: %s: %w", pa.Name(), err))
			continue
		}
		fit := estimator.FitLatents
		if opt.Screen != nil {
			q, err := estimator.ScreenLatents(ctx, pa.Name(), lat, nil, clips[0].Dt, p)
			if err != nil {
				first = cmpErr(first, err)
				continue
			}
			if !opt.Screen(q) {
				fit = func(context.Context, string, [][]float64, [][][]float64, float64, estimator.Preset) (*estimator.Result, error) {
					return q, nil
				}
			}
		}
		r, err := fit(ctx, pa.Name(), lat, nil, clips[0].Dt, p)
		if err != nil {
			first = cmpErr(first, err)
			continue
		}
		for _, f := range pa.First {
			if f > 0 {
				r.First = pa.First
				break
			}
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, first
	}
	return out, nil
}

// maxAcross is the largest rms distance of a path from its curve (line
// or arc), as a fraction of its rms spread along it, of an object whose
// position is one coordinate.
const maxAcross = 0.25

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
