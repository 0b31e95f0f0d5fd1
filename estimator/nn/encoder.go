package nn

import (
	"fmt"
	"math/rand/v2"
)

// NewPaperEncoder returns the per-frame encoder of the paper as a
// Sequential mapping frames (N, 1, H, W) to latents (N, 1):
//
//	for block b with width w_b (stride s_b = 2 for every block but the last):
//	  Conv2D 3×3 (stride s_b, pad 1) → BatchNorm2D → GELU →
//	  Conv2D 3×3 (stride 1,  pad 1) → BatchNorm2D → GELU
//	GlobalAvgPool → Dense(w_last, hidden) → GELU → Dense(hidden, 1).
//
// widths defaults to {32, 64, 128} when empty and hidden to 128 when ≤ 0,
// which gives the paper's three blocks (stride 2, 2, 1). Parameter names
// are "block<b>.conv<i>.*", "block<b>.bn<i>.*" (b, i from 1), "fc1.*" and
// "fc2.*". It panics if a width is not positive.
func NewPaperEncoder(rng *rand.Rand, widths []int, hidden int) *Sequential {
	if len(widths) == 0 {
		widths = []int{32, 64, 128}
	}
	if hidden <= 0 {
		hidden = 128
	}
	var layers []Layer
	in := 1
	for b, w := range widths {
		stride := 2
		if b == len(widths)-1 {
			stride = 1
		}
		prefix := fmt.Sprintf("block%d", b+1)
		layers = append(layers,
			NewConv2D(rng, prefix+".conv1", in, w, 3, stride, 1),
			NewBatchNorm2D(prefix+".bn1", w),
			NewGELU(),
			NewConv2D(rng, prefix+".conv2", w, w, 3, 1, 1),
			NewBatchNorm2D(prefix+".bn2", w),
			NewGELU(),
		)
		in = w
	}
	layers = append(layers,
		NewGlobalAvgPool(),
		NewDense(rng, "fc1", in, hidden),
		NewGELU(),
		NewDense(rng, "fc2", hidden, 1),
	)
	return NewSequential(layers...)
}
