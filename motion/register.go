package motion

import (
	"math"
	"math/cmplx"
)

// Shift is a global translation of the image, in pixels of the frames it
// was measured on: X to the right, Y down. A frame moved by d shows at
// (x, y) what the still frame showed at (x − d.X, y − d.Y).
type Shift struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Norm is the shift's length in pixels.
func (d Shift) Norm() float64 { return math.Hypot(d.X, d.Y) }

// Sub returns d − e.
func (d Shift) Sub(e Shift) Shift { return Shift{d.X - e.X, d.Y - e.Y} }

// Add returns d + e.
func (d Shift) Add(e Shift) Shift { return Shift{d.X + e.X, d.Y + e.Y} }

// Scale returns d with X multiplied by sx and Y by sy: the same shift in
// pixels of a frame resized by (sx, sy).
func (d Shift) Scale(sx, sy float64) Shift { return Shift{d.X * sx, d.Y * sy} }

// prepared is what registration needs of one frame, computed once: its
// tapered spectrum (a plan2 half spectrum) for the whole-pixel search and
// its smoothed image for the fraction. The smoothed image's gradient is
// computed again for each registration (registrar.register): a window
// holds a hundred or more frames prepared at once, and two more images a
// frame were a third of a window's transient heap in the daemon.
type prepared struct {
	spec []complex128
	sm   []float64
}

// registrar measures the translation between w×h frames: phase
// correlation for the whole pixels, then Gauss–Newton (Lucas–Kanade) on
// lightly smoothed frames for the fraction. Not safe for concurrent use.
type registrar struct {
	w, h int
	plan *plan2
	// win tapers the frame towards its border (a Tukey window) so that
	// content cut by the border does not correlate with itself at zero.
	win  []float64
	buf  []complex128 // a half spectrum
	tmp  []float64
	corr []float64 // the phase correlation surface
	// rows and stmp are refine's and smooth's working rows; gx and gy
	// the gradient of the frame registered against.
	rows, stmp, gx, gy []float64
}

// newRegistrar returns a registrar for w×h frames.
func newRegistrar(w, h int) *registrar {
	plan := newPlan2(w, h)
	r := &registrar{w: w, h: h, plan: plan, buf: make([]complex128, plan.halfLen()), tmp: make([]float64, w*h), corr: make([]float64, w*h),
		rows: make([]float64, w*h), stmp: make([]float64, w*h), gx: make([]float64, w*h), gy: make([]float64, w*h)}
	r.win = make([]float64, w*h)
	tx, ty := tukey(w), tukey(h)
	for y := range h {
		for x := range w {
			r.win[y*w+x] = tx[x] * ty[y]
		}
	}
	return r
}

// tukey is a window of n points, flat over its middle half and a raised
// cosine over a quarter at each end.
func tukey(n int) []float64 {
	out := make([]float64, n)
	edge := float64(n) / 4
	for i := range out {
		d := math.Min(float64(i)+0.5, float64(n)-float64(i)-0.5)
		if d >= edge {
			out[i] = 1
		} else {
			out[i] = 0.5 - 0.5*math.Cos(math.Pi*d/edge)
		}
	}
	return out
}

// prepare computes what registration needs of frame f.
func (r *registrar) prepare(f []float64) prepared {
	var m float64
	for _, v := range f {
		m += v
	}
	m /= float64(len(f))
	for i, v := range f {
		r.tmp[i] = (v - m) * r.win[i]
	}
	p := prepared{spec: make([]complex128, r.plan.halfLen())}
	r.plan.forward(p.spec, r.tmp)
	p.sm = smoothInto(r.stmp, f, r.w, r.h)
	return p
}

// coarse returns the whole-pixel translation of b relative to a: the
// peak of their phase correlation, in [−w/2, w/2) × [−h/2, h/2). The
// normalised cross-power spectrum of two real frames is Hermitian, so its
// half determines the (real) correlation surface.
func (r *registrar) coarse(a, b *prepared) Shift {
	for i := range r.buf {
		c := cmplx.Conj(a.spec[i]) * b.spec[i]
		if m := cmplx.Abs(c); m > 1e-12 {
			// c/m component-wise: Go's complex division by complex(m, 0)
			// computes the same quotients (but for the sign of a zero) by
			// its general algorithm.
			r.buf[i] = complex(real(c)/m, imag(c)/m)
		} else {
			r.buf[i] = 0
		}
	}
	r.plan.inverse(r.corr, r.buf)
	best, bi := math.Inf(-1), 0
	for i, v := range r.corr {
		if v > best {
			best, bi = v, i
		}
	}
	x, y := bi%r.w, bi/r.w
	if x >= r.w/2 {
		x -= r.w
	}
	if y >= r.h/2 {
		y -= r.h
	}
	return Shift{float64(x), float64(y)}
}

// register measures the translation d of frame b relative to frame a,
// b(x) ≈ a(x − d), and the relative residual once aligned (see Register).
func (r *registrar) register(a, b *prepared) (Shift, float64, bool) {
	gradientInto(r.gx, r.gy, a.sm, r.w, r.h)
	return refineInto(r.rows, r.gx, r.gy, a, b, r.w, r.h, r.coarse(a, b))
}

// Register measures the translation d of the w×h frame b relative to a,
// b(x) ≈ a(x − d), to a fraction of a pixel, and how well the two frames
// agree once aligned: the residual's energy over b's variance on the
// overlap (0 for a pure translation, about 2 for unrelated frames). ok is
// false when the frames are smaller than 8×8, flat or barely overlap.
func Register(a, b []float64, w, h int) (d Shift, resid float64, ok bool) {
	if w < 8 || h < 8 || len(a) != w*h || len(b) != w*h {
		return Shift{}, math.NaN(), false
	}
	r := newRegistrar(w, h)
	pa, pb := r.prepare(a), r.prepare(b)
	return r.register(&pa, &pb)
}

// smoothInto returns f convolved with a Gaussian of σ = 1 pixel (border
// repeated), which widens the basin of the fractional alignment.
// tmp (w·h) is its working store.
func smoothInto(tmp, f []float64, w, h int) []float64 {
	k := [...]float64{0.00443305, 0.05400558, 0.24203623, 0.39905028, 0.24203623, 0.05400558, 0.00443305}
	out := make([]float64, w*h)
	for y := range h {
		for x := range w {
			var s float64
			for i, c := range k {
				s += c * f[y*w+min(max(x+i-3, 0), w-1)]
			}
			tmp[y*w+x] = s
		}
	}
	for y := range h {
		for x := range w {
			var s float64
			for i, c := range k {
				s += c * tmp[min(max(y+i-3, 0), h-1)*w+x]
			}
			out[y*w+x] = s
		}
	}
	return out
}

// refineInto minimises E(d) = Σ_x (b(x + d) − a(x))² over the pixels x of a
// whose image x + d lies at least a pixel inside b, from d0, by
// Gauss–Newton in the inverse compositional form: with r = b(x + d) − a(x)
// and the gradient g = ∇a(x) at whole pixels, the step δ solves
// (Σ g gᵀ) δ = Σ g r and d ← d − δ. b is sampled by cubic convolution; as
// d is the same for every pixel, so are the weights, and the sampling is
// separable: along x into rows, then along y.
// gx and gy are a's gradient (gradientInto of a.sm). rows (w·h) is its
// working store: every entry it reads it has written in the same
// iteration.
func refineInto(rows, gx, gy []float64, a, b *prepared, w, h int, d Shift) (Shift, float64, bool) {
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
		// The taps' sums are formed in the same order everywhere (bit for
		// bit as a loop over the four taps); only the border columns
		// clamp their indices.
		xa := min(max(x0, 1-ix), x1+1) // first x whose taps lie inside the row
		xb := max(min(x1, w-3-ix), xa-1)
		for y := max(0, y0+iy-1); y <= min(h-1, y1+iy+2); y++ {
			row := b.sm[y*w : (y+1)*w]
			out := rows[y*w : (y+1)*w]
			clamped := func(x int) {
				j := x + ix - 1
				var v float64
				for i := range 4 {
					v += wx[i] * row[min(max(j+i, 0), w-1)]
				}
				out[x] = v
			}
			for x := x0; x < xa; x++ {
				clamped(x)
			}
			for x := xa; x <= xb; x++ {
				t := row[x+ix-1 : x+ix+3]
				v := wx[0] * t[0]
				v += wx[1] * t[1]
				v += wx[2] * t[2]
				v += wx[3] * t[3]
				out[x] = v
			}
			for x := xb + 1; x <= x1; x++ {
				clamped(x)
			}
		}
		var hxx, hxy, hyy, bx, by, rr, bb, bm float64
		for y := y0; y <= y1; y++ {
			j := y + iy - 1
			r0 := rows[min(max(j, 0), h-1)*w : min(max(j, 0), h-1)*w+w]
			r1 := rows[min(max(j+1, 0), h-1)*w : min(max(j+1, 0), h-1)*w+w]
			r2 := rows[min(max(j+2, 0), h-1)*w : min(max(j+2, 0), h-1)*w+w]
			r3 := rows[min(max(j+3, 0), h-1)*w : min(max(j+3, 0), h-1)*w+w]
			for x := x0; x <= x1; x++ {
				v := wy[0] * r0[x]
				v += wy[1] * r1[x]
				v += wy[2] * r2[x]
				v += wy[3] * r3[x]
				o := y*w + x
				r := v - a.sm[o]
				u, q := gx[o], gy[o]
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

// gradientInto sets gx and gy (w·h each) to the central-difference
// gradient of the w×h image f (one-sided at the border).
func gradientInto(gx, gy, f []float64, w, h int) {
	for y := range h {
		for x := range w {
			x0, x1 := max(x-1, 0), min(x+1, w-1)
			y0, y1 := max(y-1, 0), min(y+1, h-1)
			gx[y*w+x] = (f[y*w+x1] - f[y*w+x0]) / float64(x1-x0)
			gy[y*w+x] = (f[y1*w+x] - f[y0*w+x]) / float64(y1-y0)
		}
	}
}
