package tracker

import "math"

// arcOf decides whether positions moving mostly along axis lie on a
// circle's arc rather than a line and returns its centre and radius, or
// radius 0 for a line, and the rms distance of the positions from the
// curve chosen. An arc is chosen when the circle leaves less than
// arcGain of the scatter across the axis (the line's residual), and that
// scatter is at least arcMinPx: a curvature the positions resolve.
func arcOf(pos [][]Point, axis Point) (Point, float64, float64) {
	m := meanOf(pos)
	var across float64
	n := 0
	for _, c := range pos {
		for _, q := range c {
			d := -(q.X-m.X)*axis.Y + (q.Y-m.Y)*axis.X
			across += d * d
			n++
		}
	}
	across = math.Sqrt(across / float64(max(n, 1)))
	if !(across >= arcMinPx) {
		return Point{}, 0, across
	}
	c, r, ok := fitCircle(pos, m)
	if !ok {
		return Point{}, 0, across
	}
	var res float64
	for _, cl := range pos {
		for _, q := range cl {
			d := math.Hypot(q.X-c.X, q.Y-c.Y) - r
			res += d * d
		}
	}
	if res = math.Sqrt(res / float64(n)); !(res < arcGain*across) {
		return Point{}, 0, across
	}
	return c, r, res
}

const (
	// arcGain is the most of the line's scatter across its axis a circle
	// may leave and count as the path's shape.
	arcGain = 0.25
	// arcMinPx is the least scatter across the axis, px, taken for
	// curvature rather than the tracker's noise.
	arcMinPx = 0.3
)

// fitCircle is the algebraic (Kåsa) circle through the positions: with
// u, v the positions less their mean m, the least-squares solution of
//
//	u² + v² + D u + E v + F = 0,
//
// centre m − (D, E)/2, radius √((D² + E²)/4 − F). The 3×3 normal
// equations are solved by Cramer's rule; ok is false when they are
// singular (collinear positions).
func fitCircle(pos [][]Point, m Point) (c Point, r float64, ok bool) {
	var suu, svv, suv, su, sv, sz, szu, szv, n float64
	for _, cl := range pos {
		for _, q := range cl {
			u, v := q.X-m.X, q.Y-m.Y
			z := u*u + v*v
			suu += u * u
			svv += v * v
			suv += u * v
			su += u
			sv += v
			sz += z
			szu += z * u
			szv += z * v
			n++
		}
	}
	// A·(D, E, F) = −(Σzu, Σzv, Σz), A = [[Σuu Σuv Σu] [Σuv Σvv Σv] [Σu Σv n]].
	a := [3][3]float64{{suu, suv, su}, {suv, svv, sv}, {su, sv, n}}
	b := [3]float64{-szu, -szv, -sz}
	det := det3(a)
	if !(math.Abs(det) > 1e-9*math.Abs(suu*svv*n)) {
		return Point{}, 0, false
	}
	var x [3]float64
	for k := range 3 {
		ak := a
		for i := range 3 {
			ak[i][k] = b[i]
		}
		x[k] = det3(ak) / det
	}
	r2 := (x[0]*x[0]+x[1]*x[1])/4 - x[2]
	if !(r2 > 0) {
		return Point{}, 0, false
	}
	return Point{m.X - x[0]/2, m.Y - x[1]/2}, math.Sqrt(r2), true
}

func det3(a [3][3]float64) float64 {
	return a[0][0]*(a[1][1]*a[2][2]-a[1][2]*a[2][1]) -
		a[0][1]*(a[1][0]*a[2][2]-a[1][2]*a[2][0]) +
		a[0][2]*(a[1][0]*a[2][1]-a[1][1]*a[2][0])
}
