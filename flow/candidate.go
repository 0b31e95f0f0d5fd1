package flow

import (
	"context"
	"errors"
	"fmt"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/window"
)

// ReadoutFlow is the Result.Readout of the displacement read from
// intensity gradients.
const ReadoutFlow = "flow"

// MaxPeak is the largest displacement from the mean position, in frame
// pixels, that the readout is offered for: the image is linear in the
// displacement to within a few percent up to about there (a half-pixel
// swing of a sharp edge reads 2 % small), and beyond it the encoder and
// the tracked objects read the motion without that model.
const MaxPeak = 0.75

// MinExplained is the least share of the moving pixels' change the
// linear model must explain (Reading.Explained) for the readout to be
// offered: less, and the motion is not small, whatever its reading's
// peak says (a large swing saturates the reading).
const MinExplained = 0.35

// Errors of Candidate.
var (
	// ErrLarge reports motion too large for the linear model (MaxPeak).
	ErrLarge = errors.New("flow: the motion is too large for the small-motion readout")
	// ErrStill reports a window in which nothing moves beyond the noise.
	ErrStill = errors.New("flow: nothing moves beyond the noise")
	// ErrClips reports a window of several clips: the readout reads one.
	ErrClips = errors.New("flow: the small-motion readout reads a window of one clip")
)

// Candidate reads the displacement of a window of one clip (ReadBinned) and
// fits it as a readout (estimator.FitRuns, named ReadoutFlow: one run
// from where the motion is within the linear model, to where a free decay
// meets the floor), for
// window.Choose to weigh beside the encoder's and the tracked objects'.
// With screen set, the readout is first fitted without its σ
// (estimator.ScreenLatents) and measured only when screen passes it.
// The Reading is returned whenever the clip could be read, with an
// error when no readout is offered (ErrLarge, ErrStill) so that the
// window's amplitude can still be told.
func Candidate(ctx context.Context, clips []estimator.Clip, p estimator.Preset, screen func(*estimator.Result) bool) (*estimator.Result, *Reading, error) {
	if len(clips) != 1 {
		return nil, nil, fmt.Errorf("%w: %d clips", ErrClips, len(clips))
	}
	rd, err := ReadBinned(clips[0])
	if err != nil {
		return nil, nil, err
	}
	from, to := rd.Span()
	amp := rd.spanAmplitude(from, to)
	switch {
	case rd.Moving == 0:
		return nil, rd, fmt.Errorf("%w: %.3g frame px against a noise of %.2g", ErrStill, rd.Amplitude(), rd.Noise)
	case 2*from > len(rd.Z):
		return nil, rd, fmt.Errorf("%w: it reaches %.2f frame px and stays beyond %g (read binned %d×%d) past the window's middle", ErrLarge, rd.Peak(), MaxPeak*float64(max(rd.Binned, 1)), rd.Binned, rd.Binned)
	case rd.Explained < MinExplained:
		return nil, rd, fmt.Errorf("%w: the linear model explains %.0f %% of the moving pixels' change (< %.0f %%)", ErrLarge, 100*rd.Explained, 100*MinExplained)
	case amp < window.MinResolved*rd.Noise:
		// The window's floor is at least the reading's noise and its
		// amplitude over the span fitted at most the reading's: the
		// resolution check would refuse this readout, so it is not fitted.
		return nil, rd, fmt.Errorf("%w: %.3g frame px against a noise of %.2g (< %d×)", ErrStill, amp, rd.Noise, window.MinResolved)
	}
	// A free decay is fitted over its Span: one run of the clip, from
	// where its swing is within the linear model (a saturated swing would
	// bias the damping low) until it meets the floor.
	lat := [][]float64{rd.Z[from:to]}
	runs := estimator.Runs{Clip: []int{0}, First: []int{from}}
	dt := clips[0].Dt
	if screen != nil {
		r, err := estimator.ScreenRuns(ctx, ReadoutFlow, lat, runs, dt, p)
		if err != nil {
			return nil, rd, err
		}
		r.Noise = rd.Noise
		if !screen(r) {
			return r, rd, nil
		}
	}
	r, err := estimator.FitRuns(ctx, ReadoutFlow, lat, runs, dt, p)
	if err != nil {
		return nil, rd, err
	}
	// The reading's own noise, from its pixels: the certificate's test of
	// fit judges the residual beyond it.
	r.Noise = rd.Noise
	return r, rd, nil
}
