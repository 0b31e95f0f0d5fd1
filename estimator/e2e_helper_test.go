package estimator

import (
	"context"
	"image"
	"testing"

	"github.com/physd/physd/sim"
)

// renderClips renders scenes and box-downsamples them to size×size, the
// way the stream package's area resize would.
func renderClips(t testing.TB, scenes []sim.Scene, size int) []Clip {
	t.Helper()
	frames, _, err := sim.RenderSet(context.Background(), scenes)
	if err != nil {
		t.Fatal(err)
	}
	var clips []Clip
	for m, fs := range frames {
		c := Clip{W: size, H: size, Dt: 1 / scenes[m].FPS}
		for _, f := range fs {
			c.Frames = append(c.Frames, downsample(f, size))
		}
		clips = append(clips, c)
	}
	return clips
}

func downsample(g *image.Gray, size int) []float64 {
	n := g.Rect.Dx()
	f := n / size
	out := make([]float64, size*size)
	for y := range size {
		for x := range size {
			var s float64
			for dy := range f {
				for dx := range f {
					s += float64(g.Pix[(y*f+dy)*g.Stride+x*f+dx])
				}
			}
			out[y*size+x] = s / float64(f*f) / 255
		}
	}
	return out
}
