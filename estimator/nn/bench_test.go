package nn

import (
	"testing"
)

// BenchmarkPaperEncoderStep measures one training step's forward and
// backward pass (no optimiser update) of the paper encoder, widths
// {32, 64, 128} and hidden 128, on a batch of 94 frames of 1×64×64.
func BenchmarkPaperEncoderStep(b *testing.B) {
	rng := newRNG(1)
	enc := NewPaperEncoder(rng, []int{32, 64, 128}, 128)
	x := randTensor(rng, 1, 94, 1, 64, 64)
	dy := randTensor(rng, 1, 94, 1)
	params := enc.Params()
	b.ResetTimer()
	for b.Loop() {
		ZeroGrad(params)
		if _, err := enc.Forward(x, true); err != nil {
			b.Fatal(err)
		}
		if _, err := enc.Backward(dy); err != nil {
			b.Fatal(err)
		}
	}
}
