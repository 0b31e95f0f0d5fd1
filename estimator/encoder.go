package estimator

import "github.com/physd/physd/estimator/nn"

// Encoder maps frames to one scalar latent each. Implementations are
// trainable: Params exposes the weights a caller may checkpoint or update.
type Encoder interface {
	Encode(frames [][]float64) ([]float64, error)
	Params() []*nn.Param
}

// network is an Encoder that can also run a training pass: pass returns
// the latents and a function that accumulates ∂L/∂θ given ∂L/∂z.
type network interface {
	Encoder
	pass(frames [][]float64) (z []float64, back func(dz []float64) error, err error)
}

func (e *LowRank) pass(frames [][]float64) ([]float64, func([]float64) error, error) {
	z, ps, err := e.forward(frames)
	if err != nil {
		return nil, nil, err
	}
	return z, func(dz []float64) error { e.backward(ps, dz); return nil }, nil
}
