package tracker

import (
	"context"
	"testing"

	"github.com/physd/physd/estimator"
)

// FuzzFollow: any frames — sizes down to one pixel, flat, noisy, a
// spot that jumps or leaves — give paths or an error, never a panic;
// every position found lies where the template fits in the frame, or
// past its border by no more than refine may carry a template pressed
// against it (refineReach beyond the search's half pixel), and a
// path is a run of frames of the clip (an object lost midway is read up
// to where it was lost).
func FuzzFollow(f *testing.F) {
	f.Add(uint8(20), uint8(30), uint8(12), []byte{0, 255, 30, 200, 7, 9, 180, 3})
	f.Add(uint8(1), uint8(1), uint8(8), []byte{1})
	f.Add(uint8(9), uint8(9), uint8(10), []byte{255, 0})
	f.Fuzz(func(t *testing.T, w8, h8, n8 uint8, seed []byte) {
		w, h, n := int(w8%40)+1, int(h8%40)+1, int(n8%30)+1
		if len(seed) == 0 {
			seed = []byte{0}
		}
		frames := make([][]float64, n)
		k := 0
		for i := range frames {
			frames[i] = make([]float64, w*h)
			// A dark spot at a position the bytes choose, on a ramp.
			sx, sy := int(seed[k%len(seed)])%w, int(seed[(k+1)%len(seed)])%h
			k += 2
			for j := range frames[i] {
				x, y := j%w, j/w
				frames[i][j] = 0.5 + 0.01*float64(x+y)
				if (x-sx)*(x-sx)+(y-sy)*(y-sy) <= 4 {
					frames[i][j] = 0.1
				}
			}
		}
		paths, err := Follow(context.Background(), []estimator.Clip{{W: w, H: h, Frames: frames, Dt: 0.05}}, Options{})
		if err != nil {
			return
		}
		for _, p := range paths {
			for _, q := range p.Pos[0] {
				const out = 0.5 + refineReach
				if q.X < -out || q.Y < -out || q.X > float64(w-p.Box.W)+out || q.Y > float64(h-p.Box.H)+out {
					t.Fatalf("%d×%d: template %+v found at %+v", w, h, p.Box, q)
				}
			}
			// The run it was followed through lies in the clip, is long
			// enough to fit, and has a latent per position.
			if got := len(p.Latents()[0]); p.First[0] < 0 || p.First[0]+len(p.Pos[0]) > n || len(p.Pos[0]) < estimator.MinFrames || got != len(p.Pos[0]) {
				t.Fatalf("run from frame %d of %d positions in %d frames, %d latents", p.First[0], len(p.Pos[0]), n, got)
			}
		}
	})
}
