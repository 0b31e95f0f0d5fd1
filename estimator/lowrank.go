package estimator

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gorgonia.org/tensor"

	"github.com/physd/physd/estimator/nn"
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

// centredBlock is how many frames are centred at a time. The features and
// W's gradient are block products over a buffer of this many frames, not
// over a centred copy of the whole window, which every training step
// would otherwise allocate (3 MB for 94 frames of 64×64) and which set
// the estimator's peak memory.
const centredBlock = 16

// eachBlock calls fn with consecutive blocks of centred frames, starting
// at frame i0; x is only valid during the call. Frame sizes must have
// been checked.
func (e *LowRank) eachBlock(frames [][]float64, fn func(i0 int, x blas64.General)) {
	rows := min(centredBlock, len(frames))
	buf := make([]float64, rows*e.P)
	for i0 := 0; i0 < len(frames); i0 += rows {
		r := min(rows, len(frames)-i0)
		for i, f := range frames[i0 : i0+r] {
			row := buf[i*e.P : (i+1)*e.P]
			for j, v := range f {
				row[j] = v - e.Mean[j]
			}
		}
		fn(i0, blas64.General{Rows: r, Cols: e.P, Stride: e.P, Data: buf[:r*e.P]})
	}
}

func (e *LowRank) features(frames [][]float64) []float64 {
	h := make([]float64, len(frames)*e.K)
	w := blas64.General{Rows: e.K, Cols: e.P, Stride: e.P, Data: data(e.W)}
	e.eachBlock(frames, func(i0 int, x blas64.General) {
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, x, w,
			0, blas64.General{Rows: x.Rows, Cols: e.K, Stride: e.K, Data: h[i0*e.K : (i0+x.Rows)*e.K]})
	})
	return h
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
	// dW += dhᵀ (x − μ)
	dW := blas64.General{Rows: e.K, Cols: e.P, Stride: e.P, Data: gdata(e.W)}
	e.eachBlock(ps.frames, func(i0 int, x blas64.General) {
		blas64.Gemm(blas.Trans, blas.NoTrans, 1,
			blas64.General{Rows: x.Rows, Cols: e.K, Stride: e.K, Data: dh[i0*e.K : (i0+x.Rows)*e.K]},
			x, 1, dW)
	})
}

// gelu is x·Φ(x) with the exact normal CDF.
func gelu(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

func geluPrime(x float64) float64 {
	return 0.5*(1+math.Erf(x/math.Sqrt2)) + x*math.Exp(-0.5*x*x)/math.Sqrt(2*math.Pi)
}
