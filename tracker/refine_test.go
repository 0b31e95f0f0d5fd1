package tracker

import (
	"context"
	"math"
	"testing"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/sim"
)

// A plain block over texture ringing in two modes a few pixels wide is
// placed by its edges alone, at every fraction of a pixel: the path, less
// a gain, is the block's displacement to within 0.035 px rms — measured
// 0.016 and 0.031 px; the parabola through the match scores alone, 0.054
// and 0.064, its error following the fraction: the distortion that hid a
// weak second mode.
func TestRefinePlacesAPlainBlock(t *testing.T) {
	for _, amp := range []float64{1.5, 3} {
		s := sim.Structure{Seed: 3, FPS: 30, Duration: 8, W: 80, H: 80,
			Modes: []sim.Mode{{Fn: 1, Zeta: 0.01, AmplitudePx: amp}, {Fn: 2.7, Zeta: 0.02, AmplitudePx: amp / 3}}}
		imgs, d, err := sim.RenderStructure(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		frames := make([][]float64, len(imgs))
		for i, im := range imgs {
			f := make([]float64, len(im.Pix))
			for j, v := range im.Pix {
				f[j] = float64(v) / 255
			}
			frames[i] = f
		}
		clips := []estimator.Clip{{W: s.W, H: s.H, Frames: frames, Dt: 1 / s.FPS}}
		paths, err := Follow(context.Background(), clips, Options{})
		if err != nil {
			t.Fatal(err)
		}
		best := -1.0
		for _, p := range paths {
			if len(p.Pos) != 1 || len(p.Pos[0]) < len(frames)*3/4 {
				continue
			}
			z := p.Latents()[0]
			truth := d[p.First[0] : p.First[0]+len(z)]
			rms := fitRMS(z, truth)
			t.Logf("%.1f px: %s: %.4f px rms from the displacement", amp, p.Name(), rms)
			if best < 0 || rms < best {
				best = rms
			}
		}
		if best < 0 {
			t.Fatalf("%.1f px: no path through the clip", amp)
		}
		if best > 0.035 {
			t.Errorf("%.1f px: the best path is %.4f px rms from the displacement, want ≤ 0.035", amp, best)
		}
	}
}

// fitRMS is the rms of z − (a·x + b), a and b fitted by least squares.
func fitRMS(z, x []float64) float64 {
	n := float64(len(z))
	var sx, sz, sxx, sxz float64
	for i := range z {
		sx += x[i]
		sz += z[i]
		sxx += x[i] * x[i]
		sxz += x[i] * z[i]
	}
	a := (sxz - sx*sz/n) / (sxx - sx*sx/n)
	b := (sz - a*sx) / n
	var e2 float64
	for i := range z {
		e := z[i] - a*x[i] - b
		e2 += e * e
	}
	return math.Sqrt(e2 / n)
}

// binomial is the separable ¼[1 2 1] kernel with the border replicated,
// the 3×3 sum written out.
func TestBinomial(t *testing.T) {
	for _, sz := range [][2]int{{7, 5}, {2, 3}, {1, 4}} {
		w, h := sz[0], sz[1]
		f := make([]float64, w*h)
		for i := range f {
			f[i] = math.Sin(float64(i*i) * 0.37)
		}
		got := binomial(f, w, h)
		at := func(x, y int) float64 { return f[min(max(y, 0), h-1)*w+min(max(x, 0), w-1)] }
		for y := range h {
			for x := range w {
				var want float64
				for dy := -1; dy <= 1; dy++ {
					for dx := -1; dx <= 1; dx++ {
						want += float64((2-abs(dx))*(2-abs(dy))) / 16 * at(x+dx, y+dy)
					}
				}
				if w < 2 || h < 2 {
					want = f[y*w+x]
				}
				if math.Abs(got[y*w+x]-want) > 1e-12 {
					t.Fatalf("%d×%d at (%d, %d): %g, want %g", w, h, x, y, got[y*w+x], want)
				}
			}
		}
	}
}
