package nn

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"
)

// GELU is the exact Gaussian error linear unit, applied element-wise to a
// tensor of any rank ≥ 2:
//
//	y = x·Φ(x),  Φ(x) = ½(1 + erf(x/√2)),
//	dy/dx = Φ(x) + x·φ(x),  φ(x) = exp(−x²/2)/√(2π).
type GELU struct {
	x     []float64 // Forward input, referenced not copied
	shape []int
	ready bool
}

// NewGELU returns a GELU layer.
func NewGELU() *GELU { return &GELU{} }

// Params returns nil: GELU has no parameters.
func (g *GELU) Params() []*Param { return nil }

// Forward returns x·Φ(x) with the shape of x.
func (g *GELU) Forward(x *tensor.Dense, train bool) (*tensor.Dense, error) {
	g.ready = false
	shape, xd, err := float64Data("nn: GELU", "input", x, 2, anyRank)
	if err != nil {
		return nil, err
	}
	y := make([]float64, len(xd))
	parallelElements(len(xd), func(lo, hi int) {
		for i, v := range xd[lo:hi] {
			y[lo+i] = v * 0.5 * (1 + math.Erf(v/math.Sqrt2))
		}
	})
	g.x, g.shape, g.ready = xd, shape, true
	return fromSlice(y, shape...), nil
}

// Backward returns dx = dy·(Φ(x) + x·φ(x)). Φ is recomputed rather than
// cached to avoid holding another activation-sized buffer per layer.
func (g *GELU) Backward(dy *tensor.Dense) (*tensor.Dense, error) {
	if !g.ready {
		return nil, fmt.Errorf("nn: GELU: %w", ErrNoForward)
	}
	shape, dyd, err := float64Data("nn: GELU", "output gradient", dy, 2, anyRank)
	if err != nil {
		return nil, err
	}
	if !sameShape(shape, g.shape) {
		return nil, fmt.Errorf("nn: GELU: output gradient shape %v, want %v: %w", shape, g.shape, ErrShape)
	}
	const invSqrt2Pi = 0.3989422804014327 // 1/√(2π)
	dx := make([]float64, len(dyd))
	parallelElements(len(dyd), func(lo, hi int) {
		for i, v := range g.x[lo:hi] {
			cdf := 0.5 * (1 + math.Erf(v/math.Sqrt2))
			pdf := invSqrt2Pi * math.Exp(-0.5*v*v)
			dx[lo+i] = dyd[lo+i] * (cdf + v*pdf)
		}
	})
	return fromSlice(dx, shape...), nil
}
