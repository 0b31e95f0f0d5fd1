package tracker

import (
	"context"
	"testing"

	"github.com/physd/physd/estimator"
)

// BenchmarkFollow follows the objects of a daemon-sized window: 180
// frames (6 s at 30 fps) of 64×64, a swinging disc among four still
// ones.
func BenchmarkFollow(b *testing.B) {
	const w, h, dt = 64, 64, 1.0 / 30
	ys := damped(180, dt, 32, 20, 0.3, 20)
	frames := scene(w, h, 4, 32, ys, 0.005, 1)
	for _, f := range frames {
		for _, c := range [][2]int{{8, 8}, {54, 10}, {10, 52}, {52, 54}} {
			for y := c[1] - 3; y < c[1]+3; y++ {
				for x := c[0] - 3; x < c[0]+3; x++ {
					f[y*w+x] = 0.2
				}
			}
		}
	}
	clips := []estimator.Clip{{W: w, H: h, Frames: frames, Dt: dt}}
	b.ResetTimer()
	for range b.N {
		if _, err := Follow(context.Background(), clips, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
