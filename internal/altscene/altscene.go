// Package altscene renders oscillators with a renderer independent of
// package sim's: other geometry, other anti-aliasing (supersampling, not
// signed-distance coverage), textured backgrounds. Tests judge the
// estimator and its certificate on these scenes, so that nothing tuned to
// sim's pictures passes unnoticed.
package altscene

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"

	"github.com/physd/physd/sim"
)

// Motion is one free response of z” + γ1 z' + γ0 z = 0 sampled at FPS
// for Seconds, from the state (Z0, V0).
type Motion struct {
	Gamma1, Gamma0 float64
	Z0, V0         float64
	FPS, Seconds   float64
}

// States returns the sampled trajectory z(k/FPS), k = 0 … ⌊Seconds·FPS⌋−1.
func (m Motion) States() ([]float64, error) {
	if !(m.FPS > 0) || !(m.Seconds > 0) || m.Seconds*m.FPS < 3 || m.Seconds*m.FPS > 1e6 {
		return nil, fmt.Errorf("altscene: motion of %g s at %g fps: need at least 3 and at most 10⁶ frames", m.Seconds, m.FPS)
	}
	n := int(m.Seconds * m.FPS)
	t := make([]float64, n)
	for k := range t {
		t[k] = float64(k) / m.FPS
	}
	z, _ := sim.Solve(m.Gamma1, m.Gamma0, m.Z0, m.V0, t)
	return z, nil
}

// supersample is the number of sub-samples a pixel is averaged over, per axis.
const supersample = 4

// Texture is a smooth random background: two octaves of value noise
// (random values on coarse grids, bilinearly interpolated) in [Lo, Hi].
type Texture struct {
	Seed   uint64
	Cell   float64 // the coarse octave's grid spacing, pixels
	Lo, Hi float64 // intensity range, 0 … 1
}

// field returns the texture as a function of the frame's coordinates.
func (tx Texture) field(size int) func(x, y float64) float64 {
	rng := rand.New(rand.NewPCG(tx.Seed, 0x7e87))
	type grid struct {
		cell float64
		n    int
		v    []float64
	}
	mk := func(cell float64) grid {
		n := int(float64(size)/cell) + 3
		g := grid{cell: cell, n: n, v: make([]float64, n*n)}
		for i := range g.v {
			g.v[i] = rng.Float64()
		}
		return g
	}
	cell := tx.Cell
	if !(cell >= 2) {
		cell = 8
	}
	octaves := []grid{mk(cell), mk(cell / 2)}
	weights := []float64{0.65, 0.35}
	return func(x, y float64) float64 {
		var s float64
		for o, g := range octaves {
			gx, gy := x/g.cell, y/g.cell
			i, j := int(gx), int(gy)
			fx, fy := gx-float64(i), gy-float64(j)
			at := func(a, b int) float64 { return g.v[b*g.n+a] }
			v := (1-fx)*(1-fy)*at(i, j) + fx*(1-fy)*at(i+1, j) + (1-fx)*fy*at(i, j+1) + fx*fy*at(i+1, j+1)
			s += weights[o] * v
		}
		return tx.Lo + (tx.Hi-tx.Lo)*s
	}
}

// Door is a bar hinged at one end, seen from above, turning by z degrees
// over a textured floor: the paper's overdamped door (its released speeds
// give the three-trajectory case).
type Door struct {
	Size    int
	Texture Texture
	// Length and Width of the bar as fractions of Size; Ink its intensity.
	Length, Width, Ink float64
}

// Render draws one frame per state.
func (d Door) Render(z []float64) ([]*image.Gray, error) {
	if d.Size < 16 || d.Size > 4096 {
		return nil, fmt.Errorf("altscene: door size %d: need 16 … 4096", d.Size)
	}
	n := float64(d.Size)
	bg := d.Texture.field(d.Size)
	hx, hy := 0.2*n, 0.5*n // the hinge
	length, half := d.Length*n, d.Width*n/2
	return renderEach(d.Size, z, bg, func(x, y, zk float64) (float64, bool) {
		s, c := math.Sincos(zk * math.Pi / 180)
		// The bar's frame: u along it from the hinge, w across it.
		px, py := x-hx, y-hy
		u, w := c*px+s*py, -s*px+c*py
		return d.Ink, u >= 0 && u <= length && math.Abs(w) <= half
	})
}

// Pendulum is a rod and bob hanging from a pivot near the top of a gray
// frame, z degrees from the vertical: the paper's pendulum as another
// renderer draws it.
type Pendulum struct {
	Size int
	// Length of the rod and Bob's radius as fractions of Size.
	Length, Bob float64
	// RodWidth in pixels.
	RodWidth float64
	// Background and Ink intensities; Texture, when its range is not
	// empty, replaces the flat background.
	Background, Ink float64
	Texture         Texture
}

// Render draws one frame per state.
func (p Pendulum) Render(z []float64) ([]*image.Gray, error) {
	if p.Size < 16 || p.Size > 4096 {
		return nil, fmt.Errorf("altscene: pendulum size %d: need 16 … 4096", p.Size)
	}
	n := float64(p.Size)
	bg := func(x, y float64) float64 { return p.Background }
	if p.Texture.Hi > p.Texture.Lo {
		bg = p.Texture.field(p.Size)
	}
	cx, cy := 0.5*n, 0.12*n
	length, rb, hw := p.Length*n, p.Bob*n, p.RodWidth/2
	return renderEach(p.Size, z, bg, func(x, y, zk float64) (float64, bool) {
		s, c := math.Sincos(zk * math.Pi / 180)
		bx, by := cx+s*length, cy+c*length
		if math.Hypot(x-bx, y-by) <= rb {
			return p.Ink, true
		}
		// Distance to the rod's segment.
		dx, dy := bx-cx, by-cy
		t := math.Max(0, math.Min(1, ((x-cx)*dx+(y-cy)*dy)/(dx*dx+dy*dy)))
		return p.Ink, math.Hypot(x-cx-t*dx, y-cy-t*dy) <= hw
	})
}

// renderEach averages supersample² sub-pixel samples of the background,
// or of the object where inside reports it, for every frame.
func renderEach(size int, z []float64, bg func(x, y float64) float64, inside func(x, y, z float64) (float64, bool)) ([]*image.Gray, error) {
	if len(z) == 0 {
		return nil, fmt.Errorf("altscene: no states to render")
	}
	// The background's sub-samples, once.
	back := make([]float64, size*size*supersample*supersample)
	for j := 0; j < size*supersample; j++ {
		for i := 0; i < size*supersample; i++ {
			back[j*size*supersample+i] = bg((float64(i)+0.5)/supersample, (float64(j)+0.5)/supersample)
		}
	}
	frames := make([]*image.Gray, len(z))
	for k, zk := range z {
		if math.IsNaN(zk) || math.IsInf(zk, 0) {
			return nil, fmt.Errorf("altscene: state %d is %g", k, zk)
		}
		img := image.NewGray(image.Rect(0, 0, size, size))
		for py := 0; py < size; py++ {
			for px := 0; px < size; px++ {
				var s float64
				for sy := 0; sy < supersample; sy++ {
					for sx := 0; sx < supersample; sx++ {
						i, j := px*supersample+sx, py*supersample+sy
						x, y := (float64(i)+0.5)/supersample, (float64(j)+0.5)/supersample
						if v, in := inside(x, y, zk); in {
							s += v
						} else {
							s += back[j*size*supersample+i]
						}
					}
				}
				v := s / (supersample * supersample)
				img.Pix[py*img.Stride+px] = uint8(math.Round(255 * math.Max(0, math.Min(1, v))))
			}
		}
		frames[k] = img
	}
	return frames, nil
}
