package tracker

import (
	"math"
	"slices"
)

// template is a patch of the frame an object was found in (the pixels of
// its mask), mean removed, with its norm.
type template struct {
	w, h int
	v    []float64 // the pixels used, centred, row by row
	norm float64   // ‖v‖
	// gx, gy are the gradient of the frame the template was cut from at
	// its pixels (refine), samples refine's scratch.
	gx, gy, samples []float64
	// rows lists, per box row, the runs of used pixels [x0, x1) and
	// where their values start in v: the inner loop reads contiguous
	// pixels.
	rows [][]run
	// z holds the running sums ncc reads; one goroutine uses a template.
	z rowSums
	// cache, when set, keeps the template's matches (key: templateKey)
	// in the frames ids names (searchMemo).
	cache *Cache
	key   uint64
	ids   []frameID
}

// rowSums holds running sums of a frame's pixels and of their squares
// along each row of a region, columns [x0, x0+n) of rows [y0, y1):
//
//	s[(y−y0)(n+1) + c] = Σ_{x0 ≤ x < x0+c} p(x, y),  s2 the same of p²,
//
// so that a run of pixels sums in two reads whatever its length.
type rowSums struct {
	x0, y0, n int
	s, s2     []float64
}

// build sums the region [x0, x1) × [y0, y1) of frame f (w wide).
func (z *rowSums) build(f []float64, w, x0, y0, x1, y1 int) {
	z.x0, z.y0, z.n = x0, y0, x1-x0
	m := (z.n + 1) * (y1 - y0)
	z.s = slices.Grow(z.s[:0], m)[:m]
	z.s2 = slices.Grow(z.s2[:0], m)[:m]
	for y := y0; y < y1; y++ {
		o := (y - y0) * (z.n + 1)
		s, s2 := z.s[o:o+z.n+1], z.s2[o:o+z.n+1]
		s[0], s2[0] = 0, 0
		var a, b float64
		for i, p := range f[y*w+x0 : y*w+x1] {
			a += p
			b += p * p
			s[i+1], s2[i+1] = a, b
		}
	}
}

// run is a horizontal stretch of template pixels: columns [x0, x1) of a
// row, values from v[at].
type run struct{ x0, x1, at int }

// newTemplate cuts box b, the pixels where mask is set (nil: all), out of
// frame f (row stride fw); nil if the patch is flat.
func newTemplate(f []float64, fw int, b Box, mask []bool) *template {
	t := &template{w: b.W, h: b.H, rows: make([][]run, b.H)}
	var mean float64
	for y := range b.H {
		for x := 0; x < b.W; {
			if mask != nil && !mask[y*b.W+x] {
				x++
				continue
			}
			r := run{x0: x, at: len(t.v)}
			for ; x < b.W && (mask == nil || mask[y*b.W+x]); x++ {
				v := f[(b.Y+y)*fw+b.X+x]
				t.v = append(t.v, v)
				mean += v
			}
			r.x1 = x
			t.rows[y] = append(t.rows[y], r)
		}
	}
	if len(t.v) == 0 {
		return nil
	}
	mean /= float64(len(t.v))
	var s2 float64
	for i := range t.v {
		t.v[i] -= mean
		s2 += t.v[i] * t.v[i]
	}
	if !(s2 > 1e-12) {
		return nil
	}
	t.norm = math.Sqrt(s2)
	return t
}

// ncc is the normalised cross-correlation of the template with the patch
// of f (w wide) whose top-left corner is (x, y), over the template's
// pixels:
//
//	ρ = Σ v_i p_i / (‖v‖ √(Σ p_i² − (Σ p_i)²/n)),
//
// v centred, so the patch's mean drops out of the numerator; gain and
// offset changes of the patch leave ρ unchanged.
//
// Σ p and Σ p² come from the running sums t.z, which must cover the
// patch (t.z.build); Σ v_i p_i is summed in two interleaved parts, as
// one chain of dependent additions would wait on the adder every pixel.
func (t *template) ncc(f []float64, w, x, y int) float64 {
	var sp, sp2, svp, svq float64
	z := &t.z
	for r, runs := range t.rows {
		base := (y+r)*w + x
		o := (y+r-z.y0)*(z.n+1) + x - z.x0
		for _, rn := range runs {
			row := f[base+rn.x0 : base+rn.x1]
			tv := t.v[rn.at : rn.at+len(row)]
			tv = tv[:len(row)]
			i := 0
			for ; i+1 < len(row); i += 2 {
				svp += tv[i] * row[i]
				svq += tv[i+1] * row[i+1]
			}
			if i < len(row) {
				svp += tv[i] * row[i]
			}
			sp += z.s[o+rn.x1] - z.s[o+rn.x0]
			sp2 += z.s2[o+rn.x1] - z.s2[o+rn.x0]
		}
	}
	svp += svq
	n := float64(len(t.v))
	v := sp2 - sp*sp/n
	if !(v > 1e-12) {
		return 0
	}
	return svp / (t.norm * math.Sqrt(v))
}

// search finds the best match within r pixels of (x0, y0), widening the
// search (up to four times) while the best lies on its border, and
// refines it to a fraction of a pixel by a parabola through the scores
// either side in x and in y. It returns the position and its score.
func (t *template) search(f []float64, w, h, x0, y0, r int) (Point, float64) {
	// A prediction off the frame (an object leaving it, a wild velocity)
	// searches from the nearest place the template fits.
	x0, y0 = min(max(0, x0), w-t.w), min(max(0, y0), h-t.h)
	bx, by, best := x0, y0, math.Inf(-1)
	for range 4 {
		onEdge := false
		// The sums cover the corners searched and one more either side,
		// for the parabola.
		t.z.build(f, w, max(0, x0-r-1), max(0, y0-r-1), min(w, x0+r+1+t.w), min(h, y0+r+1+t.h))
		for y := max(0, y0-r); y <= min(h-t.h, y0+r); y++ {
			for x := max(0, x0-r); x <= min(w-t.w, x0+r); x++ {
				if s := t.ncc(f, w, x, y); s > best {
					bx, by, best = x, y, s
				}
			}
		}
		onEdge = (bx == x0-r && bx > 0) || (bx == x0+r && bx < w-t.w) ||
			(by == y0-r && by > 0) || (by == y0+r && by < h-t.h)
		if !onEdge {
			break
		}
		x0, y0, r = bx, by, 2*r
	}
	p := Point{float64(bx), float64(by)}
	if bx > 0 && bx < w-t.w {
		p.X += vertex(t.ncc(f, w, bx-1, by), best, t.ncc(f, w, bx+1, by))
	}
	if by > 0 && by < h-t.h {
		p.Y += vertex(t.ncc(f, w, bx, by-1), best, t.ncc(f, w, bx, by+1))
	}
	return p, best
}

// vertex is the offset of the vertex of the parabola through (−1, a),
// (0, b), (1, c), within ±½.
func vertex(a, b, c float64) float64 {
	d := a - 2*b + c
	if !(d < 0) {
		return 0
	}
	return math.Max(-0.5, math.Min(0.5, (a-c)/(2*d)))
}

// bestAnywhere is the top-left corner of the best match in all of f and
// its score.
func (t *template) bestAnywhere(f []float64, w, h int) (int, int, float64) {
	t.z.build(f, w, 0, 0, w, h)
	bx, by, best := 0, 0, math.Inf(-1)
	for y := 0; y <= h-t.h; y++ {
		for x := 0; x <= w-t.w; x++ {
			if s := t.ncc(f, w, x, y); s > best {
				bx, by, best = x, y, s
			}
		}
	}
	return bx, by, best
}

// bestWhere is the top-left corner of the best match among the corners
// where ok is set (ok is (w−t.w+1) wide) and its score; −Inf if none is.
func (t *template) bestWhere(f []float64, w int, ok []bool) (int, int, float64) {
	nx := w - t.w + 1
	t.z.build(f, w, 0, 0, w, len(f)/w)
	bx, by, best := 0, 0, math.Inf(-1)
	for i, use := range ok {
		if !use {
			continue
		}
		x, y := i%nx, i/nx
		if s := t.ncc(f, w, x, y); s > best {
			bx, by, best = x, y, s
		}
	}
	return bx, by, best
}
