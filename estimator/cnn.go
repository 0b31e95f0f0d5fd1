package estimator

import (
	"fmt"
	"math/rand/v2"

	"gorgonia.org/tensor"

	"github.com/physd/physd/estimator/nn"
)

// cnn adapts the paper's per-frame CNN (nn.NewPaperEncoder) to network:
// frames become one batch (N, 1, H, W), so BatchNorm statistics are taken
// over the whole window, as in the paper's full-window steps.
type cnn struct {
	w, h int
	net  *nn.Sequential
}

func newCNN(rng *rand.Rand, p Preset, w, h int) *cnn {
	return &cnn{w: w, h: h, net: nn.NewPaperEncoder(rng, p.CNNWidths, p.CNNHidden)}
}

// Params returns the CNN's trainable parameters.
func (c *cnn) Params() []*nn.Param { return c.net.Params() }

func (c *cnn) batch(frames [][]float64) (*tensor.Dense, error) {
	px := c.w * c.h
	buf := make([]float64, len(frames)*px)
	for i, f := range frames {
		if len(f) != px {
			return nil, fmt.Errorf("cnn encoder: frame %d has %d pixels, want %d×%d", i, len(f), c.w, c.h)
		}
		copy(buf[i*px:], f)
	}
	return tensor.New(tensor.WithShape(len(frames), 1, c.h, c.w), tensor.WithBacking(buf)), nil
}

// Encode returns one latent per frame, with batch statistics in BatchNorm
// (the window is the batch, as in training).
func (c *cnn) Encode(frames [][]float64) ([]float64, error) {
	z, _, err := c.pass(frames)
	return z, err
}

func (c *cnn) pass(frames [][]float64) ([]float64, func([]float64) error, error) {
	x, err := c.batch(frames)
	if err != nil {
		return nil, nil, err
	}
	y, err := c.net.Forward(x, true)
	if err != nil {
		return nil, nil, fmt.Errorf("cnn encoder: %w", err)
	}
	z := append([]float64(nil), y.Data().([]float64)...)
	back := func(dz []float64) error {
		dy := tensor.New(tensor.WithShape(len(dz), 1), tensor.WithBacking(append([]float64(nil), dz...)))
		_, err := c.net.Backward(dy)
		return err
	}
	return z, back, nil
}
