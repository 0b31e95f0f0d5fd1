package nn

import (
	"fmt"

	"gorgonia.org/tensor"
)

// GlobalAvgPool averages each channel over space:
//
//	y[n,c] = (1/(H·W)) Σ_{h,w} x[n,c,h,w],
//
// mapping (N, C, H, W) to (N, C). Its gradient spreads dy[n,c]/(H·W)
// uniformly over the H·W positions.
type GlobalAvgPool struct {
	shape []int
	ready bool
}

// NewGlobalAvgPool returns a GlobalAvgPool layer.
func NewGlobalAvgPool() *GlobalAvgPool { return &GlobalAvgPool{} }

// Params returns nil: pooling has no parameters.
func (p *GlobalAvgPool) Params() []*Param { return nil }

// Forward maps x (N, C, H, W) to y (N, C).
func (p *GlobalAvgPool) Forward(x *tensor.Dense, train bool) (*tensor.Dense, error) {
	p.ready = false
	shape, xd, err := float64Data("nn: GlobalAvgPool", "input", x, 4, 4)
	if err != nil {
		return nil, err
	}
	nc, hw := shape[0]*shape[1], shape[2]*shape[3]
	y := make([]float64, nc)
	inv := 1 / float64(hw)
	for i := range y {
		sum := 0.0
		for _, v := range xd[i*hw : (i+1)*hw] {
			sum += v
		}
		y[i] = sum * inv
	}
	p.shape, p.ready = shape, true
	return fromSlice(y, shape[0], shape[1]), nil
}

// Backward maps dy (N, C) to dx (N, C, H, W) with dx[n,c,h,w] = dy[n,c]/(H·W).
func (p *GlobalAvgPool) Backward(dy *tensor.Dense) (*tensor.Dense, error) {
	if !p.ready {
		return nil, fmt.Errorf("nn: GlobalAvgPool: %w", ErrNoForward)
	}
	shape, dyd, err := float64Data("nn: GlobalAvgPool", "output gradient", dy, 2, 2)
	if err != nil {
		return nil, err
	}
	if want := p.shape[:2]; !sameShape(shape, want) {
		return nil, fmt.Errorf("nn: GlobalAvgPool: output gradient shape %v, want %v: %w", shape, want, ErrShape)
	}
	hw := p.shape[2] * p.shape[3]
	inv := 1 / float64(hw)
	dx := make([]float64, len(dyd)*hw)
	for i, d := range dyd {
		fill(dx[i*hw:(i+1)*hw], d*inv)
	}
	return fromSlice(dx, p.shape...), nil
}

// Flatten reshapes (N, d1, …, dk) to (N, d1·…·dk) without changing the
// row-major order of the data; Backward restores the input shape.
type Flatten struct {
	shape []int
	ready bool
}

// NewFlatten returns a Flatten layer.
func NewFlatten() *Flatten { return &Flatten{} }

// Params returns nil: Flatten has no parameters.
func (f *Flatten) Params() []*Param { return nil }

// Forward returns a copy of x with shape (N, Π_{i≥1} d_i).
func (f *Flatten) Forward(x *tensor.Dense, train bool) (*tensor.Dense, error) {
	f.ready = false
	shape, xd, err := float64Data("nn: Flatten", "input", x, 2, anyRank)
	if err != nil {
		return nil, err
	}
	f.shape, f.ready = shape, true
	// Copy so the result never aliases the caller's tensor.
	return fromSlice(append([]float64(nil), xd...), shape[0], len(xd)/shape[0]), nil
}

// Backward reshapes dy (N, F) back to the Forward input shape.
func (f *Flatten) Backward(dy *tensor.Dense) (*tensor.Dense, error) {
	if !f.ready {
		return nil, fmt.Errorf("nn: Flatten: %w", ErrNoForward)
	}
	shape, dyd, err := float64Data("nn: Flatten", "output gradient", dy, 2, 2)
	if err != nil {
		return nil, err
	}
	if want := []int{f.shape[0], prod(f.shape[1:])}; !sameShape(shape, want) {
		return nil, fmt.Errorf("nn: Flatten: output gradient shape %v, want %v: %w", shape, want, ErrShape)
	}
	return fromSlice(append([]float64(nil), dyd...), f.shape...), nil
}
