package motion

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refine's sampling, with the border columns split from the interior and
// the four rows of the vertical taps hoisted, gives the same shift and
// residual, bit for bit, as sampling every pixel through clamped indices
// (refineReference, the loop as first written), for shifts that put the
// taps over each border.
func TestRefineMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, sz := range [][2]int{{209, 20}, {64, 64}, {9, 8}, {33, 17}} {
		w, h := sz[0], sz[1]
		r := newRegistrar(w, h)
		a, b := make([]float64, w*h), make([]float64, w*h)
		for i := range a {
			a[i] = rng.Float64()
			b[i] = rng.Float64()
		}
		// b partly a shifted copy of a, so that refine iterates.
		for y := range h {
			for x := 2; x < w; x++ {
				b[y*w+x] = 0.7*a[y*w+x-2] + 0.3*b[y*w+x]
			}
		}
		pa, pb := r.prepare(a), r.prepare(b)
		for _, d := range []Shift{{0, 0}, {2, 0}, {-3.4, 1.2}, {float64(w) / 3, -float64(h) / 4}, {-float64(w) / 2, float64(h) / 3}, {0.5, -0.5}} {
			gx, gy := make([]float64, w*h), make([]float64, w*h)
			gradientInto(gx, gy, pa.sm, w, h)
			got, gr, gok := refineInto(make([]float64, w*h), gx, gy, &pa, &pb, w, h, d)
			want, wr, wok := refineReference(&pa, &pb, w, h, d)
			if got != want || gok != wok || (gr != wr && !(gr != gr && wr != wr)) {
				t.Errorf("%d×%d from %v: refine %v %v %v, reference %v %v %v", w, h, d, got, gr, gok, want, wr, wok)
			}
		}
	}
}
func refineReference(a, b *prepared, w, h int, d Shift) (Shift, float64, bool) {
	rows := make([]float64, w*h)
	var resid float64
	for it := 0; it < 20; it++ {
		wx, ix := keysWeights(d.X)
		wy, iy := keysWeights(d.Y)
		// x0..x1, y0..y1: the pixels whose image lies inside b's
		// [1, w−2] × [1, h−2].
		x0 := max(0, int(math.Ceil(1-d.X)))
		x1 := min(w-1, int(math.Floor(float64(w-2)-d.X)))
		y0 := max(0, int(math.Ceil(1-d.Y)))
		y1 := min(h-1, int(math.Floor(float64(h-2)-d.Y)))
		if x1-x0+1 < 4 || y1-y0+1 < 4 || (x1-x0+1)*(y1-y0+1) < w*h/8 {
			return d, math.NaN(), false
		}
		for y := max(0, y0+iy-1); y <= min(h-1, y1+iy+2); y++ {
			row := b.sm[y*w : (y+1)*w]
			out := rows[y*w : (y+1)*w]
			for x := x0; x <= x1; x++ {
				j := x + ix - 1
				var v float64
				for i := range 4 {
					v += wx[i] * row[min(max(j+i, 0), w-1)]
				}
				out[x] = v
			}
		}
		var hxx, hxy, hyy, bx, by, rr, bb, bm float64
		for y := y0; y <= y1; y++ {
			j := y + iy - 1
			for x := x0; x <= x1; x++ {
				var v float64
				for i := range 4 {
					v += wy[i] * rows[min(max(j+i, 0), h-1)*w+x]
				}
				o := y*w + x
				r := v - a.sm[o]
				u, q := referenceGradient(a.sm, w, h, x, y)
				hxx += u * u
				hxy += u * q
				hyy += q * q
				bx += u * r
				by += q * r
				rr += r * r
				bb += v * v
				bm += v
			}
		}
		n := float64((x1 - x0 + 1) * (y1 - y0 + 1))
		varB := bb - bm*bm/n
		det := hxx*hyy - hxy*hxy
		if !(varB > 1e-12) || !(det > 1e-9*(hxx+hyy)*(hxx+hyy)) {
			return d, math.NaN(), false
		}
		resid = rr / varB
		sx := (hyy*bx - hxy*by) / det
		sy := (hxx*by - hxy*bx) / det
		// A step of more than a pixel leaves the basin the whole-pixel
		// search found; clip it.
		if m := math.Hypot(sx, sy); m > 1 {
			sx, sy = sx/m, sy/m
		}
		d.X -= sx
		d.Y -= sy
		if math.Hypot(sx, sy) < 1e-3 {
			break
		}
	}
	return d, resid, true
}

// referenceGradient is the central-difference gradient of the w×h image
// f at (x, y), one-sided at the border, as first written.
func referenceGradient(f []float64, w, h, x, y int) (gx, gy float64) {
	x0, x1 := max(x-1, 0), min(x+1, w-1)
	y0, y1 := max(y-1, 0), min(y+1, h-1)
	return (f[y*w+x1] - f[y*w+x0]) / float64(x1-x0), (f[y1*w+x] - f[y0*w+x]) / float64(y1-y0)
}
