package estimator

import (
	"context"
	"fmt"
	"math"
	"time"
)

// FitLatents fits the ODE to latents that came from elsewhere than an
// encoder — an object's tracked position, say — exactly as Fit fits its
// encoder's final latents: the stencil's least squares, the exact AR(2)
// map with an Exact preset, the output-error fit, and its bootstrap σ.
// There is no readout chosen on the frames, so nothing is added for one.
// frames are the clips' frames the latents describe (kept, not copied,
// for the certificate's revisit test), or nil for a readout whose state
// consistency is not a matter of whole frames (no revisit test); name
// says where the latents came from (Result.Readout).
func FitLatents(ctx context.Context, name string, lat [][]float64, frames [][][]float64, dt float64, p Preset) (*Result, error) {
	return fitLatents(ctx, name, lat, frames, nil, dt, p, true)
}

// FitRuns is FitLatents of latent sequences that are runs of their clips
// (an object hidden for a while and found again), placed by runs: the
// runs of one clip are fitted as one free response with gaps
// (FitTrajectoryRuns), and the Result keeps where they lie (First,
// Clips). There are no frames: a run's pixels are not a readout's.
func FitRuns(ctx context.Context, name string, lat [][]float64, runs Runs, dt float64, p Preset) (*Result, error) {
	return fitLatents(ctx, name, lat, nil, &runs, dt, p, true)
}

// ScreenRuns is FitRuns without the bootstrap (ScreenLatents).
func ScreenRuns(ctx context.Context, name string, lat [][]float64, runs Runs, dt float64, p Preset) (*Result, error) {
	return fitLatents(ctx, name, lat, nil, &runs, dt, p, false)
}

// ScreenLatents is FitLatents without the bootstrap, which costs most of
// it: the same estimate, with the stencil's σ (Uncertainty.Source
// "stencil"). A candidate readout whose certificate fails a test that
// does not depend on σ (level-set coverage, the fit) is refused as
// surely from this; the others are worth FitLatents.
func ScreenLatents(ctx context.Context, name string, lat [][]float64, frames [][][]float64, dt float64, p Preset) (*Result, error) {
	return fitLatents(ctx, name, lat, frames, nil, dt, p, false)
}

func fitLatents(ctx context.Context, name string, lat [][]float64, frames [][][]float64, runs *Runs, dt float64, p Preset, measure bool) (*Result, error) {
	start := time.Now()
	if len(lat) == 0 || frames != nil && len(lat) != len(frames) {
		return nil, fmt.Errorf("fit latents %s: %d latent clips for %d frame clips: %w", name, len(lat), len(frames), ErrInvalidClip)
	}
	for m := range lat {
		if frames != nil && len(lat[m]) != len(frames[m]) {
			return nil, fmt.Errorf("fit latents %s: clip %d has %d latents for %d frames: %w", name, m, len(lat[m]), len(frames[m]), ErrInvalidClip)
		}
		if len(lat[m]) < MinFrames {
			return nil, fmt.Errorf("fit latents %s: clip %d has %d latents (need ≥ %d): %w", name, m, len(lat[m]), MinFrames, ErrInvalidClip)
		}
	}
	if !(dt > 0) || math.IsInf(dt, 0) {
		return nil, fmt.Errorf("fit latents %s: time step %g: %w", name, dt, ErrInvalidClip)
	}
	if err := checkFinite(lat); err != nil {
		return nil, fmt.Errorf("fit latents %s: %w", name, err)
	}
	f, err := FitODE(lat, dt, p.Loss.Offset)
	if err != nil {
		return nil, fmt.Errorf("fit latents %s: %w", name, err)
	}
	loss, _, _ := Objective(lat, dt, Coefficients{Gamma1: f.Gamma1, Gamma0: f.Gamma0, G: f.G}, p.Loss)
	r := &Result{Readout: name, Gamma1: f.Gamma1, Gamma0: f.Gamma0, Cov: f.Cov, StencilCov: f.Cov,
		Stencil: f, Latents: lat, Frames: frames, Dt: dt, Loss: loss}
	if runs != nil {
		if _, err := latentsLayout(lat, runs); err != nil {
			return nil, fmt.Errorf("fit latents %s: %w", name, err)
		}
		r.First, r.Clips = runs.First, runs.Clip
	}
	if p.Exact {
		if err := r.fitExact(ctx, nil, nil, nil, nil, p, measure, nil); err != nil {
			return nil, fmt.Errorf("fit latents %s: %w", name, err)
		}
	}
	r.finish(start)
	return r, nil
}
