package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gorgonia.org/tensor"
)

// Dense is a fully connected layer mapping x (N, In) to
//
//	y = x·W + 1·bᵀ,  y[n,j] = b[j] + Σ_i x[n,i]·W[i,j],
//
// of shape (N, Out). Weight has shape (In, Out) (note: the transpose of the
// PyTorch layout, so the forward product needs no transpose) and Bias (Out).
type Dense struct {
	Name         string
	In, Out      int
	Weight, Bias *Param

	x     []float64 // Forward input, referenced not copied
	n     int
	ready bool
}

// NewDense returns a Dense layer with He normal weights W ~ N(0, 2/In) and
// zero bias. Parameter names are name+".weight" and name+".bias". It panics
// if in or out is not positive.
func NewDense(rng *rand.Rand, name string, in, out int) *Dense {
	if in < 1 || out < 1 {
		panic(fmt.Sprintf("nn: NewDense %q: invalid sizes in=%d out=%d", name, in, out))
	}
	d := &Dense{
		Name: name, In: in, Out: out,
		Weight: newParam(name+".weight", in, out),
		Bias:   newParam(name+".bias", out),
	}
	std := math.Sqrt(2 / float64(in))
	w := d.Weight.Value.Data().([]float64)
	for i := range w {
		w[i] = std * rng.NormFloat64()
	}
	return d
}

// Params returns Weight and Bias.
func (d *Dense) Params() []*Param { return []*Param{d.Weight, d.Bias} }

func (d *Dense) who() string { return fmt.Sprintf("nn: Dense %q", d.Name) }

// Forward maps x (N, In) to y (N, Out).
func (d *Dense) Forward(x *tensor.Dense, train bool) (*tensor.Dense, error) {
	d.ready = false
	shape, xd, err := float64Data(d.who(), "input", x, 2, 2)
	if err != nil {
		return nil, err
	}
	if shape[1] != d.In {
		return nil, fmt.Errorf("%s: input shape %v, want (N, %d): %w", d.who(), shape, d.In, ErrShape)
	}
	n := shape[0]
	y := make([]float64, n*d.Out)
	bd := d.Bias.Value.Data().([]float64)
	for i := 0; i < n; i++ {
		copy(y[i*d.Out:(i+1)*d.Out], bd)
	}
	gemm(blas.NoTrans, blas.NoTrans, n, d.Out, d.In, xd, d.In, d.Weight.Value.Data().([]float64), d.Out, 1, y, d.Out)
	d.x, d.n, d.ready = xd, n, true
	return fromSlice(y, n, d.Out), nil
}

// Backward takes dy (N, Out) and returns dx = dy·Wᵀ (N, In), accumulating
// dW += xᵀ·dy and db[j] += Σ_n dy[n,j].
func (d *Dense) Backward(dy *tensor.Dense) (*tensor.Dense, error) {
	if !d.ready {
		return nil, fmt.Errorf("%s: %w", d.who(), ErrNoForward)
	}
	shape, dyd, err := float64Data(d.who(), "output gradient", dy, 2, 2)
	if err != nil {
		return nil, err
	}
	if want := []int{d.n, d.Out}; !sameShape(shape, want) {
		return nil, fmt.Errorf("%s: output gradient shape %v, want %v: %w", d.who(), shape, want, ErrShape)
	}
	gemm(blas.Trans, blas.NoTrans, d.In, d.Out, d.n, d.x, d.In, dyd, d.Out, 1, d.Weight.Grad.Data().([]float64), d.Out)
	gb := d.Bias.Grad.Data().([]float64)
	for i := 0; i < d.n; i++ {
		for j, v := range dyd[i*d.Out : (i+1)*d.Out] {
			gb[j] += v
		}
	}
	dx := make([]float64, d.n*d.In)
	gemm(blas.NoTrans, blas.Trans, d.n, d.In, d.Out, dyd, d.Out, d.Weight.Value.Data().([]float64), d.Out, 0, dx, d.In)
	return fromSlice(dx, d.n, d.In), nil
}
