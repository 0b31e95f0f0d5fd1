package sim

import (
	"image"
	"math"
)

// canvas is a square float frame, values in [0, 1] (0 black, 1 white).
// Pixel (i, j) covers [i, i+1]×[j, j+1] in continuous coordinates, so its
// centre is (i+0.5, j+0.5) and the frame centre is (size/2, size/2).
type canvas struct {
	size int
	px   []float64
}

func newCanvas(size int) *canvas {
	return &canvas{size: size, px: make([]float64, size*size)}
}

func (c *canvas) fill(v float64) {
	for i := range c.px {
		c.px[i] = v
	}
}

// gray quantises the canvas into an 8-bit image (NaN becomes 0).
func (c *canvas) gray() *image.Gray {
	img := image.NewGray(image.Rect(0, 0, c.size, c.size))
	for i, v := range c.px {
		img.Pix[i] = quantize(v)
	}
	return img
}

func quantize(v float64) uint8 {
	if !(v > 0) { // also catches NaN
		return 0
	}
	if v >= 1 {
		return 255
	}
	return uint8(math.Round(v * 255))
}

// Anti-aliasing: coverage is estimated from a signed distance function
// (negative inside) with ssN×ssN subsamples per pixel, each subsample
// contributing a linear ramp one subsample wide. The result is a
// continuous function of the shape parameters, so the rendered image
// varies smoothly with the state.
const (
	ssN = 4
	// pixels whose centre is farther than this from the boundary are
	// entirely inside or outside (the distance functions are 1-Lipschitz
	// and the farthest subsample is (√2/2)(1−1/ssN) ≈ 0.53 px away).
	ssEarly = 0.75
)

// sdf is a 1-Lipschitz signed distance bound: negative inside the shape.
type sdf func(x, y float64) float64

// coverage returns the fraction of pixel (i, j) inside the shape.
func coverage(f sdf, i, j int) float64 {
	cx, cy := float64(i)+0.5, float64(j)+0.5
	d := f(cx, cy)
	if d >= ssEarly {
		return 0
	}
	if d <= -ssEarly {
		return 1
	}
	sum := 0.0
	for sy := 0; sy < ssN; sy++ {
		y := float64(j) + (float64(sy)+0.5)/ssN
		for sx := 0; sx < ssN; sx++ {
			x := float64(i) + (float64(sx)+0.5)/ssN
			sum += clamp01(0.5 - f(x, y)*ssN)
		}
	}
	return sum / (ssN * ssN)
}

func clamp01(v float64) float64 {
	if v < 0 {
		return 0
	}
	if v > 1 {
		return 1
	}
	return v
}

// rect is an axis-aligned box in continuous pixel coordinates.
type rect struct{ x0, y0, x1, y1 float64 }

func (r rect) intersects(o rect) bool {
	return r.x0 < o.x1 && o.x0 < r.x1 && r.y0 < o.y1 && o.y0 < r.y1
}

func (r rect) grow(m float64) rect { return rect{r.x0 - m, r.y0 - m, r.x1 + m, r.y1 + m} }

// pixelRange returns the pixel index range [lo, hi) overlapping [a, b],
// clipped to [0, size).
func pixelRange(a, b float64, size int) (lo, hi int) {
	if !(a < b) { // also rejects NaN
		return 0, 0
	}
	fa, fb := math.Floor(a), math.Ceil(b)
	if fa < 0 {
		fa = 0
	}
	if fb > float64(size) {
		fb = float64(size)
	}
	if fa >= fb {
		return 0, 0
	}
	return int(fa), int(fb)
}

// paintSDF composites ink over the canvas with the shape's coverage,
// visiting only pixels in the bounding box bb.
func (c *canvas) paintSDF(f sdf, bb rect, ink float64) {
	bb = bb.grow(1)
	x0, x1 := pixelRange(bb.x0, bb.x1, c.size)
	y0, y1 := pixelRange(bb.y0, bb.y1, c.size)
	for j := y0; j < y1; j++ {
		row := c.px[j*c.size : (j+1)*c.size]
		for i := x0; i < x1; i++ {
			if a := coverage(f, i, j); a > 0 {
				row[i] += (ink - row[i]) * a
			}
		}
	}
}

// paintCoverage composites ink over the canvas with a precomputed
// per-pixel coverage map of the same size.
func (c *canvas) paintCoverage(alpha []float64, ink float64) {
	for i, a := range alpha {
		if a > 0 {
			c.px[i] += (ink - c.px[i]) * a
		}
	}
}

// paintRect composites ink over the canvas with the exact area coverage of
// an axis-aligned box (sub-pixel positions give fractional edges).
func (c *canvas) paintRect(r rect, ink float64) {
	x0, x1 := pixelRange(r.x0, r.x1, c.size)
	y0, y1 := pixelRange(r.y0, r.y1, c.size)
	for j := y0; j < y1; j++ {
		oy := overlap(float64(j), float64(j+1), r.y0, r.y1)
		row := c.px[j*c.size : (j+1)*c.size]
		for i := x0; i < x1; i++ {
			if a := oy * overlap(float64(i), float64(i+1), r.x0, r.x1); a > 0 {
				row[i] += (ink - row[i]) * a
			}
		}
	}
}

// overlap is the length of [a0, a1] ∩ [b0, b1].
func overlap(a0, a1, b0, b1 float64) float64 {
	return math.Max(0, math.Min(a1, b1)-math.Max(a0, b0))
}

// segmentDist is the distance from p to the segment [a, b].
func segmentDist(px, py, ax, ay, bx, by float64) float64 {
	dx, dy := bx-ax, by-ay
	wx, wy := px-ax, py-ay
	l2 := dx*dx + dy*dy
	t := 0.0
	if l2 > 0 {
		t = clamp01((wx*dx + wy*dy) / l2)
	}
	return math.Hypot(wx-t*dx, wy-t*dy)
}

// polygon is a closed simple polygon in pixel coordinates.
type polygon struct{ xs, ys []float64 }

// dist is the signed distance to the polygon boundary, negative inside
// (even-odd rule).
func (p polygon) dist(x, y float64) float64 {
	n := len(p.xs)
	d := math.Inf(1)
	inside := false
	for i, j := 0, n-1; i < n; j, i = i, i+1 {
		xi, yi, xj, yj := p.xs[i], p.ys[i], p.xs[j], p.ys[j]
		d = math.Min(d, segmentDist(x, y, xj, yj, xi, yi))
		if (yi > y) != (yj > y) && x < xj+(y-yj)*(xi-xj)/(yi-yj) {
			inside = !inside
		}
	}
	if inside {
		return -d
	}
	return d
}

// coverageMap rasterises the polygon's coverage over a size×size frame.
func (p polygon) coverageMap(size int) []float64 {
	alpha := make([]float64, size*size)
	for j := 0; j < size; j++ {
		for i := 0; i < size; i++ {
			alpha[j*size+i] = coverage(p.dist, i, j)
		}
	}
	return alpha
}

// shift translates the canvas content by (dx, dy) pixels with bilinear
// interpolation; area exposed at the border takes the value fill.
func (c *canvas) shift(dx, dy, fill float64, tmp []float64) {
	n := c.size
	copy(tmp, c.px)
	at := func(i, j int) float64 {
		if i < 0 || j < 0 || i >= n || j >= n {
			return fill
		}
		return tmp[j*n+i]
	}
	for j := 0; j < n; j++ {
		sy := float64(j) - dy
		fy := math.Floor(sy)
		wy := sy - fy
		j0 := int(fy)
		for i := 0; i < n; i++ {
			sx := float64(i) - dx
			fx := math.Floor(sx)
			wx := sx - fx
			i0 := int(fx)
			top := at(i0, j0)*(1-wx) + at(i0+1, j0)*wx
			bot := at(i0, j0+1)*(1-wx) + at(i0+1, j0+1)*wx
			c.px[j*n+i] = top*(1-wy) + bot*wy
		}
	}
}
