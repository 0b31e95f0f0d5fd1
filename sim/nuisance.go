package sim

import (
	"math"
	"math/rand/v2"
)

// Nuisance parameters. Lengths are in pixels of a 64-pixel frame and are
// scaled by Size/64; frequencies are in Hz of clip time.
var (
	bgCount   = [3]int{8, 12, 16}
	bgMinSide = [3]int{4, 6, 7}
	bgMaxSide = [3]int{10, 14, 16}
)

const (
	refSize = 64.0
	// keepOut is the half-side (fraction of the frame) of the central box
	// around the pivot/object centre that distractors never cover.
	keepOut = 0.1

	clutterCount           = 4
	clutterMinSide         = 4
	clutterMaxSide         = 10
	clutter1AmpX           = 10.0
	clutter1AmpY           = 6.0
	clutter2AmpX           = 3.0
	clutter2AmpY           = 1.6
	clutter3Speed          = 1.6 // px per frame
	clutterMinHz           = 0.15
	clutterMaxHz           = 0.5
	jitter1Amp             = 8.0
	jitter1Cycles          = 7.0
	jitterMomentum         = 0.45
	jitter3BurstP          = 0.18
	jitter3BurstMin        = 2.0
	jitter3BurstMax        = 4.0
	lightAmbient           = 0.3
	lightMinHz, lightMaxHz = 0.05, 0.25
	lightIntensityWobble   = 0.3
)

// light is a point light at height h above the image plane; its
// contribution to the gain at pixel p is i·(h/|p − (x, y, h)|)³ (Lambertian
// shading of a flat surface with inverse-square fall-off).
type light struct{ x, y, h, i float64 }

// nuisance holds the precomputed per-frame disturbance of one clip.
type nuisance struct {
	size    int
	static  []rect       // background squares (all frames)
	moving  [][]rect     // clutter squares per frame
	offsets [][2]float64 // jitter shift per frame
	lights  [][]light    // lighting per frame
}

// squares returns the distractor squares of frame k.
func (n *nuisance) squares(k int) []rect {
	if n.moving != nil {
		return n.moving[k]
	}
	return n.static
}

// offset returns the jitter shift of frame k.
func (n *nuisance) offset(k int) (dx, dy float64) {
	if n.offsets == nil {
		return 0, 0
	}
	return n.offsets[k][0], n.offsets[k][1]
}

// light multiplies the canvas by the lighting gain of frame k.
func (n *nuisance) light(c *canvas, k int) {
	if n.lights == nil {
		return
	}
	ls := n.lights[k]
	size := c.size
	for j := 0; j < size; j++ {
		y := float64(j) + 0.5
		row := c.px[j*size : (j+1)*size]
		for i := range row {
			x := float64(i) + 0.5
			g := lightAmbient
			for _, l := range ls {
				dx, dy := x-l.x, y-l.y
				r := l.h / math.Sqrt(dx*dx+dy*dy+l.h*l.h)
				g += l.i * r * r * r
			}
			row[i] = clamp01(row[i] * g)
		}
	}
}

// newNuisance precomputes the disturbance of a clip of frames frames from
// the scene's seed (defaults applied).
func newNuisance(s Scene, frames int) *nuisance {
	n := &nuisance{size: s.Size}
	rng := newRand(s.Seed, streamNuisance)
	sc := float64(s.Size) / refSize
	size := float64(s.Size)
	half := keepOut * size
	keep := rect{size/2 - half, size/2 - half, size/2 + half, size/2 + half}
	lv := s.Nuisance.Level - 1
	dt := 1 / s.FPS
	uniform := func(a, b float64) float64 { return a + (b-a)*rng.Float64() }
	side := func(lo, hi int) float64 { return float64(lo+rng.IntN(hi-lo+1)) * sc }

	switch s.Nuisance.Kind {
	case NuisanceBackground:
		for q := 0; q < bgCount[lv]; q++ {
			a := side(bgMinSide[lv], bgMaxSide[lv])
			x, y := place(rng, size, a, 0, 0, keep)
			x, y = math.Round(x), math.Round(y)
			n.static = append(n.static, rect{x, y, x + a, y + a})
		}

	case NuisanceClutter:
		n.moving = make([][]rect, frames)
		for k := range n.moving {
			n.moving[k] = make([]rect, clutterCount)
		}
		switch lv {
		case 0, 1:
			ax, ay := clutter1AmpX*sc, clutter1AmpY*sc
			if lv == 1 {
				ax, ay = clutter2AmpX*sc, clutter2AmpY*sc
			}
			// Level 1 shares one motion between the squares; level 2 gives
			// each square its own frequencies and phases.
			w := 2 * math.Pi * uniform(clutterMinHz, clutterMaxHz)
			px, py := uniform(0, 2*math.Pi), uniform(0, 2*math.Pi)
			for q := 0; q < clutterCount; q++ {
				a := side(clutterMinSide, clutterMaxSide)
				x0, y0 := place(rng, size, a, ax, ay, keep)
				wx, wy, qx, qy := w, w, px, py
				if lv == 1 {
					wx = 2 * math.Pi * uniform(clutterMinHz, clutterMaxHz)
					wy = 2 * math.Pi * uniform(clutterMinHz, clutterMaxHz)
					qx, qy = uniform(0, 2*math.Pi), uniform(0, 2*math.Pi)
				}
				for k := 0; k < frames; k++ {
					t := float64(k) * dt
					x := x0 + ax*math.Sin(wx*t+qx)
					y := y0 + ay*math.Sin(wy*t+qy)
					n.moving[k][q] = rect{x, y, x + a, y + a}
				}
			}
		case 2:
			for q := 0; q < clutterCount; q++ {
				a := side(clutterMinSide, clutterMaxSide)
				x, y := place(rng, size, a, 0, 0, keep)
				vy, vx := math.Sincos(uniform(0, 2*math.Pi))
				vx, vy = vx*clutter3Speed*sc, vy*clutter3Speed*sc
				for k := 0; k < frames; k++ {
					n.moving[k][q] = rect{x, y, x + a, y + a}
					// Bounce off the frame border and the central box.
					nx := x + vx
					if nx < 0 || nx+a > size || (rect{nx, y, nx + a, y + a}).intersects(keep) {
						vx, nx = -vx, x
					}
					ny := y + vy
					if ny < 0 || ny+a > size || (rect{nx, ny, nx + a, ny + a}).intersects(keep) {
						vy, ny = -vy, y
					}
					x, y = nx, ny
				}
			}
		}

	case NuisanceJitter:
		n.offsets = make([][2]float64, frames)
		switch lv {
		case 0:
			ph := uniform(0, 2*math.Pi)
			for k := range n.offsets {
				n.offsets[k][1] = jitter1Amp * sc * math.Sin(2*math.Pi*jitter1Cycles*float64(k)/float64(frames)+ph)
			}
		case 1, 2:
			maxX, maxY, p := 3.0, 2.0, 0.72
			if lv == 2 {
				maxX, maxY, p = 5, 4, 0.88
			}
			wx := walk{max: maxX, p: p}
			wy := walk{max: maxY, p: p}
			for k := range n.offsets {
				if k > 0 {
					wx.step(rng)
					wy.step(rng)
				}
				dx, dy := wx.pos, wy.pos
				if lv == 2 && rng.Float64() < jitter3BurstP {
					m := uniform(jitter3BurstMin, jitter3BurstMax)
					s, c := math.Sincos(uniform(0, 2*math.Pi))
					dx, dy = dx+m*c, dy+m*s
				}
				n.offsets[k] = [2]float64{dx * sc, dy * sc}
			}
		}

	case NuisanceBrightness:
		n.lights = make([][]light, frames)
		count := 1
		if lv == 2 {
			count = 2
		}
		for q := 0; q < count; q++ {
			h := uniform(0.5, 0.9) * size
			if lv == 0 {
				l := light{uniform(0.15, 0.85) * size, uniform(0.15, 0.85) * size, h, uniform(0.6, 0.8)}
				for k := range n.lights {
					n.lights[k] = []light{l}
				}
				break
			}
			i0 := uniform(0.6, 0.8)
			if count == 2 {
				i0 = uniform(0.35, 0.55)
			}
			x0, y0 := uniform(0.3, 0.7)*size, uniform(0.3, 0.7)*size
			ax, ay := uniform(0.15, 0.3)*size, uniform(0.15, 0.3)*size
			wx := 2 * math.Pi * uniform(lightMinHz, lightMaxHz)
			wy := 2 * math.Pi * uniform(lightMinHz, lightMaxHz)
			wi := 2 * math.Pi * uniform(lightMinHz, lightMaxHz)
			px, py, pi := uniform(0, 2*math.Pi), uniform(0, 2*math.Pi), uniform(0, 2*math.Pi)
			for k := range n.lights {
				t := float64(k) * dt
				n.lights[k] = append(n.lights[k], light{
					x: x0 + ax*math.Sin(wx*t+px),
					y: y0 + ay*math.Sin(wy*t+py),
					h: h,
					i: i0 * (1 + lightIntensityWobble*math.Sin(wi*t+pi)),
				})
			}
		}
	}
	return n
}

// place draws the top-left corner of an a×a square inside the frame, at
// least (mx, my) from the border, whose box grown by (mx, my) misses keep.
// It falls back to the top-left corner after many failed draws.
func place(rng *rand.Rand, size, a, mx, my float64, keep rect) (x, y float64) {
	for try := 0; try < 1000; try++ {
		x = mx + rng.Float64()*math.Max(0, size-a-2*mx)
		y = my + rng.Float64()*math.Max(0, size-a-2*my)
		if !(rect{x - mx, y - my, x + a + mx, y + a + my}).intersects(keep) {
			return x, y
		}
	}
	return mx, my
}

// walk is a 1-D random walk on the integers in [−max, max]: each frame it
// steps with probability p, keeping its previous direction with probability
// jitterMomentum and otherwise choosing a random one.
type walk struct {
	pos, dir, max, p float64
}

func (w *walk) step(rng *rand.Rand) {
	if rng.Float64() >= w.p {
		return
	}
	if w.dir == 0 || rng.Float64() >= jitterMomentum {
		w.dir = 1
		if rng.IntN(2) == 0 {
			w.dir = -1
		}
	}
	if math.Abs(w.pos+w.dir) > w.max {
		w.dir = -w.dir
	}
	w.pos += w.dir
}
