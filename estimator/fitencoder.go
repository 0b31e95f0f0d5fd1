package estimator

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/physd/physd/internal/par"
)

// buildEncoder makes the fit's encoder (new from rng, or the warm one)
// and, for a low-rank one, sets where training starts (startLowRank).
func (f *fitRun) buildEncoder(ctx context.Context, rng *rand.Rand) error {
	net, err := buildNetwork(rng, f.p, f.clips[0].W, f.clips[0].H, f.opt.Warm)
	if err != nil {
		return err
	}
	f.net, f.params, f.pass = net, net.Params(), net.pass
	lr, ok := net.(*LowRank)
	if !ok {
		return nil
	}
	f.lr = lr
	lr.workers = par.Workers(ctx)
	return f.startLowRank(rng)
}

// startLowRank sets where a low-rank encoder's training starts: a cold
// fit's closed form (initLowRank); a warm one's readout re-projected
// from the previous window's γ (reprojectLowRank); and, with frozen
// features, the features computed once and the layers after them alone
// to train (headPass).
func (f *fitRun) startLowRank(rng *rand.Rand) error {
	p, opt, lr := f.p, f.opt, f.lr
	f.freeze = p.Steps > 0 && (opt.Warm != nil && opt.FreezeFeatures || p.FixedFeatures)
	reproject := opt.Warm != nil && opt.WarmGamma != nil && p.ClosedForm && p.Loss.Reg == VarFloor
	var err error
	if opt.Warm == nil {
		if f.h, err = initLowRank(rng, lr, f.clips, f.frames.all, f.frames.bounds, p); err != nil {
			return fmt.Errorf("fit: %w", err)
		}
	}
	if f.h == nil && (reproject || f.freeze) {
		if f.h, err = lr.Features(f.frames.all); err != nil {
			return fmt.Errorf("fit: %w", err)
		}
	}
	if reproject {
		if err := reprojectLowRank(lr, f.clips, f.h, f.frames.bounds, p, *opt.WarmGamma); err != nil {
			return fmt.Errorf("fit: %w", err)
		}
	}
	if f.freeze {
		f.params, f.pass = lr.headParams(), f.headPass
	}
	return nil
}

// headPass is a training pass of the layers after the features, on the
// features h computed once: with frozen features W does not move.
func (f *fitRun) headPass([][]float64) ([]float64, func([]float64) error, error) {
	z, ps := f.lr.head(f.h, len(f.frames.all))
	return z, func(dz []float64) error { f.lr.backward(ps, dz); return nil }, nil
}

// encode is the encoder's latents of all the frames, from h when known.
func (f *fitRun) encode() ([]float64, error) {
	if f.h != nil {
		z, _ := f.lr.head(f.h, len(f.frames.all))
		return z, nil
	}
	return f.net.Encode(f.frames.all)
}

func buildNetwork(rng *rand.Rand, p Preset, w, h int, warm Encoder) (network, error) {
	if warm != nil {
		n, ok := warm.(network)
		if !ok {
			return nil, fmt.Errorf("fit: warm encoder %T is not trainable", warm)
		}
		return n, nil
	}
	switch p.Encoder {
	case "lowrank":
		return NewLowRank(rng, w*h, p.Features, p.Hidden), nil
	case "cnn":
		return newCNN(rng, p, w, h), nil
	}
	return nil, fmt.Errorf("fit: unknown encoder %q", p.Encoder)
}

// initLowRank sets W to a smooth spatial basis and u to the closed-form
// readout, which solves the variance-floor problem with the floor held as
// a constraint. Without ClosedForm (or with another regulariser, whose
// problem it does not solve) u starts random and training alone sets it.
// It returns the features of W for all, n×K (nil without the closed form).
func initLowRank(rng *rand.Rand, e *LowRank, clips []Clip, all [][]float64, bounds []int, p Preset) ([]float64, error) {
	k, err := e.spatialBasis(all, clips[0].W, clips[0].H)
	if err != nil {
		return nil, err
	}
	if !p.ClosedForm || p.Loss.Reg != VarFloor {
		u := data(e.U)
		for a := range k {
			u[a] = p.Loss.Tau * rng.NormFloat64() / math.Sqrt(float64(k))
		}
		return nil, nil
	}
	h, err := e.Features(all)
	if err != nil {
		return nil, err
	}
	feats := make([][]float64, len(clips))
	for m := range clips {
		feats[m] = compact(h[bounds[m]*e.K:bounds[m+1]*e.K], e.K, k)
	}
	u, err := solveReadout(feats, k, clips[0].Dt, p.Loss.Tau, p.Loss.Offset, e.workers)
	if err != nil {
		return nil, err
	}
	copy(data(e.U), u)
	// Centre the latent: the intercept absorbs the equilibrium.
	var mean float64
	for i := range len(all) {
		for a := range k {
			mean += u[a] * h[i*e.K+a]
		}
	}
	data(e.B)[0] = -mean / float64(len(all))
	return h, nil
}

// reprojectLowRank keeps W (the features) and re-solves the linear
// readout on this window's frames from the previous window's γ. The
// hidden layer's output weights restart at zero so that the latent is the
// readout just solved.
// h holds the window's features, n×K.
func reprojectLowRank(e *LowRank, clips []Clip, h []float64, bounds []int, p Preset, g [2]float64) error {
	feats := make([][]float64, len(clips))
	for m := range clips {
		feats[m] = h[bounds[m]*e.K : bounds[m+1]*e.K]
	}
	u, err := solveReadoutFrom(feats, e.K, clips[0].Dt, p.Loss.Tau, p.Loss.Offset, g[0], g[1])
	if err != nil {
		return err
	}
	copy(data(e.U), u)
	clear(data(e.V))
	n := len(h) / e.K
	var mean float64
	for i := range n {
		for a := range e.K {
			mean += u[a] * h[i*e.K+a]
		}
	}
	data(e.B)[0] = -mean / float64(n)
	return nil
}

// compact keeps the first k of K columns of an n×K matrix.
func compact(h []float64, K, k int) []float64 {
	n := len(h) / K
	out := make([]float64, n*k)
	for i := range n {
		copy(out[i*k:(i+1)*k], h[i*K:i*K+k])
	}
	return out
}
