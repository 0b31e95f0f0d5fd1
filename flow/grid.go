package flow

import (
	"gonum.org/v1/gonum/floats"

	"github.com/physd/physd/internal/order"
	"math"
	"slices"
)

// grid is a reference image's gradients and its cells.
type grid struct {
	w, h   int
	gx, gy []float64
	// interior is every pixel with both gradients (margin from the
	// border), and cellOf its cell's index in the whole grid (flat cells
	// too); a cell's pix index interior.
	interior []int
	cellOf   []int
	cells    []cell
}

// cell is a square of pixels and its structure tensor.
type cell struct {
	pix []int
	// s is S = Σ g gᵀ as (xx, xy, yy); lam its eigenvalues, largest
	// first, and vec their unit eigenvectors.
	s   [3]float64
	lam [2]float64
	vec [2][2]float64
}

// minEnergy is the smallest share of the strongest cell's gradient
// energy a cell needs to be read: flat cells hold no motion, only noise.
const minEnergy = 1e-3

// margin is how far from the border a pixel must be for its smoothed
// value and its derivative to be read from pixels of the image alone.
const margin = 4

// newGrid computes the derivatives of ref, smoothed as the frames are
// (smooth), by the fourth-order central difference
//
//	gx = (J(x−2) − 8 J(x−1) + 8 J(x+1) − J(x+2)) / 12,  likewise gy,
//
// on the w×h image's interior, and cuts it into cs×cs cells (the last row
// and column of cells take what is left), keeping those with gradient.
// The plain central difference (J(x+1) − J(x−1))/2 spreads a sharp
// edge's derivative over three pixels where moving the edge changes one,
// and reads its displacement up to a third too large; on the smoothed
// image the fourth-order one is within a percent or two.
func newGrid(w, h, cs int, ref []float64) *grid {
	g := &grid{w: w, h: h, gx: make([]float64, w*h), gy: make([]float64, w*h)}
	at := make(map[int]int)
	for y := margin; y < h-margin; y++ {
		for x := margin; x < w-margin; x++ {
			i := y*w + x
			g.gx[i] = (ref[i-2] - 8*ref[i-1] + 8*ref[i+1] - ref[i+2]) / 12
			g.gy[i] = (ref[i-2*w] - 8*ref[i-w] + 8*ref[i+w] - ref[i+2*w]) / 12
			at[i] = len(g.interior)
			g.interior = append(g.interior, i)
		}
	}
	g.cellOf = make([]int, len(g.interior))
	nx, ny := max((w-2*margin)/cs, 1), max((h-2*margin)/cs, 1)
	var all []cell
	for cy := range ny {
		y0, y1 := margin+cy*cs, margin+(cy+1)*cs
		if cy == ny-1 {
			y1 = h - margin
		}
		for cx := range nx {
			x0, x1 := margin+cx*cs, margin+(cx+1)*cs
			if cx == nx-1 {
				x1 = w - margin
			}
			var c cell
			for y := y0; y < y1; y++ {
				for x := x0; x < x1; x++ {
					i := y*w + x
					c.pix = append(c.pix, at[i])
					g.cellOf[at[i]] = len(all)
					c.s[0] += g.gx[i] * g.gx[i]
					c.s[1] += g.gx[i] * g.gy[i]
					c.s[2] += g.gy[i] * g.gy[i]
				}
			}
			c.lam, c.vec = eig2(c.s)
			all = append(all, c)
		}
	}
	var top float64
	for _, c := range all {
		top = max(top, c.lam[0])
	}
	for _, c := range all {
		if top > 0 && c.lam[0] >= minEnergy*top {
			g.cells = append(g.cells, c)
		}
	}
	return g
}

// eig2 is the eigen-decomposition of the symmetric 2×2 matrix
// [[a, b], [b, c]] given as (a, b, c), eigenvalues largest first.
func eig2(s [3]float64) ([2]float64, [2][2]float64) {
	a, b, c := s[0], s[1], s[2]
	m, d := (a+c)/2, math.Hypot((a-c)/2, b)
	l0, l1 := m+d, max(m-d, 0)
	// The eigenvector of l0: (b, l0 − a) or (l0 − c, b), whichever is
	// longer (the other vanishes when b = 0).
	v := [2]float64{b, l0 - a}
	if alt := [2]float64{l0 - c, b}; math.Hypot(alt[0], alt[1]) > math.Hypot(v[0], v[1]) {
		v = alt
	}
	if n := math.Hypot(v[0], v[1]); n > 0 {
		v[0], v[1] = v[0]/n, v[1]/n
	} else {
		v = [2]float64{1, 0}
	}
	return [2]float64{l0, l1}, [2][2]float64{v, {-v[1], v[0]}}
}

// leadingComponents returns the k largest squared singular values of the
// matrix M whose rows are rows (each of length n), largest first, and
// their right singular vectors (unit vectors of length n): the leading
// eigenpairs of the smaller Gram matrix — MᵀM, or MMᵀ with v = Mᵀw/‖Mᵀw‖
// when there are fewer rows than n — by power iteration with deflation
// (at most maxPower steps a pair, started from the Gram's largest
// diagonal element's axis: deterministic). Only the leading pairs are
// wanted, and a full eigendecomposition's rotations cost more than the
// rest of the reading.
func leadingComponents(rows [][]float64, n, k int) ([]float64, [][]float64) {
	r := len(rows)
	if r == 0 || n == 0 {
		return nil, nil
	}
	small := r < n
	m := n
	if small {
		m = r
	}
	g := make([]float64, m*m)
	if small {
		for i := range r {
			for j := i; j < r; j++ {
				d := floats.Dot(rows[i], rows[j])
				g[i*m+j], g[j*m+i] = d, d
			}
		}
	} else {
		for _, row := range rows {
			for i, x := range row {
				if x != 0 {
					floats.AddScaled(g[i*n+i:(i+1)*n], x, row[i:])
				}
			}
		}
		for i := range n {
			for j := i + 1; j < n; j++ {
				g[j*n+i] = g[i*n+j]
			}
		}
	}
	var vals []float64
	var out [][]float64
	w, next := make([]float64, m), make([]float64, m)
	for range min(k, m) {
		top := 0
		for i := 1; i < m; i++ {
			if g[i*m+i] > g[top*m+top] {
				top = i
			}
		}
		clear(w)
		w[top] = 1
		var lambda float64
		for range maxPower {
			for i := range m {
				next[i] = floats.Dot(g[i*m:(i+1)*m], w)
			}
			lambda = normalize(next)
			if lambda == 0 {
				break
			}
			var d float64
			for i := range w {
				d = max(d, math.Abs(next[i]-w[i]))
			}
			w, next = next, w
			if d < 1e-6 {
				break
			}
		}
		if !(lambda > 0) {
			break
		}
		// Deflate: G −= λ w wᵀ.
		for i := range m {
			floats.AddScaled(g[i*m:(i+1)*m], -lambda*w[i], w)
		}
		v := make([]float64, n)
		if small {
			for i, row := range rows {
				floats.AddScaled(v, w[i], row)
			}
		} else {
			copy(v, w)
		}
		if normalize(v) == 0 {
			break
		}
		vals, out = append(vals, lambda), append(out, v)
	}
	return vals, out
}

// maxPower is the most power-iteration steps for one component: the
// components only choose the motion's time course and seed the pixels'
// reading, which reads the displacement itself.
const maxPower = 60

// normalize scales v to unit length and returns its former length.
func normalize(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	s = math.Sqrt(s)
	if s > 0 {
		for i := range v {
			v[i] /= s
		}
	}
	return s
}

// median is xs's median (quickselect, order.Select); xs is reordered.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	m := len(xs) / 2
	hi := order.Select(xs, m)
	if len(xs)%2 == 1 {
		return hi
	}
	// Select leaves the m smallest before index m.
	return (slices.Max(xs[:m]) + hi) / 2
}

// smooth writes into dst the w×h image src filtered by the binomial
// kernel [1 4 6 4 1]/16 along x and then y (tmp is working memory of
// the same size); pixels within 2 of the border keep src's values.
func smooth(dst, tmp, src []float64, w, h int) {
	copy(tmp, src)
	for y := range h {
		r := src[y*w : (y+1)*w]
		o := tmp[y*w : (y+1)*w]
		for x := 2; x < w-2; x++ {
			o[x] = (r[x-2] + 4*r[x-1] + 6*r[x] + 4*r[x+1] + r[x+2]) / 16
		}
	}
	copy(dst, tmp)
	for y := 2; y < h-2; y++ {
		for x := range w {
			i := y*w + x
			dst[i] = (tmp[i-2*w] + 4*tmp[i-w] + 6*tmp[i] + 4*tmp[i+w] + tmp[i+2*w]) / 16
		}
	}
}
