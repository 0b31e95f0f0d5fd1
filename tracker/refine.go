package tracker

import (
	"math"
	"sync"
)

// Sub-pixel refinement of a match.
//
// A parabola through the scores at the best corner and its neighbours
// places the match within a fraction of a pixel, but with an error that
// depends on where in its pixel the object sits ("pixel locking": up to
// a tenth of a pixel on a sharp edge, measured on a block's edges). A
// swing of a few pixels sweeps through every fraction, and the error
// becomes a distortion of the path at harmonics of its motion — of the
// size of a weak second mode. refine places it again by matching the
// template to the frame interpolated at sub-pixel offsets (Lucas–Kanade),
// both smoothed first (soft): a sharp edge is barely sampled, and
// interpolating it errs with the fraction too (Gaussian pre-filtering,
// as digital image correlation does against its interpolation bias).
// Measured on a block's edge swinging ±4 px (lossless H.264, 10 px of
// the frame per pixel of it less than one): parabola 0.065 px rms from
// the true path, Lucas–Kanade 0.031, smoothed 0.015, smoothed over the
// object's own pixels (moving) 0.013.

// refineSteps bounds refine's Gauss–Newton iterations; refineTol (px)
// ends them when a step is smaller.
// refineReach (px) is how far from the search's estimate refine may
// move it: beyond the half pixel the parabola places it within, as far
// again as a template pressed against the frame's border may have gone
// past the last corner searched.
const (
	refineSteps = 6
	refineTol   = 1e-3
	refineReach = 1.5
)

// newFine is newTemplate with the gradients refine reads.
func newFine(f []float64, fw int, b Box, mask []bool) *template {
	t := newTemplate(f, fw, b, mask)
	if t != nil {
		t.grads(f, fw, b)
	}
	return t
}

// grads computes the template's gradient at each of its pixels, by
// central differences in the frame f (fw wide) it was cut from at b (one
// sided at the frame's border).
func (t *template) grads(f []float64, fw int, b Box) {
	fh := len(f) / fw
	t.gx, t.gy = make([]float64, len(t.v)), make([]float64, len(t.v))
	for y, runs := range t.rows {
		fy := b.Y + y
		for _, rn := range runs {
			for x := rn.x0; x < rn.x1; x++ {
				fx := b.X + x
				i := rn.at + x - rn.x0
				l, r := max(fx-1, 0), min(fx+1, fw-1)
				u, d := max(fy-1, 0), min(fy+1, fh-1)
				t.gx[i] = (f[fy*fw+r] - f[fy*fw+l]) / float64(r-l)
				t.gy[i] = (f[d*fw+fx] - f[u*fw+fx]) / float64(d-u)
			}
		}
	}
}

// refine returns the top-left corner p near p0 that minimises
//
//	E(p) = Σ_i (f(q_i + p) − a v_i − c)²,
//
// q_i the template's pixels, f the w×h frame interpolated bicubically
// between pixels, a and c a gain and an offset (solved in closed form
// for each p by least squares), over the pixels that fall inside the
// frame: an object swinging against the frame's border keeps its
// position beyond the last corner the search can place it at. p moves
// by Gauss–Newton steps
//
//	Δ = −H⁻¹ Σ_i a g_i r_i,  H = Σ_i a² g_i g_iᵀ,
//
// g_i the template's gradient (the frame's, a times it, where the two
// match) and r_i the residual. ok is false when the steps go further
// than refineReach from p0, fewer than half the template's pixels stay
// in the frame, or the template has no gradient to place it by: the
// caller keeps p0.
func (t *template) refine(f []float64, w, h int, p0 Point, along *Point) (p Point, ok bool) {
	if t.gx == nil {
		return p0, false
	}
	p = p0
	s := t.samples[:0]
	for range refineSteps {
		// Σ over the pixels in the frame of v, f, v², v f.
		var sv, sf, svv, svf float64
		s = s[:0]
		for y, runs := range t.rows {
			fy := p.Y + float64(y)
			in := fy >= 1 && fy < float64(h-2)
			for _, rn := range runs {
				for x := rn.x0; x < rn.x1; x++ {
					fx := p.X + float64(x)
					if !in || fx < 1 || fx >= float64(w-2) {
						s = append(s, math.NaN())
						continue
					}
					u := cubicAt(f, w, fx, fy)
					v := t.v[rn.at+x-rn.x0]
					s = append(s, u)
					sv += v
					sf += u
					svv += v * v
					svf += v * u
				}
			}
		}
		n := 0
		for _, u := range s {
			if !math.IsNaN(u) {
				n++
			}
		}
		if 2*n < len(s) {
			t.samples = s
			return p0, false
		}
		m := float64(n)
		a := (svf - sv*sf/m) / (svv - sv*sv/m)
		c := (sf - a*sv) / m
		if !(a > 0) {
			t.samples = s
			return p0, false
		}
		var hxx, hxy, hyy, bx, by float64
		for i, u := range s {
			if math.IsNaN(u) {
				continue
			}
			r := u - a*t.v[i] - c
			gx, gy := a*t.gx[i], a*t.gy[i]
			hxx += gx * gx
			hxy += gx * gy
			hyy += gy * gy
			bx += gx * r
			by += gy * r
		}
		var dx, dy float64
		if u := along; u != nil {
			// Along u only: Δ = −(uᵀb)/(uᵀHu) u.
			huu := u.X*u.X*hxx + 2*u.X*u.Y*hxy + u.Y*u.Y*hyy
			if !(huu > 0) {
				t.samples = s
				return p0, false
			}
			d := -(u.X*bx + u.Y*by) / huu
			dx, dy = d*u.X, d*u.Y
		} else {
			det := hxx*hyy - hxy*hxy
			if !(det > 1e-9*hxx*hyy) {
				t.samples = s
				return p0, false
			}
			dx = -(hyy*bx - hxy*by) / det
			dy = -(hxx*by - hxy*bx) / det
		}
		p.X += dx
		p.Y += dy
		if math.Abs(p.X-p0.X) > refineReach || math.Abs(p.Y-p0.Y) > refineReach {
			t.samples = s
			return p0, false
		}
		if math.Abs(dx) < refineTol && math.Abs(dy) < refineTol {
			break
		}
	}
	t.samples = s
	return p, true
}

// cubicAt is the w-wide frame f at (x, y), interpolated by Keys' cubic
// convolution (a = −½): exact on quadratics, and smoothing the image far
// less than bilinear interpolation does, whose smoothing changes with
// the fraction and would bring back a (smaller) pixel-locking error.
// The caller keeps (x, y) at least one pixel inside the frame's border
// and two from its far side.
func cubicAt(f []float64, w int, x, y float64) float64 {
	x0, y0 := math.Floor(x), math.Floor(y)
	ix, iy := int(x0), int(y0)
	var kx, ky [4]float64
	keys(x-x0, &kx)
	keys(y-y0, &ky)
	var out float64
	for j := range 4 {
		row := f[(iy-1+j)*w+ix-1 : (iy-1+j)*w+ix+3]
		out += ky[j] * (kx[0]*row[0] + kx[1]*row[1] + kx[2]*row[2] + kx[3]*row[3])
	}
	return out
}

// keys sets k to the weights of the pixels at −1, 0, 1, 2 for a sample
// at fraction u ∈ [0, 1) past pixel 0 (Keys 1981, a = −½).
func keys(u float64, k *[4]float64) {
	u2, u3 := u*u, u*u*u
	k[0] = -0.5*u3 + u2 - 0.5*u
	k[1] = 1.5*u3 - 2.5*u2 + 1
	k[2] = -1.5*u3 + 2*u2 + 0.5*u
	k[3] = 0.5*u3 - 0.5*u2
}

// supportFrames bounds the frames moving reads: evenly spaced through
// the runs, enough for every pixel's two sums to settle.
const supportFrames = 60

// moving returns the template of frame f0 (w wide) at box b, mask m,
// matched in the frames of clip clip of sm,
// reduced to the pixels that move with the object, and true; or nil and
// false when it keeps too few of them or has none to drop. A template
// is cut around what changed between a frame and the background, and
// where the object is plain (a block of one colour, a cable) what
// changed is the band its edge swept, ringed by background: static
// texture, which pulls every match towards the template's own
// position — measured on a block's edge, the path shrank by 3–5 % and
// bent with the texture it crossed (0.03 px rms on a 2 px swing). A
// pixel q belongs to the object when the frames, followed to where the
// object is (p_k), repeat it better than they do in place (p₀, where
// the template was cut):
//
//	Σ_k (f_k(q + p_k) − T_q)² ≤ Σ_k (f_k(q + p₀) − T_q)²,
//
// over frames k of the runs (an exposure change moves both sums alike;
// fitting each frame's gain and offset first was measured no better:
// the stress test's tracked γ1 0.0023 rms against 0.0018). A plain
// pixel, equal either way, is kept; it has no gradient to pull with.
func (t *template) moving(f0 []float64, w, h int, b Box, m []bool, sm *soft, clip int, runs []span, pos []Point) (*template, bool) {
	var ks []int
	total := 0
	for _, sp := range runs {
		total += sp.hi - sp.lo
	}
	if total == 0 {
		return nil, false
	}
	step := max(1, total/supportFrames)
	i := 0
	for _, sp := range runs {
		for k := sp.lo; k < sp.hi; k++ {
			if i%step == 0 {
				ks = append(ks, k)
			}
			i++
		}
	}
	keep := make([]bool, b.W*b.H)
	kept, had := 0, 0
	for y, rs := range t.rows {
		for _, rn := range rs {
			for x := rn.x0; x < rn.x1; x++ {
				had++
				tq := f0[(b.Y+y)*w+b.X+x]
				var sMove, sStill float64
				for _, k := range ks {
					px, py := pos[k].X+float64(x), pos[k].Y+float64(y)
					if px < 1 || py < 1 || px >= float64(w-2) || py >= float64(h-2) {
						continue
					}
					f := sm.frame(clip, k)
					d := cubicAt(f, w, px, py) - tq
					sMove += d * d
					d = f[(b.Y+y)*w+b.X+x] - tq
					sStill += d * d
				}
				if sMove <= sStill {
					keep[y*b.W+x] = true
					kept++
				}
			}
		}
	}
	if kept == had || 2*kept < had || kept < minTemplate*minTemplate {
		return nil, false
	}
	if m != nil {
		for j := range keep {
			keep[j] = keep[j] && m[j]
		}
	}
	nt := newFine(f0, w, b, keep)
	return nt, nt != nil
}

// soft holds the clips' frames smoothed by a 3×3 binomial kernel
// (¼[1 2 1] along each axis, a Gaussian of σ ≈ 0.7 px), each made when
// first asked for; safe for concurrent use.
type soft struct {
	w, h   int
	clips  [][][]float64
	once   [][]sync.Once
	frames [][][]float64
}

func newSoft(clips [][][]float64, w, h int) *soft {
	s := &soft{w: w, h: h, clips: clips, once: make([][]sync.Once, len(clips)), frames: make([][][]float64, len(clips))}
	for m, c := range clips {
		s.once[m] = make([]sync.Once, len(c))
		s.frames[m] = make([][]float64, len(c))
	}
	return s
}

// frame is clip m's frame i smoothed.
func (s *soft) frame(m, i int) []float64 {
	s.once[m][i].Do(func() { s.frames[m][i] = binomial(s.clips[m][i], s.w, s.h) })
	return s.frames[m][i]
}

// binomial is f (w×h) smoothed by ¼[1 2 1] along x, then along y, edges
// replicated; a frame less than 2 px wide or high is copied as it is.
func binomial(f []float64, w, h int) []float64 {
	out := make([]float64, len(f))
	if w < 2 || h < 2 {
		copy(out, f)
		return out
	}
	// Three rows smoothed along x, rolling down the frame.
	rows := make([]float64, 3*w)
	smoothRow := func(dst, row []float64) {
		dst[0] = (3*row[0] + row[1]) / 4
		for x := 1; x < w-1; x++ {
			dst[x] = (row[x-1] + 2*row[x] + row[x+1]) / 4
		}
		dst[w-1] = (row[w-2] + 3*row[w-1]) / 4
	}
	up, mid, down := rows[:w], rows[w:2*w], rows[2*w:]
	smoothRow(mid, f[:w])
	copy(up, mid)
	for y := range h {
		if y+1 < h {
			smoothRow(down, f[(y+1)*w:(y+2)*w])
		} else {
			copy(down, mid)
		}
		o := out[y*w : (y+1)*w]
		for x := range o {
			o[x] = (up[x] + 2*mid[x] + down[x]) / 4
		}
		up, mid, down = mid, down, up
	}
	return out
}
