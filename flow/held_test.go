package flow

import (
	"math"
	"testing"

	"github.com/physd/physd/internal/shiftscene"
)

// HeldShare counts the frames whose moving pixels repeat the previous
// frame exactly, as a codec's skipped blocks make them, and nothing else:
// noise alone never repeats, a frame held as a whole does, and so does
// one where only the still background changed (the moving pixels are
// what is tested).
func TestHeldShare(t *testing.T) {
	const n, dt = 180, 1.0 / 30
	c := shiftscene.Clip(64, 64, dt, shiftscene.Decay(n, dt, 0.5, 2, 0.01), 1, 0, 0.01, 3)
	if s := HeldShare(c.Frames); s != 0 {
		t.Errorf("a noisy decay: held share %.3f, want 0", s)
	}
	// The codec holds the last 72 frames: each a copy of frame 107, but
	// for fresh noise on the still texture of the view's top rows
	// (a codec refreshing the background).
	held := make([][]float64, n)
	for k, f := range c.Frames {
		if k < 108 {
			held[k] = f
			continue
		}
		g := append([]float64(nil), c.Frames[107]...)
		for i := range 64 * 4 {
			g[i] += 0.01 * math.Sin(float64(k*i))
		}
		held[k] = g
	}
	if s, want := HeldShare(held), 72.0/179; math.Abs(s-want) > 1e-9 {
		t.Errorf("72 of 179 frames held: share %.4f, want %.4f", s, want)
	}
	if s := HeldShare(held[:1]); s != 0 {
		t.Errorf("one frame: %g", s)
	}
	still := [][]float64{make([]float64, 16), make([]float64, 16), make([]float64, 16)}
	if s := HeldShare(still); s != 0 {
		t.Errorf("frames that never change have no moving pixels: %g", s)
	}
}
