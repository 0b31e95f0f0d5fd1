// Package shiftscene renders small test clips of a dark block moving by a
// given displacement over a static smooth texture, at the frame size the
// estimator reads: the block's pixels are its exact area coverage at the
// displaced position, so sub-pixel motion is rendered exactly.
package shiftscene

import (
	"math"
	"math/rand/v2"

	"github.com/physd/physd/estimator"
)

// Clip renders a w×h clip at 1/dt fps of the block moved by d[t] pixels
// along (dx, dy), with Gaussian pixel noise of sd.
func Clip(w, h int, dt float64, d []float64, dx, dy, sd float64, seed uint64) estimator.Clip {
	rng := rand.New(rand.NewPCG(seed, 7))
	// A smooth texture: a sum of random low-frequency cosines.
	tex := make([]float64, w*h)
	for range 12 {
		fx, fy, ph, a := rng.Float64()*0.5, rng.Float64()*0.5, rng.Float64()*2*math.Pi, 0.03+0.03*rng.Float64()
		for y := range h {
			for x := range w {
				tex[y*w+x] += a * math.Cos(fx*float64(x)+fy*float64(y)+ph)
			}
		}
	}
	overlap := func(a0, a1, b0, b1 float64) float64 { return max(0, min(a1, b1)-max(a0, b0)) }
	x0, x1 := 0.35*float64(w), 0.6*float64(w)
	y0, y1 := 0.3*float64(h), 0.7*float64(h)
	c := estimator.Clip{W: w, H: h, Dt: dt}
	for _, s := range d {
		f := make([]float64, w*h)
		for y := range h {
			for x := range w {
				cov := overlap(float64(x), float64(x+1), x0+s*dx, x1+s*dx) * overlap(float64(y), float64(y+1), y0+s*dy, y1+s*dy)
				v := 0.6 + tex[y*w+x]
				v = v*(1-cov) + 0.15*cov
				f[y*w+x] = v + sd*rng.NormFloat64()
			}
		}
		c.Frames = append(c.Frames, f)
	}
	return c
}

// Decay is a free decay of amplitude a (pixels): n samples dt apart of
// z” + γ1 z' + γ0 z = 0 from rest at a, with γ1 = 2ζω, γ0 = ω², ω = 2πf.
func Decay(n int, dt, a, f, zeta float64) []float64 {
	w := 2 * math.Pi * f
	wd := w * math.Sqrt(1-zeta*zeta)
	d := make([]float64, n)
	for t := range d {
		s := float64(t) * dt
		d[t] = a * math.Exp(-zeta*w*s) * (math.Cos(wd*s) + zeta*w/wd*math.Sin(wd*s))
	}
	return d
}
