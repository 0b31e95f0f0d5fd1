package nn

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"
)

// BatchNorm2D normalises each channel of an (N, C, H, W) input and applies
// a learned affine map:
//
//	y[n,c,h,w] = γ[c] · (x[n,c,h,w] − μ[c]) / √(σ²[c] + Eps) + β[c].
//
// With train = true, μ and σ² are the mean and biased variance of channel c
// over the M = N·H·W values of the batch, and the running statistics are
// updated as r ← (1 − Momentum)·r + Momentum·batch, using the unbiased
// variance σ²·M/(M−1) for the running variance (PyTorch convention). With
// train = false the running statistics are used instead and nothing is
// updated. Gamma and Beta have shape (C) and are trainable; RunningMean and
// RunningVar have shape (C) and are non-trainable Buffers (nil Grad).
type BatchNorm2D struct {
	Name                    string
	C                       int
	Eps, Momentum           float64
	Gamma, Beta             *Param
	RunningMean, RunningVar *Param

	// Forward cache: input, the per-channel μ and 1/√(σ²+ε) actually used,
	// and whether they were batch statistics (which couples the samples).
	x            []float64
	shape        []int
	mean, invStd []float64
	train, ready bool
}

// NewBatchNorm2D returns a BatchNorm2D over c channels with γ = 1, β = 0,
// Eps = 1e-5, Momentum = 0.1, running mean 0 and running variance 1.
// Parameter names are name+".gamma", ".beta", ".running_mean" and
// ".running_var". It panics if c < 1.
func NewBatchNorm2D(name string, c int) *BatchNorm2D {
	if c < 1 {
		panic(fmt.Sprintf("nn: NewBatchNorm2D %q: invalid channel count %d", name, c))
	}
	b := &BatchNorm2D{
		Name: name, C: c, Eps: 1e-5, Momentum: 0.1,
		Gamma:       newParam(name+".gamma", c),
		Beta:        newParam(name+".beta", c),
		RunningMean: newBuffer(name+".running_mean", c),
		RunningVar:  newBuffer(name+".running_var", c),
	}
	fill(b.Gamma.Value.Data().([]float64), 1)
	fill(b.RunningVar.Value.Data().([]float64), 1)
	return b
}

func fill(s []float64, v float64) {
	for i := range s {
		s[i] = v
	}
}

// Params returns Gamma and Beta.
func (b *BatchNorm2D) Params() []*Param { return []*Param{b.Gamma, b.Beta} }

// Buffers returns RunningMean and RunningVar.
func (b *BatchNorm2D) Buffers() []*Param { return []*Param{b.RunningMean, b.RunningVar} }

func (b *BatchNorm2D) who() string { return fmt.Sprintf("nn: BatchNorm2D %q", b.Name) }

// Forward normalises x (N, C, H, W) and returns y of the same shape.
func (b *BatchNorm2D) Forward(x *tensor.Dense, train bool) (*tensor.Dense, error) {
	b.ready = false
	shape, xd, err := float64Data(b.who(), "input", x, 4, 4)
	if err != nil {
		return nil, err
	}
	if shape[1] != b.C {
		return nil, fmt.Errorf("%s: input shape %v, want (N, %d, H, W): %w", b.who(), shape, b.C, ErrShape)
	}
	n, hw := shape[0], shape[2]*shape[3]
	m := float64(n * hw)
	b.mean = grow(b.mean, b.C)
	b.invStd = grow(b.invStd, b.C)
	gamma := b.Gamma.Value.Data().([]float64)
	beta := b.Beta.Value.Data().([]float64)
	rm := b.RunningMean.Value.Data().([]float64)
	rv := b.RunningVar.Value.Data().([]float64)
	y := make([]float64, len(xd))
	// Channels are independent, so each worker owns a disjoint set of them.
	parallelRange(b.C, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			mu, inv := rm[c], 1/math.Sqrt(rv[c]+b.Eps)
			if train {
				sum := 0.0
				for i := 0; i < n; i++ {
					for _, v := range xd[(i*b.C+c)*hw : (i*b.C+c+1)*hw] {
						sum += v
					}
				}
				mu = sum / m
				// Two-pass variance avoids the cancellation of E[x²] − E[x]².
				ss := 0.0
				for i := 0; i < n; i++ {
					for _, v := range xd[(i*b.C+c)*hw : (i*b.C+c+1)*hw] {
						ss += (v - mu) * (v - mu)
					}
				}
				v := ss / m
				inv = 1 / math.Sqrt(v+b.Eps)
				unbiased := v
				if m > 1 {
					unbiased = ss / (m - 1)
				}
				rm[c] = (1-b.Momentum)*rm[c] + b.Momentum*mu
				rv[c] = (1-b.Momentum)*rv[c] + b.Momentum*unbiased
			}
			b.mean[c], b.invStd[c] = mu, inv
			scale, shift := gamma[c]*inv, beta[c]-gamma[c]*inv*mu
			for i := 0; i < n; i++ {
				off := (i*b.C + c) * hw
				for j, v := range xd[off : off+hw] {
					y[off+j] = scale*v + shift
				}
			}
		}
	})
	b.x, b.shape, b.train, b.ready = xd, shape, train, true
	return fromSlice(y, shape...), nil
}

// Backward takes dy (N, C, H, W) and returns dx. With x̂ = (x − μ)·s,
// s = 1/√(σ²+ε), and sums over the M values of a channel:
//
//	dβ += Σ dy,   dγ += Σ dy·x̂,
//	dx = γ·s·(dy − Σdy/M − x̂·Σ(dy·x̂)/M)   (train: μ, σ² depend on x)
//	dx = γ·s·dy                            (eval: running statistics).
func (b *BatchNorm2D) Backward(dy *tensor.Dense) (*tensor.Dense, error) {
	if !b.ready {
		return nil, fmt.Errorf("%s: %w", b.who(), ErrNoForward)
	}
	shape, dyd, err := float64Data(b.who(), "output gradient", dy, 4, 4)
	if err != nil {
		return nil, err
	}
	if !sameShape(shape, b.shape) {
		return nil, fmt.Errorf("%s: output gradient shape %v, want %v: %w", b.who(), shape, b.shape, ErrShape)
	}
	n, hw := shape[0], shape[2]*shape[3]
	m := float64(n * hw)
	gamma := b.Gamma.Value.Data().([]float64)
	gg := b.Gamma.Grad.Data().([]float64)
	gb := b.Beta.Grad.Data().([]float64)
	dx := make([]float64, len(dyd))
	parallelRange(b.C, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			mu, s := b.mean[c], b.invStd[c]
			sdy, sdyx := 0.0, 0.0
			for i := 0; i < n; i++ {
				off := (i*b.C + c) * hw
				xs := b.x[off : off+hw]
				for j, d := range dyd[off : off+hw] {
					sdy += d
					sdyx += d * (xs[j] - mu) * s
				}
			}
			gb[c] += sdy
			gg[c] += sdyx
			k := gamma[c] * s
			a, bx := 0.0, 0.0 // dx = k·dy − k·(a + bx·x̂)
			if b.train {
				a, bx = sdy/m, sdyx/m
			}
			for i := 0; i < n; i++ {
				off := (i*b.C + c) * hw
				xs := b.x[off : off+hw]
				for j, d := range dyd[off : off+hw] {
					dx[off+j] = k * (d - a - bx*(xs[j]-mu)*s)
				}
			}
		}
	})
	return fromSlice(dx, shape...), nil
}
