package estimator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/physd/physd/internal/par"
)

// Uncertainty says what the reported σ of (γ1, γ0) is made of.
//
// With an output-error fit (the Exact presets) the reported covariance is
// the sum of two measured parts from different sources:
//
//	Cov = Cov_bootstrap + Cov_jackknife
//
// the noise in the latent, colour included (bootstrapTrajectory), and the
// readout being chosen on the same frames it is then read from
// (jackknifeReadout; only where the readout is the closed-form one). The
// stencil's HAC covariance mapped through the exact AR(2) map, which was
// reported before, is kept for comparison: on video it is tens of times
// too large, which made the regime label call lightly damped pendulums
// and springs undamped.
type Uncertainty struct {
	// Source names what Cov is: "bootstrap+jackknife", "bootstrap" (no
	// closed-form readout to re-solve), "bootstrap+runs-jackknife" (no
	// closed-form readout, and runs that hold less than a period between
	// them: jackknifeRuns), "bootstrap+batches" (no closed-form readout,
	// a response long enough for parts: batchMeans), or "stencil" (no output-error
	// fit, its bootstrap failed, or fewer than two jackknife replicates
	// had an estimate: the stencil's HAC σ, as before; Note says which).
	Source    string          `json:"source"`
	Bootstrap *BootstrapSigma `json:"bootstrap,omitempty"`
	Jackknife *JackknifeSigma `json:"jackknife,omitempty"`
	// Batches is the spread of a long response's parts fitted on their
	// own (batchMeans), for a readout with no closed form.
	Batches *BatchSigma `json:"batches,omitempty"`
	// StencilSigma1, StencilSigma0 are the stencil's σ through the exact
	// map (Result.StencilCov), for diagnostics.
	StencilSigma1 float64 `json:"stencil_gamma1_sigma"`
	StencilSigma0 float64 `json:"stencil_gamma0_sigma"`
	// Note says why a part is missing, if one is.
	Note string `json:"note,omitempty"`
	// Elapsed is the wall time the two parts took.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// measureUncertainty sets r.Cov (and r.Uncertainty) from the bootstrap of
// the output-error fit r.Trajectory and, with a closed-form low-rank
// encoder, the jackknife of its readout. stencil is the final stencil fit
// (its coefficients start the jackknife's readouts), lens the clips'
// lengths. If a part cannot be measured r.Cov stays the stencil's, and
// Note says why.
func measureUncertainty(ctx context.Context, r *Result, net network, all [][]float64, h []float64, lens []int, p Preset, stencil *ODEFit) error {
	start := time.Now()
	u := &Uncertainty{Source: "stencil",
		StencilSigma1: math.Sqrt(math.Max(0, r.StencilCov[0][0])),
		StencilSigma0: math.Sqrt(math.Max(0, r.StencilCov[1][1]))}
	r.Uncertainty = u
	defer func() { u.Elapsed = time.Since(start) }()
	if err := ctx.Err(); err != nil {
		return err
	}
	bs, err := bootstrapTrajectory(r.Trajectory, r.Dt, p.Loss.Offset, bootstrapResamples, par.Workers(ctx))
	if err != nil {
		u.Note = err.Error()
		return nil
	}
	lr, ok := net.(*LowRank)
	if !ok || !p.ClosedForm || p.Loss.Reg != VarFloor {
		r.measureAsRead(ctx, u, bs, p.Loss.Offset)
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if h == nil {
		var err error
		if h, err = lr.Features(all); err != nil {
			return fmt.Errorf("uncertainty: %w", err)
		}
	}
	jk, err := jackknifeReadout(lr, h, lens, r.Dt, p, stencil.Gamma1, stencil.Gamma0)
	if err != nil {
		// Too few replicates to measure the readout's part: report the
		// stencil's σ, as before, rather than one that leaves a known
		// source out.
		u.Bootstrap, u.Note = bs, err.Error()
		return nil
	}
	u.Bootstrap, u.Jackknife, u.Source = bs, jk, "bootstrap+jackknife"
	r.Cov = addCov(bs.Cov, jk.Cov)
	return nil
}

// measureAsRead sets r.Cov (and u) for latents with no closed-form
// readout to re-solve (a followed object, a small-motion reading): the
// bootstrap bs, and what the latents' runs or parts show beyond it.
//   - A gap that could hold another number of cycles (aliasAcrossGaps):
//     σ stays the stencil's.
//   - Runs that hold less than a period in all (seenForAPeriod): the runs
//     jackknife is added (jackknifeRuns), or σ stays the stencil's.
//   - A response long enough for parts (batchMeans): their disagreement
//     is added, or σ stays the stencil's when a part cannot be fitted.
//   - Otherwise the bootstrap alone.
func (r *Result) measureAsRead(ctx context.Context, u *Uncertainty, bs *BootstrapSigma, off Offset) {
	u.Bootstrap = bs
	if err := r.aliasAcrossGaps(off); err != nil {
		// The stencil's σ, as when the readout's part cannot be
		// measured: not one that leaves a known source out.
		u.Note = err.Error()
		return
	}
	if short := r.seenForAPeriod(); short != nil {
		jk, err := jackknifeRuns(r, off, par.Workers(ctx))
		if err != nil {
			u.Note = fmt.Sprintf("%v: the runs' agreement across their gaps is not measured (%v)", short, err)
			return
		}
		u.Jackknife, u.Source = jk, "bootstrap+runs-jackknife"
		u.Note = fmt.Sprintf("no closed-form readout: its selection is not measured; %v: the runs' agreement across their gaps measured by leaving out each sixteenth of them", short)
		r.Cov = addCov(bs.Cov, jk.Cov)
		return
	}
	bm, err := batchMeans(r, off)
	switch {
	case err == nil:
		u.Batches, u.Source = bm, "bootstrap+batches"
		u.Note = fmt.Sprintf("no closed-form readout: its selection is not measured; the response's %d parts fitted on their own", len(bm.Gamma))
		r.Cov = addCov(bs.Cov, bm.Cov)
	case !errors.Is(err, errNoBatches):
		u.Note = fmt.Sprintf("the response's parts do not fit on their own (%v): how its decay depends on the amplitude is not measured", err)
	default:
		u.Source, u.Note = "bootstrap", "no closed-form readout: its selection is not measured"
		r.Cov = bs.Cov
	}
}

// addCov is a + b, two measured parts of one covariance.
func addCov(a, b [2][2]float64) [2][2]float64 {
	for i := range 2 {
		for j := range 2 {
			a[i][j] += b[i][j]
		}
	}
	return a
}
