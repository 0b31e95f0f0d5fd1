package estimator

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gorgonia.org/tensor"

	"github.com/physd/physd/estimator/nn"
	"github.com/physd/physd/internal/par"
)

// LowRank is physd's default encoder, a two-layer network on pixels:
//
//	h = W (x − μ)                      (K linear features)
//	z = b + uᵀh + vᵀ gelu(A h + c)     (linear readout plus a small GELU layer)
//
// with x ∈ ℝ^P a frame, W ∈ ℝ^{K×P}, A ∈ ℝ^{Hid×K}. Every parameter is
// trained; W starts from the window's leading principal directions (a
// low-rank initialisation) and u from the closed-form variable-projection
// solution (closedform.go), so training starts next to the optimum instead
// of thousands of steps away from it. μ is the mean frame, updated by
// Recenter rather than by gradient.
type LowRank struct {
	P, K, Hidden     int
	Mean             []float64
	W, U, A, C, V, B *nn.Param
	cache            *featureCache // nil unless EnableFeatureCache
	// workers is how many goroutines the encoder's loops over frames and
	// pixels use (< 1: one per core); Fit sets it from its context.
	workers int
}

// NewLowRank returns an encoder for frames of p pixels with k features and
// hid hidden GELU units, W and u zero, A small and random from rng.
func NewLowRank(rng *rand.Rand, p, k, hid int) *LowRank {
	mk := func(name string, shape ...int) *nn.Param {
		n := 1
		for _, s := range shape {
			n *= s
		}
		return &nn.Param{
			Name:  name,
			Value: tensor.New(tensor.WithShape(shape...), tensor.WithBacking(make([]float64, n))),
			Grad:  tensor.New(tensor.WithShape(shape...), tensor.WithBacking(make([]float64, n))),
		}
	}
	e := &LowRank{P: p, K: k, Hidden: hid, Mean: make([]float64, p),
		W: mk("lowrank.W", k, p), U: mk("lowrank.u", k), A: mk("lowrank.A", max(hid, 1), k),
		C: mk("lowrank.c", max(hid, 1)), V: mk("lowrank.v", max(hid, 1)), B: mk("lowrank.b", 1)}
	a := data(e.A)
	for i := range a {
		a[i] = rng.NormFloat64() / math.Sqrt(float64(k))
	}
	return e
}

func data(p *nn.Param) []float64  { return p.Value.Data().([]float64) }
func gdata(p *nn.Param) []float64 { return p.Grad.Data().([]float64) }

// Params returns the trainable parameters.
func (e *LowRank) Params() []*nn.Param {
	if e.Hidden == 0 {
		return []*nn.Param{e.W, e.U, e.B}
	}
	return []*nn.Param{e.W, e.U, e.A, e.C, e.V, e.B}
}

// lowRankPass holds one forward pass's intermediates for Backward.
type lowRankPass struct {
	n      int
	frames [][]float64 // the input, re-centred block by block in backward; nil when W is frozen
	h      []float64   // n×K
	pre    []float64   // n×Hid
	hidden []float64   // n×Hid
}

func (e *LowRank) centred(frames [][]float64) ([]float64, error) {
	if err := e.checkFrames(frames); err != nil {
		return nil, err
	}
	x := make([]float64, len(frames)*e.P)
	for i, f := range frames {
		row := x[i*e.P : (i+1)*e.P]
		for j, v := range f {
			row[j] = v - e.Mean[j]
		}
	}
	return x, nil
}

// Encode returns one latent per frame.
func (e *LowRank) Encode(frames [][]float64) ([]float64, error) {
	z, _, err := e.forward(frames)
	return z, err
}

// Features returns h = W(x − μ) for each frame, n×K row-major.
func (e *LowRank) Features(frames [][]float64) ([]float64, error) {
	if err := e.checkFrames(frames); err != nil {
		return nil, err
	}
	return e.features(frames), nil
}

func (e *LowRank) checkFrames(frames [][]float64) error {
	for i, f := range frames {
		if len(f) != e.P {
			return fmt.Errorf("low-rank encoder: frame %d has %d pixels, want %d", i, len(f), e.P)
		}
	}
	return nil
}

// featureBlock is how many frames one worker centres and multiplies at a
// time in features: each row of W (32 KB at 64×64) is then read once per
// block from cache instead of once per frame from memory, and a worker's
// buffer stays small (256 KB at 64×64) — not a centred copy of the whole
// window, which every training step would otherwise allocate and which
// would set the estimator's peak memory on a long window.
const featureBlock = 8

// gradChunk is how many pixel columns of W's gradient one worker owns at a
// time in backward: K rows of that many columns (64 KB with K = 32) stay
// in cache while every frame's slice of those columns streams past once.
const gradChunk = 256

// features computes h = W(x − μ), n×K row-major: through the cache when
// one is enabled, else computeFeatures.
func (e *LowRank) features(frames [][]float64) []float64 {
	if e.cache != nil {
		return e.cachedFeatures(frames)
	}
	return e.computeFeatures(frames)
}

// computeFeatures computes h = W(x − μ), n×K row-major, as
//
//	h_ik = 0 + Σ_p (x_ip − μ_p) W_kp
//
// with the sum over all P pixels taken by one floats.Dot call: the very
// operations gonum's Gemm(NoTrans, Trans) performed here before (for a
// block of at most 16 frames and K ≤ 64 it takes its serial path, one
// DotUnitary per entry, added to a zeroed C), so the features are bitwise
// those of before. The latent's bits matter beyond the estimate: the
// bootstrap's random stream is seeded by the residual's bits. Blocks of
// frames are spread over e.workers goroutines; each entry is computed by
// exactly one worker, so the split does not change the result.
func (e *LowRank) computeFeatures(frames [][]float64) []float64 {
	n := len(frames)
	h := make([]float64, n*e.K)
	wd := data(e.W)
	blocks := (n + featureBlock - 1) / featureBlock
	workers := par.Count(e.workers, blocks)
	bufs := make([][]float64, workers)
	par.ForWorker(workers, blocks, func(w, b int) {
		if bufs[w] == nil {
			bufs[w] = make([]float64, min(featureBlock, n)*e.P)
		}
		i0, i1 := b*featureBlock, min(n, (b+1)*featureBlock)
		x := e.centreInto(bufs[w], frames[i0:i1])
		for k := range e.K {
			wk := wd[k*e.P : (k+1)*e.P]
			for i := range i1 - i0 {
				// 0 + d, as Gemm's zeroed C: a −0 dot becomes +0.
				h[(i0+i)*e.K+k] = 0 + floats.Dot(x[i*e.P:(i+1)*e.P], wk)
			}
		}
	})
	return h
}

// centreInto writes x − μ of each frame into consecutive rows of buf and
// returns them.
func (e *LowRank) centreInto(buf []float64, frames [][]float64) []float64 {
	x := buf[:len(frames)*e.P]
	for i, f := range frames {
		row := x[i*e.P : (i+1)*e.P]
		for j, v := range f {
			row[j] = v - e.Mean[j]
		}
	}
	return x
}

func (e *LowRank) forward(frames [][]float64) ([]float64, *lowRankPass, error) {
	if err := e.checkFrames(frames); err != nil {
		return nil, nil, err
	}
	z, ps := e.head(e.features(frames), len(frames))
	ps.frames = frames
	return z, ps, nil
}

// head runs the layers after the features: z from h (n×K).
func (e *LowRank) head(h []float64, n int) ([]float64, *lowRankPass) {
	ps := &lowRankPass{n: n, h: h}
	u, b := data(e.U), data(e.B)[0]
	z := make([]float64, n)
	for i := range n {
		hi := ps.h[i*e.K : (i+1)*e.K]
		s := b
		for j, v := range hi {
			s += u[j] * v
		}
		z[i] = s
	}
	if e.Hidden > 0 {
		A, c, v := data(e.A), data(e.C), data(e.V)
		ps.pre = make([]float64, n*e.Hidden)
		ps.hidden = make([]float64, n*e.Hidden)
		for i := range n {
			hi := ps.h[i*e.K : (i+1)*e.K]
			for q := range e.Hidden {
				s := c[q]
				for j, hv := range hi {
					s += A[q*e.K+j] * hv
				}
				g := gelu(s)
				ps.pre[i*e.Hidden+q] = s
				ps.hidden[i*e.Hidden+q] = g
				z[i] += v[q] * g
			}
		}
	}
	return z, ps
}

// headParams are the parameters after the features: what online
// fine-tuning trains when the features are frozen.
func (e *LowRank) headParams() []*nn.Param {
	if e.Hidden == 0 {
		return []*nn.Param{e.U, e.B}
	}
	return []*nn.Param{e.U, e.A, e.C, e.V, e.B}
}

// backward accumulates ∂L/∂θ into the parameters' Grad given ∂L/∂z.
func (e *LowRank) backward(ps *lowRankPass, dz []float64) {
	n := ps.n
	u := data(e.U)
	dU, dB := gdata(e.U), gdata(e.B)
	dh := make([]float64, n*e.K)
	for i := range n {
		d := dz[i]
		dB[0] += d
		for j := range e.K {
			dU[j] += d * ps.h[i*e.K+j]
			dh[i*e.K+j] = d * u[j]
		}
	}
	if e.Hidden > 0 {
		A, v := data(e.A), data(e.V)
		dA, dC, dV := gdata(e.A), gdata(e.C), gdata(e.V)
		for i := range n {
			d := dz[i]
			for q := range e.Hidden {
				dV[q] += d * ps.hidden[i*e.Hidden+q]
				dp := d * v[q] * geluPrime(ps.pre[i*e.Hidden+q])
				dC[q] += dp
				for j := range e.K {
					dA[q*e.K+j] += dp * ps.h[i*e.K+j]
					dh[i*e.K+j] += dp * A[q*e.K+j]
				}
			}
		}
	}
	if ps.frames == nil {
		return // frozen features: no gradient for W
	}
	e.accumulateWGrad(ps.frames, dh)
}

// accumulateWGrad adds dhᵀ(x − μ) to W's gradient (K×P):
//
//	dW_kp += Σ_i dh_ik (x_ip − μ_p),  i = 0 … n−1 in order,
//
// each term rounded and added in frame order, a zero dh_ik skipped: what
// gonum's Gemm(Trans, NoTrans) did here block by block before (one
// AxpyUnitary per frame and feature), so the gradient is bitwise that of
// before (see features). The order of frames within one entry is all that
// fixes its bits, so the pixel columns are split over e.workers
// goroutines: a worker owns gradChunk columns of every row of dW, centres
// each frame's slice of them once and adds it to the K rows, which stay
// in cache.
func (e *LowRank) accumulateWGrad(frames [][]float64, dh []float64) {
	dW := gdata(e.W)
	chunks := (e.P + gradChunk - 1) / gradChunk
	workers := par.Count(e.workers, chunks)
	bufs := make([][]float64, workers)
	par.ForWorker(workers, chunks, func(w, c int) {
		if bufs[w] == nil {
			bufs[w] = make([]float64, gradChunk)
		}
		p0, p1 := c*gradChunk, min(e.P, (c+1)*gradChunk)
		x, mu := bufs[w][:p1-p0], e.Mean[p0:p1]
		for i, f := range frames {
			for j, v := range f[p0:p1] {
				x[j] = v - mu[j]
			}
			for k, d := range dh[i*e.K : (i+1)*e.K] {
				if d != 0 {
					floats.AddScaled(dW[k*e.P+p0:k*e.P+p1], d, x)
				}
			}
		}
	})
}

// gelu is x·Φ(x) with the exact normal CDF.
func gelu(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

func geluPrime(x float64) float64 {
	return 0.5*(1+math.Erf(x/math.Sqrt2)) + x*math.Exp(-0.5*x*x)/math.Sqrt(2*math.Pi)
}
