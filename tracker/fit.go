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
	return fitPaths(ctx, clips, paths, p, opt)
}

// fitPaths is Candidates on paths already followed through clips.
func fitPaths(ctx context.Context, clips []estimator.Clip, paths []Path, p estimator.Preset, opt Options) ([]*estimator.Result, error) {
	var out []*estimator.Result
	var first error
	for i := range paths {
		pa := &paths[i]
		if pa.Across > maxAcross*pa.Spread {
			first = cmpErr(first, fmt.Errorf("tracker: %s strays %.2f px rms from its curve, %.0f %% of its %.2f px spread (> %.0f %%): %w", pa.Name(), pa.Across, 100*pa.Across/pa.Spread, pa.Spread, 100*maxAcross, ErrTwoDimensional))
			continue
		}
		lat := pa.Latents()
		runs := pa.runs()
		if err := fitsAnODE(lat, runs, clips[0].Dt, p, opt.MaxResidual); err != nil {
			first = cmpErr(first, fmt.Errorf("tracker: %s: %w", pa.Name(), err))
			continue
		}
		fit := func(measure bool) (*estimator.Result, error) {
			switch {
			case runs == nil && measure:
				return estimator.FitLatents(ctx, pa.Name(), lat, nil, clips[0].Dt, p)
			case runs == nil:
				return estimator.ScreenLatents(ctx, pa.Name(), lat, nil, clips[0].Dt, p)
			case measure:
				return estimator.FitRuns(ctx, pa.Name(), lat, *runs, clips[0].Dt, p)
			}
			return estimator.ScreenRuns(ctx, pa.Name(), lat, *runs, clips[0].Dt, p)
		}
		var r *estimator.Result
		var err error
		if opt.Screen != nil {
			r, err = fit(false)
			if err == nil && opt.Screen(r) {
				r, err = fit(true)
			}
		} else {
			r, err = fit(true)
		}
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

// maxAcross is the largest rms distance of a path from its curve (line
// or arc), as a fraction of its rms spread along it, of an object whose
// position is one coordinate.
const maxAcross = 0.25

// fitsAnODE is the cheap part of FitLatents — the stencil, the exact map
// and the output-error fit, without the bootstrap that costs most — and
// an error when the latent is further than maxResidual of its size from
// its fitted solution (0: no limit): such a candidate would be refused
// for its fit, so its σ is not worth measuring.
func fitsAnODE(lat [][]float64, runs *estimator.Runs, dt float64, p estimator.Preset, maxResidual float64) error {
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
	tf, err := estimator.FitTrajectoryRuns(lat, runs, dt, g1, g0, p.Loss.Offset)
	if err != nil {
		return err
	}
	if r := tf.RelResidual(); !(r <= maxResidual) {
		return fmt.Errorf("%w: the path is %.3g of its size from its fitted ODE solution (> %.3g)", ErrPoorFit, r, maxResidual)
	}
	return nil
}
