package flow

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/physd/physd/estimator"
)

// Reading is one clip's displacement, read from its intensity gradients.
type Reading struct {
	// Z is the displacement along Dir per frame, in frame pixels, about
	// the clip's mean position.
	Z []float64
	// Dir is the motion's unit direction in the frame (x right, y down).
	Dir [2]float64
	// Noise is the rms of Z's noise, in frame pixels.
	Noise float64
	// Cells is how many cells have a gradient to read motion from, and
	// Moving how many of them move with Z beyond their noise.
	Cells, Moving int
}

// Peak is the largest displacement from the mean position, in frame
// pixels.
func (r *Reading) Peak() float64 {
	var m float64
	for _, z := range r.Z {
		m = max(m, math.Abs(z))
	}
	return m
}

// Amplitude is Z's amplitude with its noise taken out, √(2·max(rms² −
// Noise², 0)): a sinusoid's peak, zero for noise alone.
func (r *Reading) Amplitude() float64 {
	var s float64
	for _, z := range r.Z {
		s += z * z
	}
	return math.Sqrt(2 * max(s/float64(len(r.Z))-r.Noise*r.Noise, 0))
}

// Errors of Read.
var (
	// ErrFlat reports a clip with no gradient to read motion from.
	ErrFlat = errors.New("flow: the region has no texture or edge to read motion from")
	// ErrShort reports a clip with too few frames.
	ErrShort = errors.New("flow: too few frames")
)

// significance is how many noise standard deviations a cell's loading on
// the common motion must reach for the cell to count as moving.
const significance = 4

// edge is how far above the largest singular value of noise alone the
// common motion's must be to be told from it.
const edge = 1.3

// aperture is the smallest ratio of a cell's second gradient eigenvalue
// to its first for the cell to tell motion along both directions; below
// it the cell (an edge, a cable) reads only motion across its edge.
const aperture = 0.05

// Read reads the displacement of the moving part of a clip from its
// intensity gradients. Frames and their mean I₀, the reference, are
// smoothed alike (smooth) and g = ∇I₀ (newGrid). Each frame's difference
// from the reference, ΔI = I − I₀, is cleared of a change of exposure,
// a + b·(I₀ − Ī₀) fitted over the frame (a camera's gain, a keyframe's
// brightness step). Then, in two stages:
//
// Cells find the motion. A cell c of pixels has the structure tensor
// S_c = Σ g gᵀ and the data b_c(t) = −Σ ΔI(t) g; its displacement solves
// S_c d = b_c. Along S_c's eigenvectors e_k (eigenvalues λ_k) the whitened
// rows
//
//	r_ck(t) = e_k·b_c(t) / √λ_k  =  √λ_k e_k·d_c(t) + noise of variance σ²,
//
// σ the pixels' noise, each divided by its own noise (its second
// differences'), are stacked as a matrix whose leading singular vector
// v(t) is the motion common to the cells — when its singular value
// clears noise's (the Marchenko–Pastur edge); a cell moves when a row's
// loading on it exceeds significance. The direction solves (Σ S_c) u =
// Σ_k √λ_k ℓ_ck e_k over the moving cells and z(t) is their least-squares
// common displacement along û = u/|u|, Σ_c û·b_c(t) / Σ_c û·S_c û.
//
// Pixels then sharpen it (refine): a moving cell also holds the static
// background's gradients, which read no motion and pull z towards zero.
func Read(c estimator.Clip) (*Reading, error) {
	n := len(c.Frames)
	if n < estimator.MinFrames {
		return nil, fmt.Errorf("%w: %d (want at least %d)", ErrShort, n, estimator.MinFrames)
	}
	w, h := c.W, c.H
	if w <= 2*margin || h <= 2*margin {
		return nil, fmt.Errorf("%w: a %d×%d frame", ErrFlat, w, h)
	}
	raw := make([]float64, w*h)
	for _, f := range c.Frames {
		for i, v := range f {
			raw[i] += v
		}
	}
	for i := range raw {
		raw[i] /= float64(n)
	}
	ref, tmp := make([]float64, w*h), make([]float64, w*h)
	smooth(ref, tmp, raw, w, h)
	var mean float64
	for _, v := range ref {
		mean += v
	}
	mean /= float64(len(ref))
	g := newGrid(w, h, min(max(min(w, h)/8, 4), 16), ref)
	if len(g.cells) == 0 {
		return nil, ErrFlat
	}
	d := g.differences(c.Frames, raw, ref, mean, tmp)
	cz, err := g.cellStage(d, n)
	if err != nil {
		return nil, err
	}
	r := g.refine(d, n, cz.z, cz.u, cz.moving == 0)
	r = g.refine(d, n, r.Z, r.Dir, cz.moving == 0)
	r.Cells, r.Moving = len(g.cells), cz.moving
	return r, nil
}

// differences returns, frame by frame, ΔI over the interior pixels
// (indexed as g.interior), smoothed and cleared of a change of exposure:
// the least squares of ΔI on (1, I₀ − Ī₀) is taken out.
func (g *grid) differences(frames [][]float64, raw, ref []float64, mean float64, tmp []float64) [][]float64 {
	diff := make([]float64, len(raw))
	out := make([][]float64, len(frames))
	w, h := g.w, g.h
	for t, f := range frames {
		for i, v := range f {
			diff[i] = v - raw[i]
		}
		smooth(diff, tmp, diff, w, h)
		var sd, sq, sdq, sqq float64
		for _, i := range g.interior {
			dv, q := diff[i], ref[i]-mean
			sd += dv
			sq += q
			sdq += dv * q
			sqq += q * q
		}
		m := float64(len(g.interior))
		qm := sq / m
		gain := 0.0
		if den := sqq - sq*qm; den > 0 {
			gain = (sdq - sd*qm) / den
		}
		off := sd/m - gain*qm
		row := make([]float64, len(g.interior))
		for k, i := range g.interior {
			row[k] = diff[i] - off - gain*(ref[i]-mean)
		}
		out[t] = row
	}
	return out
}

// cellReading is the cell stage's result: z, û, and how many cells move.
type cellReading struct {
	z      []float64
	u      [2]float64
	moving int
}

// cellStage is Read's first stage (see Read).
func (g *grid) cellStage(d [][]float64, n int) (*cellReading, error) {
	b := make([][2]float64, len(g.cells)*n)
	for t := range n {
		for k := range g.cells {
			cl := &g.cells[k]
			var bx, by float64
			for _, p := range cl.pix {
				bx -= d[t][p] * g.gx[p]
				by -= d[t][p] * g.gy[p]
			}
			b[k*n+t] = [2]float64{bx, by}
		}
	}
	var rows [][]float64
	var rowCell, rowAxis []int
	for k := range g.cells {
		cl := &g.cells[k]
		for a := range 2 {
			if cl.lam[a] < aperture*cl.lam[0] {
				continue
			}
			e, s := cl.vec[a], 1/math.Sqrt(cl.lam[a])
			r := make([]float64, n)
			for t := range n {
				bt := b[k*n+t]
				r[t] = (e[0]*bt[0] + e[1]*bt[1]) * s
			}
			center(r)
			rows, rowCell, rowAxis = append(rows, r), append(rowCell, k), append(rowAxis, a)
		}
	}
	// Each row's noise, from its second differences: smoothing the
	// frames makes the noise of a cell whose gradients vary slowly larger
	// than its √λ promises, so rows are weighed by their own noise.
	nrows := make([][]float64, len(rows))
	dd := make([]float64, n-2)
	for j, r := range rows {
		for t := 1; t < n-1; t++ {
			dd[t-1] = math.Abs(r[t+1] - 2*r[t] + r[t-1])
		}
		sj := median(dd) / 0.6745 / math.Sqrt(6)
		nr := make([]float64, n)
		if sj > 0 {
			for t, x := range r {
				nr[t] = x / sj
			}
		}
		nrows[j] = nr
	}
	v := leading(nrows, n)
	load := make([]float64, len(rows))
	var s1 float64
	for j := range rows {
		var l, nl float64
		for t := range n {
			l += rows[j][t] * v[t]
			nl += nrows[j][t] * v[t]
		}
		load[j] = l
		s1 += nl * nl
		nrows[j][0] = nl // the row is done with: keep its loading
	}
	// Noise alone has a leading singular value up to √R + √n (the
	// Marchenko–Pastur edge of R unit-noise rows): below it nothing
	// moves, and the rows' loadings on it are noise fitted.
	still := math.Sqrt(s1) < edge*(math.Sqrt(float64(len(rows)))+math.Sqrt(float64(n)))
	use := make([]bool, len(g.cells))
	nm := 0
	for j := range rows {
		if k := rowCell[j]; !still && math.Abs(nrows[j][0]) > significance && !use[k] {
			use[k] = true
			nm++
		}
	}
	if nm == 0 {
		for k := range use {
			use[k] = true
		}
	}
	// (Σ S_c) u = Σ_k √λ_k ℓ_ck e_k over the cells used.
	var S [3]float64
	var rhs [2]float64
	for k, cl := range g.cells {
		if use[k] {
			S[0], S[1], S[2] = S[0]+cl.s[0], S[1]+cl.s[1], S[2]+cl.s[2]
		}
	}
	for j := range rows {
		if k := rowCell[j]; use[k] {
			cl, a := &g.cells[k], rowAxis[j]
			s := math.Sqrt(cl.lam[a]) * load[j]
			rhs[0] += s * cl.vec[a][0]
			rhs[1] += s * cl.vec[a][1]
		}
	}
	u := solve2(S, rhs)
	z := make([]float64, n)
	var den float64
	for k, cl := range g.cells {
		if !use[k] {
			continue
		}
		den += u[0]*u[0]*cl.s[0] + 2*u[0]*u[1]*cl.s[1] + u[1]*u[1]*cl.s[2]
		for t := range n {
			bt := b[k*n+t]
			z[t] += u[0]*bt[0] + u[1]*bt[1]
		}
	}
	if !(den > 0) {
		return nil, ErrFlat
	}
	for t := range z {
		z[t] /= den
	}
	center(z)
	return &cellReading{z: z, u: u, moving: nm}, nil
}

// refine is Read's second stage; still when the cells found nothing
// moving, and it then reads z over every pixel. Each pixel's response to the motion
// read so far, a_p = Σ_t ΔI_p(t) z(t) / Σ_t z(t)², is −g_p·u for a pixel
// that moves with it and 0 for one that stays; the pixels whose a_p is
// significant (beyond 3 σ_a, σ_a = σ/√Σz², σ the pixels' residual noise)
// and of −g_p·û's sign move. Over them the direction solves
// (Σ g gᵀ) u = −Σ a_p g_p and the displacement along û is the least
// squares
//
//	z(t) = −Σ_p ΔI_p(t) (g_p·û) / Σ_p (g_p·û)²,
//
// with noise σ/√Σ_p (g_p·û)², or the spread between two halves of the
// moving pixels (alternate cells) read apart, less what they share with
// z, when that is larger: compressed video's noise is not independent
// from pixel to pixel.
func (g *grid) refine(d [][]float64, n int, z0 []float64, u [2]float64, still bool) *Reading {
	var zz float64
	for _, v := range z0 {
		zz += v * v
	}
	P := len(g.interior)
	a := make([]float64, P)
	res := make([]float64, P)
	if zz > 0 {
		for t := range n {
			for p, v := range d[t] {
				a[p] += v * z0[t]
			}
		}
		for p := range a {
			a[p] /= zz
		}
	}
	for t := range n {
		for p, v := range d[t] {
			e := v - a[p]*z0[t]
			res[p] += e * e
		}
	}
	for p := range res {
		res[p] = math.Sqrt(res[p] / float64(n-1))
	}
	sigma := median(slices.Clone(res))
	sa := math.Inf(1)
	if zz > 0 {
		sa = sigma / math.Sqrt(zz)
	}
	moves := make([]bool, P)
	var S [3]float64
	var rhs [2]float64
	count := 0
	for p, i := range g.interior {
		gu := g.gx[i]*u[0] + g.gy[i]*u[1]
		if math.Abs(a[p]) > 3*sa && a[p]*gu < 0 {
			moves[p] = true
			count++
			S[0] += g.gx[i] * g.gx[i]
			S[1] += g.gx[i] * g.gy[i]
			S[2] += g.gy[i] * g.gy[i]
			rhs[0] -= a[p] * g.gx[i]
			rhs[1] -= a[p] * g.gy[i]
		}
	}
	if still || count < minMoving(P) {
		// Nothing moves beyond the noise (a few pixels pass 3σ by
		// chance): z over every pixel.
		count = 0
		for p := range moves {
			moves[p] = true
		}
	} else {
		u = solve2(S, rhs)
	}
	read := func(keep func(p int) bool) ([]float64, float64) {
		z := make([]float64, n)
		var den float64
		for p, i := range g.interior {
			if !keep(p) {
				continue
			}
			gu := g.gx[i]*u[0] + g.gy[i]*u[1]
			den += gu * gu
			for t := range n {
				z[t] -= d[t][p] * gu
			}
		}
		if !(den > 0) {
			return nil, 0
		}
		for t := range z {
			z[t] /= den
		}
		center(z)
		return z, den
	}
	z, den := read(func(p int) bool { return moves[p] })
	if z == nil {
		return &Reading{Z: z0, Dir: u, Noise: math.Inf(1)}
	}
	noise := sigma / math.Sqrt(den)
	half := func(h int) func(int) bool {
		return func(p int) bool { return moves[p] && g.cellOf[p]%2 == h }
	}
	za, _ := read(half(0))
	zb, _ := read(half(1))
	if za != nil && zb != nil {
		diff := make([]float64, n)
		var dz, zz float64
		for t := range diff {
			diff[t] = za[t] - zb[t]
			dz += diff[t] * z[t]
			zz += z[t] * z[t]
		}
		var s float64
		for t := range diff {
			e := diff[t]
			if zz > 0 {
				e -= dz / zz * z[t]
			}
			s += e * e
		}
		noise = max(noise, math.Sqrt(s/float64(n))/2)
	}
	return &Reading{Z: z, Dir: u, Noise: noise}
}

// minMoving is the fewest pixels of p that read a motion: fewer pass
// the 3σ test by chance alone.
func minMoving(p int) int { return max(16, p/200) }

// solve2 solves the symmetric 2×2 system S u = r, S given as (xx, xy, yy),
// and returns u as a unit vector with a fixed sign (pointing right, or
// down when vertical). A singular S (every edge of one direction) reads
// along r; a zero r along x.
func solve2(S [3]float64, r [2]float64) [2]float64 {
	det := S[0]*S[2] - S[1]*S[1]
	tr := S[0] + S[2]
	var u [2]float64
	switch {
	case det > 1e-12*tr*tr:
		u = [2]float64{(S[2]*r[0] - S[1]*r[1]) / det, (S[0]*r[1] - S[1]*r[0]) / det}
	default:
		u = r
	}
	nu := math.Hypot(u[0], u[1])
	if !(nu > 0) {
		return [2]float64{1, 0}
	}
	u[0], u[1] = u[0]/nu, u[1]/nu
	if u[0] < -1e-12 || math.Abs(u[0]) <= 1e-12 && u[1] < 0 {
		u[0], u[1] = -u[0], -u[1]
	}
	return u
}

// center takes xs's mean out of it.
func center(xs []float64) {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for i := range xs {
		xs[i] -= m
	}
}
