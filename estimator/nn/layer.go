package nn

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"gorgonia.org/tensor"
)

// ErrShape is wrapped by every error about an input or gradient tensor with
// the wrong shape, rank, dtype or memory layout.
var ErrShape = errors.New("nn: bad tensor shape")

// ErrNoForward is wrapped by errors from Backward called without a preceding
// successful Forward.
var ErrNoForward = errors.New("nn: Backward called before Forward")

// Layer is one differentiable stage of a network.
//
// Activation layout is (N, C, H, W) for images and (N, F) for vectors.
// Forward computes y = f(x) and caches what Backward needs; train selects
// training behaviour (batch statistics in BatchNorm2D). Backward takes
// dL/dy, shaped like the last Forward output, returns dL/dx, shaped like the
// last Forward input, and accumulates dL/dθ into Param.Grad for every
// trainable parameter θ.
type Layer interface {
	Forward(x *tensor.Dense, train bool) (*tensor.Dense, error)
	Backward(dy *tensor.Dense) (*tensor.Dense, error)
	Params() []*Param
}

// Stateful is implemented by layers that carry non-trainable state that
// must be checkpointed, such as BatchNorm2D running statistics. Buffers
// returns Params whose Grad is nil.
type Stateful interface {
	Buffers() []*Param
}

// Param is a named tensor of a layer. Value holds the current values; Grad
// has the same shape and accumulates dL/dValue, or is nil for non-trainable
// state (see Stateful). Name is unique within a model and is the key used
// by SaveParams and LoadParams.
type Param struct {
	Name        string
	Value, Grad *tensor.Dense
}

// newParam returns a trainable Param with zero Value and Grad of the given shape.
func newParam(name string, shape ...int) *Param {
	return &Param{Name: name, Value: zeros(shape...), Grad: zeros(shape...)}
}

// newBuffer returns a non-trainable Param (nil Grad) of the given shape.
func newBuffer(name string, shape ...int) *Param {
	return &Param{Name: name, Value: zeros(shape...)}
}

// ZeroGrad sets every element of every non-nil Grad to 0.
func ZeroGrad(params []*Param) {
	for _, p := range params {
		if p == nil || p.Grad == nil {
			continue
		}
		clear(p.Grad.Data().([]float64))
	}
}

// NumParams returns the total number of scalars Σ_p |p.Value| over params.
// Pass Layer.Params() to count trainable parameters only.
func NumParams(params []*Param) int {
	n := 0
	for _, p := range params {
		if p != nil && p.Value != nil {
			n += p.Value.Shape().TotalSize()
		}
	}
	return n
}

// CheckpointParams returns l.Params() followed by l.Buffers() when l is
// Stateful: everything needed to restore l with LoadParams.
func CheckpointParams(l Layer) []*Param {
	ps := append([]*Param(nil), l.Params()...)
	if s, ok := l.(Stateful); ok {
		ps = append(ps, s.Buffers()...)
	}
	return ps
}

// Sequential applies Layers in order: y = L_{k-1}(…L_1(L_0(x))). It is
// itself a Layer and Stateful.
type Sequential struct {
	Layers []Layer
}

// NewSequential returns a Sequential of the given layers.
func NewSequential(layers ...Layer) *Sequential {
	return &Sequential{Layers: layers}
}

// Forward feeds x through every layer in order.
func (s *Sequential) Forward(x *tensor.Dense, train bool) (*tensor.Dense, error) {
	var err error
	for i, l := range s.Layers {
		if x, err = l.Forward(x, train); err != nil {
			return nil, fmt.Errorf("nn: Sequential layer %d forward: %w", i, err)
		}
	}
	return x, nil
}

// Backward propagates dy through the layers in reverse order
// (chain rule: dL/dx_i = J_iᵀ dL/dx_{i+1}) and returns dL/dx.
func (s *Sequential) Backward(dy *tensor.Dense) (*tensor.Dense, error) {
	var err error
	for i := len(s.Layers) - 1; i >= 0; i-- {
		if dy, err = s.Layers[i].Backward(dy); err != nil {
			return nil, fmt.Errorf("nn: Sequential layer %d backward: %w", i, err)
		}
	}
	return dy, nil
}

// Params returns the trainable parameters of all layers, in layer order.
func (s *Sequential) Params() []*Param {
	var ps []*Param
	for _, l := range s.Layers {
		ps = append(ps, l.Params()...)
	}
	return ps
}

// Buffers returns the non-trainable state of all Stateful layers, in layer order.
func (s *Sequential) Buffers() []*Param {
	var ps []*Param
	for _, l := range s.Layers {
		if st, ok := l.(Stateful); ok {
			ps = append(ps, st.Buffers()...)
		}
	}
	return ps
}

// zeros returns a new Float64 tensor of the given shape filled with 0.
func zeros(shape ...int) *tensor.Dense {
	return fromSlice(make([]float64, prod(shape)), shape...)
}

// fromSlice wraps data (row-major, len = Π shape) as a tensor without copying.
func fromSlice(data []float64, shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(append([]int(nil), shape...)...), tensor.WithBacking(data))
}

func prod(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// float64Data validates that x is a usable Float64 tensor whose rank lies
// in [minRank, maxRank] with all dimensions ≥ 1, and returns its shape and
// its row-major data. Views are copied into a contiguous tensor, because
// the kernels index the backing slice directly.
func float64Data(layer, what string, x *tensor.Dense, minRank, maxRank int) ([]int, []float64, error) {
	if x == nil {
		return nil, nil, fmt.Errorf("%s: %s is nil: %w", layer, what, ErrShape)
	}
	shape := []int(x.Shape().Clone())
	if x.Dtype() != tensor.Float64 {
		return nil, nil, fmt.Errorf("%s: %s has dtype %v, want float64: %w", layer, what, x.Dtype(), ErrShape)
	}
	if len(shape) < minRank || len(shape) > maxRank {
		want := fmt.Sprintf("rank %d", minRank)
		if maxRank != minRank {
			want = fmt.Sprintf("rank >= %d", minRank)
		}
		return nil, nil, fmt.Errorf("%s: %s has shape %v, want %s: %w", layer, what, shape, want, ErrShape)
	}
	for _, d := range shape {
		if d < 1 {
			return nil, nil, fmt.Errorf("%s: %s has shape %v, want all dimensions >= 1: %w", layer, what, shape, ErrShape)
		}
	}
	if x.DataOrder().IsColMajor() {
		return nil, nil, fmt.Errorf("%s: %s of shape %v is column-major, want row-major: %w", layer, what, shape, ErrShape)
	}
	if x.IsMaterializable() || x.RequiresIterator() {
		m, ok := x.Materialize().(*tensor.Dense)
		if !ok || m.IsMaterializable() {
			return nil, nil, fmt.Errorf("%s: %s of shape %v is a view that cannot be materialised: %w", layer, what, shape, ErrShape)
		}
		x = m
	}
	data, ok := x.Data().([]float64)
	if !ok || len(data) != prod(shape) {
		return nil, nil, fmt.Errorf("%s: %s of shape %v has %d backing elements, want %d: %w", layer, what, shape, len(data), prod(shape), ErrShape)
	}
	return shape, data, nil
}

// anyRank is a maxRank for float64Data that accepts any rank.
const anyRank = math.MaxInt

// sameShape reports whether a and b are equal.
func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// numWorkers returns how many goroutines to use for n independent items.
func numWorkers(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n))
}

// parallelRange splits [0, n) into w = numWorkers(n) contiguous chunks and
// runs fn(worker, lo, hi) for each, concurrently, returning when all finish.
// Chunk boundaries depend only on n and w, so reductions done per worker and
// then summed in worker order are deterministic for a fixed GOMAXPROCS.
func parallelRange(n int, fn func(worker, lo, hi int)) {
	w := numWorkers(n)
	if w == 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for i := range w {
		lo, hi := i*n/w, (i+1)*n/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(i, lo, hi)
		}()
	}
	wg.Wait()
}

// elementwiseGrain is the minimum chunk size for parallel element-wise loops;
// smaller tensors are processed inline since goroutine start-up would dominate.
const elementwiseGrain = 1 << 14

// parallelElements runs fn over [0, n) in chunks of at least elementwiseGrain.
func parallelElements(n int, fn func(lo, hi int)) {
	chunks := (n + elementwiseGrain - 1) / elementwiseGrain
	if chunks <= 1 || runtime.GOMAXPROCS(0) == 1 {
		fn(0, n)
		return
	}
	parallelRange(chunks, func(_, lo, hi int) {
		fn(lo*n/chunks, hi*n/chunks)
	})
}
