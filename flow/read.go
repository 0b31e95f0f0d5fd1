package flow

import (
	"cmp"
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
	// Binned is how many frame pixels a side of the pixels read spans:
	// 1, or 2 when the motion was too large for the frame's own pixels
	// and the frames were read binned 2×2 (ReadBinned). Z and Noise are
	// in frame pixels either way.
	Binned int
	// Explained is the share of the moving pixels' change the linear
	// model explains (0 when nothing moves): 0.8–0.97 for a structure's
	// sub-pixel swing, 0.5–0.7 for one near its noise floor, 0.06–0.22
	// for a cart swinging tens of pixels, whose reading saturates into
	// something small-looking (MinExplained).
	Explained float64
	// Pixels is how many pixels were read, and Moving how many of them
	// move with Z beyond their noise (0: nothing moves, and Z is read
	// over every pixel).
	Pixels, Moving int
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

// Linear reports whether the motion is within the linear model of the
// pixels it was read on: its peak no more than MaxPeak of them.
func (r *Reading) Linear() bool { return r.Peak() <= MaxPeak*float64(max(r.Binned, 1)) }

// LinearFrom is the first frame from which the displacement stays within
// the linear model of the pixels it was read on (MaxPeak of them): 0 when
// it always is, len(Z) when its last frame is not. A free decay released
// beyond the model enters it as its swing dies down; read from there on,
// it is a free decay all the same.
func (r *Reading) LinearFrom() int {
	lim := MaxPeak * float64(max(r.Binned, 1))
	for t := len(r.Z) - 1; t >= 0; t-- {
		if math.Abs(r.Z[t]) > lim {
			return t + 1
		}
	}
	return 0
}

// Amplitude is Z's amplitude with its noise taken out, √(2·max(rms² −
// Noise², 0)): a sinusoid's peak, zero for noise alone.
func (r *Reading) Amplitude() float64 { return r.amplitude(r.Z) }

// Span is the frames [from, to) a free decay is read over: from where
// its swing is within the linear model (LinearFrom: beyond it the
// reading saturates, a large swing read small) until it meets the floor
// (resolvedSpan). A steady or driven response keeps every linear frame.
func (r *Reading) Span() (from, to int) {
	from = r.LinearFrom()
	return from, from + resolvedSpan(r.Z[from:])
}

// SpanAmplitude is the largest amplitude the motion reaches over Span,
// the frames the readout's fit uses: Amplitude of its loudest stretch of
// decayPeriods periods of its dominant frequency (the whole span when it
// holds fewer than two). A steady sinusoid's is its amplitude; a free
// decay's, the amplitude it was released at. The whole window's rms would
// dilute a decay with the noise after it, and rate a fast one — the
// easiest to read damping from — below a slow one of the same swing.
func (r *Reading) SpanAmplitude() float64 { return r.spanAmplitude(r.Span()) }

// spanAmplitude is SpanAmplitude over the span [from, to).
func (r *Reading) spanAmplitude(from, to int) float64 {
	z := r.Z[from:to]
	f := dominantBin(z)
	if f == 0 {
		return r.amplitude(z)
	}
	w := int(math.Round(decayPeriods * float64(len(z)) / float64(f)))
	if w < 4 || len(z)/w < 2 {
		return r.amplitude(z)
	}
	var a float64
	for b := 0; b+w <= len(z); b += w {
		a = max(a, r.amplitude(z[b:b+w]))
	}
	return a
}

// amplitude is √(2·max(rms² − Noise², 0)) of z about its own mean.
func (r *Reading) amplitude(z []float64) float64 {
	if len(z) == 0 {
		return 0
	}
	var mean, s float64
	for _, v := range z {
		mean += v / float64(len(z))
	}
	for _, v := range z {
		s += (v - mean) * (v - mean)
	}
	return math.Sqrt(2 * max(s/float64(len(z))-r.Noise*r.Noise, 0))
}

// Errors of Read.
var (
	// ErrFlat reports a clip with no gradient to read motion from.
	ErrFlat = errors.New("flow: the region has no texture or edge to read motion from")
	// ErrShort reports a clip with too few frames.
	ErrShort = errors.New("flow: too few frames")
)

// edge is how far above the largest singular value of noise alone the
// common motion's must be to be told from it.
const edge = 1.3

// aperture is the smallest ratio of a cell's second gradient eigenvalue
// to its first for the cell to tell motion along both directions; below
// it the cell (an edge, a cable) reads only motion across its edge.
const aperture = 0.05

// components is how many leading components of the cells' changes are
// weighed as the structure's motion: a compressed stream's slow drift of
// the texture (an encoder's P-frames smoothing or sharpening it over a
// group of pictures) and a scene's other changes are often stronger than
// a sub-pixel motion, and coherent across cells too.
const components = 4

// Read reads the displacement of the moving part of a clip from its
// intensity gradients. Frames and their mean I₀, the reference, are
// smoothed alike (smooth) and g = ∇I₀ (newGrid). Each frame's difference
// from the reference, ΔI = I − I₀, is cleared of a change of exposure,
// a + b·(I₀ − Ī₀) fitted over the frame (a camera's gain, a keyframe's
// brightness step). Then:
//
// The motion's time course is found on cells of pixels (motion): each
// cell's structure tensor S_c = Σ g gᵀ and data b_c(t) = −Σ ΔI(t) g give
// rows along S_c's eigenvectors e_k (eigenvalues λ_k),
//
//	r_ck(t) = e_k·b_c(t) / √λ_k  =  √λ_k e_k·d_c(t) + noise,
//
// each divided by its own noise, whose leading singular vectors are the
// changes common to the cells; the one whose pixel responses look most
// like a displacement is the motion's, v(t).
//
// Pixels then read it (refine): the ones that move with v, as their
// gradients say a displacement would, give the direction and the
// displacement, by least squares.
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
	if d := roughDisplacement(c.Frames, raw, w, h); d > 8*MaxPeak {
		return nil, fmt.Errorf("%w: the frames change as a displacement of about %.2g frame px would", ErrLarge, d)
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
	v, still := g.motion(d, g.rows(d, n), n)
	// The pixels' responses to v and the direction they give over all
	// pixels start the reading.
	a := g.responses(d, v)
	u, _ := g.fitDirection(a, nil)
	z0, _ := g.read(d, n, u, nil, nil)
	if z0 == nil {
		return nil, ErrFlat
	}
	r := g.refine(d, n, z0, u, still, false)
	if r.Peak() > 4*MaxPeak || r.Moving > 0 && r.Explained < MinExplained/2 {
		// Far past the linear model — the first reading only grows
		// when refined, and a large swing read small leaves most of
		// the moving pixels' change unexplained: the caller reads this
		// motion otherwise.
		r.Pixels, r.Binned = len(g.interior), 1
		return r, nil
	}
	r = g.refine(d, n, r.Z, r.Dir, still, true)
	r.Pixels, r.Binned = len(g.interior), 1
	return r, nil
}

// ReadBinned is Read, and when the motion is too large for the frame's
// own pixels (Linear false) Read again on the frames binned 2×2 — the
// linear model's range in frame pixels doubles — with Z and Noise
// brought back to frame pixels. A reading on binned frames that fails, or
// is not linear either and enters its range no sooner (LinearFrom),
// leaves the first. (Reading the binned frames
// first, to stop early on a large swing, lost a 0.5 px swing at CRF 18
// whose binned reading the linear model explained poorly.)
func ReadBinned(c estimator.Clip) (*Reading, error) {
	r, err := Read(c)
	if err != nil || r.Linear() || r.Peak() > 4*MaxPeak || c.W/2 <= 2*margin || c.H/2 <= 2*margin {
		return r, err
	}
	r2, err := Read(bin2(c))
	if err != nil {
		return r, nil
	}
	for t := range r2.Z {
		r2.Z[t] *= 2
	}
	r2.Noise *= 2
	r2.Binned = 2
	if !r2.Linear() && r2.LinearFrom() >= r.LinearFrom() {
		return r, nil
	}
	return r2, nil
}

// bin2 averages c's frames over 2×2 blocks (an odd last row or column is
// dropped).
func bin2(c estimator.Clip) estimator.Clip {
	w, h := c.W/2, c.H/2
	out := estimator.Clip{W: w, H: h, Dt: c.Dt, Frames: make([][]float64, len(c.Frames))}
	for k, f := range c.Frames {
		b := make([]float64, w*h)
		for y := range h {
			r0, r1 := f[2*y*c.W:], f[(2*y+1)*c.W:]
			for x := range w {
				b[y*w+x] = (r0[2*x] + r0[2*x+1] + r1[2*x] + r1[2*x+1]) / 4
			}
		}
		out.Frames[k] = b
	}
	return out
}

// roughDisplacement is a cheap bound-like guess of how far the frames
// move, in frame pixels: the rms change from the mean frame over the rms
// gradient of the mean frame, √(Σ_t Σ_p ΔI² / (n Σ_p |∇I₀|²)), on every
// second row. It reads a small displacement low (only the moving part
// changes) and a large one far beyond the linear model high, which is
// all it is for: motion many pixels wide is not read.
func roughDisplacement(frames [][]float64, mean []float64, w, h int) float64 {
	var gg, dd float64
	for y := 1; y < h-1; y += 2 {
		for x := 1; x < w-1; x++ {
			i := y*w + x
			gx, gy := (mean[i+1]-mean[i-1])/2, (mean[i+w]-mean[i-w])/2
			gg += gx*gx + gy*gy
		}
	}
	for _, f := range frames {
		for y := 1; y < h-1; y += 2 {
			r, m := f[y*w+1:y*w+w-1], mean[y*w+1:y*w+w-1]
			for x, v := range r {
				e := v - m[x]
				dd += e * e
			}
		}
	}
	if !(gg > 0) {
		return math.Inf(1)
	}
	return math.Sqrt(dd / (float64(len(frames)) * gg))
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

// rows are the cells' whitened rows r_ck (Read), temporal mean removed,
// each divided by its own noise, from its second differences: smoothing
// the frames makes the noise of a cell whose gradients vary slowly larger
// than its √λ promises, and a compressed stream's noise differs from
// block to block.
func (g *grid) rows(d [][]float64, n int) [][]float64 {
	var rows [][]float64
	r := make([]float64, n)
	dd := make([]float64, n-2)
	for k := range g.cells {
		cl := &g.cells[k]
		for ax := range 2 {
			if cl.lam[ax] < aperture*cl.lam[0] {
				continue
			}
			e, s := cl.vec[ax], 1/math.Sqrt(cl.lam[ax])
			for t := range n {
				var b float64
				for _, p := range cl.pix {
					b -= d[t][p] * (e[0]*g.gx[g.interior[p]] + e[1]*g.gy[g.interior[p]])
				}
				r[t] = b * s
			}
			center(r)
			for t := 1; t < n-1; t++ {
				dd[t-1] = math.Abs(r[t+1] - 2*r[t] + r[t-1])
			}
			sj := median(dd) / 0.6745 / math.Sqrt(6)
			if !(sj > 0) {
				continue
			}
			nr := make([]float64, n)
			for t, x := range r {
				nr[t] = x / sj
			}
			rows = append(rows, nr)
		}
	}
	return rows
}

// motion picks, among the leading components of the cell rows (singular
// vectors by deflation) whose singular value clears noise's (the
// Marchenko–Pastur edge √R + √n of R unit-noise rows), the one that looks
// most like a displacement: the one whose pixel responses a_p (responses)
// are best explained by the gradients, as a_p = −g_p·u (displacementShare).
// A drift of the texture or a change of light changes the pixels, but
// not as their gradients say a displacement would. still is true when no
// component clears the noise; v is then the leading one.
func (g *grid) motion(d [][]float64, rows [][]float64, n int) (v []float64, still bool) {
	mp := edge * (math.Sqrt(float64(len(rows))) + math.Sqrt(float64(n)))
	vals, vecs := leadingComponents(rows, n, components)
	best := -1.0
	for k, c := range vecs {
		if k == 0 {
			v = c
		}
		if math.Sqrt(max(vals[k], 0)) < mp {
			break
		}
		if sc := g.displacementShare(g.responses(d, c)); sc > best {
			best, v = sc, c
		}
	}
	return v, best < 0
}

// responses are the pixels' responses to the time course z,
// a_p = Σ_t ΔI_p(t) z(t) / Σ_t z(t)² (z's scale, or Σ_t ΔI_p(t) z(t) for
// a unit vector).
func (g *grid) responses(d [][]float64, z []float64) []float64 {
	a := make([]float64, len(g.interior))
	var zz float64
	for t, x := range z {
		zz += x * x
		for p, v := range d[t] {
			a[p] += v * x
		}
	}
	if zz > 0 {
		for p := range a {
			a[p] /= zz
		}
	}
	return a
}

// fitDirection fits the responses a as a displacement's, a_p = −g_p·u, by
// least squares over the pixels keep selects (nil: all), and returns û
// (solve2) and the share of Σ a_p² the fit explains.
func (g *grid) fitDirection(a []float64, keep []bool) ([2]float64, float64) {
	var S [3]float64
	var r [2]float64
	var aa float64
	for p, i := range g.interior {
		if keep != nil && !keep[p] {
			continue
		}
		gx, gy := g.gx[i], g.gy[i]
		S[0] += gx * gx
		S[1] += gx * gy
		S[2] += gy * gy
		r[0] -= a[p] * gx
		r[1] -= a[p] * gy
		aa += a[p] * a[p]
	}
	u := solve2(S, r)
	det := S[0]*S[2] - S[1]*S[1]
	if !(det > 0) || !(aa > 0) {
		return u, 0
	}
	ux, uy := (S[2]*r[0]-S[1]*r[1])/det, (S[0]*r[1]-S[1]*r[0])/det
	// Explained: the fitted responses' energy, uᵀ S u.
	return u, (ux*ux*S[0] + 2*ux*uy*S[1] + uy*uy*S[2]) / aa
}

// displacementShare is the share of Σ a_p² that a_p = −g_p·u explains.
func (g *grid) displacementShare(a []float64) float64 {
	_, s := g.fitDirection(a, nil)
	return s
}

// read is the least-squares displacement along u of the pixels keep
// selects (nil: all), each weighed by w_p (nil: 1),
//
//	z(t) = −Σ_p w_p ΔI_p(t) (g_p·u) / Σ_p w_p (g_p·u)²,
//
// about its mean, and its denominator; nil when no pixel has a gradient
// along u. With w_p = 1/σ_p², σ_p the pixel's noise, z's noise is
// 1/√denominator.
func (g *grid) read(d [][]float64, n int, u [2]float64, keep func(p int) bool, w []float64) ([]float64, float64) {
	z := make([]float64, n)
	var den float64
	for p, i := range g.interior {
		if keep != nil && !keep(p) {
			continue
		}
		gu := g.gx[i]*u[0] + g.gy[i]*u[1]
		if gu == 0 {
			continue
		}
		if w != nil {
			gu *= w[p]
		}
		den += gu * (g.gx[i]*u[0] + g.gy[i]*u[1])
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

// refine reads the displacement again from the pixels that move with z0
// along u. A pixel's response a_p (responses) is −g_p·u for a pixel that
// moves with z0 (on its scale) and 0 for one that stays: the moving ones
// are those whose a_p is significant (beyond 3 σ_a, σ_a = σ/√Σz0², σ the
// pixels' median residual noise) and whose ratio ρ_p = −a_p/(g_p·û) is
// within a factor of four of the significant ones' median ratio, weighed
// by their gradient energy (g_p·û)² (a strong edge speaks for the
// object; a codec's smoothed background has weak gradients and noisy
// ratios) —
// a background pixel a compressed stream changes with the motion (an
// encoder's motion vectors bleed into the blocks around a moving edge)
// is significant too, but not as its gradient says. Over the moving
// pixels the direction is fitted again (fitDirection) and z read along it
// (read), with noise σ/√Σ_p (g_p·û)², or the spread between two halves of
// the moving pixels (alternate cells) read apart, less what they share
// with z, when that is larger: compressed video's noise is not
// independent from pixel to pixel (the final pass only). With fewer than
// minMoving moving pixels, or still, z is read over every pixel. Every
// pixel is weighed by its residual noise.
func (g *grid) refine(d [][]float64, n int, z0 []float64, u [2]float64, still, final bool) *Reading {
	var zz float64
	for _, v := range z0 {
		zz += v * v
	}
	a := g.responses(d, z0)
	P := len(g.interior)
	res := make([]float64, P)
	for t := range n {
		for p, v := range d[t] {
			e := v - a[p]*z0[t]
			res[p] += e * e
		}
	}
	for p := range res {
		res[p] = math.Sqrt(res[p] / float64(n-1))
	}
	sigma := median(res)
	moves := make([]bool, P)
	count := 0
	if !still && zz > 0 {
		sa := sigma / math.Sqrt(zz)
		rho := make([]float64, P)
		var sig, wt []float64
		for p, i := range g.interior {
			gu := g.gx[i]*u[0] + g.gy[i]*u[1]
			if gu != 0 && math.Abs(a[p]) > 3*sa {
				rho[p] = -a[p] / gu
				if rho[p] > 0 {
					sig, wt = append(sig, rho[p]), append(wt, gu*gu)
				}
			}
		}
		if len(sig) > 0 {
			m := weightedMedian(sig, wt)
			for p := range rho {
				if rho[p] > m/4 && rho[p] < 4*m {
					moves[p] = true
					count++
				}
			}
		}
	}
	if count < minMoving(P) {
		count = 0
		for p := range moves {
			moves[p] = true
		}
	} else {
		u, _ = g.fitDirection(a, moves)
	}
	// Each pixel weighed by its own noise: a compressed stream's is
	// larger at edges and differs from block to block.
	w := make([]float64, P)
	floor := sigma * sigma / 4
	for p := range w {
		w[p] = 1 / max(res[p]*res[p], floor)
	}
	z, za, zb, den := g.readHalves(d, n, u, moves, w)
	if z == nil {
		return &Reading{Z: z0, Dir: u, Noise: math.Inf(1)}
	}
	noise := 1 / math.Sqrt(den)
	if final && za != nil && zb != nil {
		var dz, z2 float64
		for t := range z {
			dz += (za[t] - zb[t]) * z[t]
			z2 += z[t] * z[t]
		}
		var s float64
		for t := range z {
			e := za[t] - zb[t]
			if z2 > 0 {
				e -= dz / z2 * z[t]
			}
			s += e * e
		}
		noise = max(noise, math.Sqrt(s/float64(n))/2)
	}
	r := &Reading{Z: z, Dir: u, Noise: noise, Moving: count}
	if count > 0 {
		r.Explained = g.explained(d, z, u, moves)
	}
	return r
}

// explained is the share of the moving pixels' change that the linear
// model of a displacement z along u explains,
//
//	1 − Σ_t Σ_p (ΔI_p(t) + (g_p·u) z(t))² / Σ_t Σ_p ΔI_p(t)².
func (g *grid) explained(d [][]float64, z []float64, u [2]float64, moves []bool) float64 {
	var res, all float64
	for t, row := range d {
		for p, i := range g.interior {
			if !moves[p] {
				continue
			}
			e := row[p] + (g.gx[i]*u[0]+g.gy[i]*u[1])*z[t]
			res += e * e
			all += row[p] * row[p]
		}
	}
	if !(all > 0) {
		return 0
	}
	return 1 - res/all
}

// weightedMedian is the value below which half of the weight w of xs
// lies.
func weightedMedian(xs, w []float64) float64 {
	idx := make([]int, len(xs))
	var total float64
	for i := range idx {
		idx[i] = i
		total += w[i]
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	var acc float64
	for _, i := range idx {
		acc += w[i]
		if acc >= total/2 {
			return xs[i]
		}
	}
	return xs[idx[len(idx)-1]]
}

// readHalves is read over the pixels moves selects, weighed by w, and the
// same over the two halves of them in alternate cells, in one pass: z,
// the halves' za and zb (nil when a half is empty), and z's denominator.
func (g *grid) readHalves(d [][]float64, n int, u [2]float64, moves []bool, w []float64) (z, za, zb []float64, den float64) {
	var num [2][]float64
	var dh [2]float64
	num[0], num[1] = make([]float64, n), make([]float64, n)
	for p, i := range g.interior {
		if !moves[p] {
			continue
		}
		gu := g.gx[i]*u[0] + g.gy[i]*u[1]
		if gu == 0 {
			continue
		}
		h := g.cellOf[p] % 2
		wg := w[p] * gu
		dh[h] += wg * gu
		acc := num[h]
		for t := range n {
			acc[t] -= d[t][p] * wg
		}
	}
	den = dh[0] + dh[1]
	if !(den > 0) {
		return nil, nil, nil, 0
	}
	z = make([]float64, n)
	for t := range z {
		z[t] = (num[0][t] + num[1][t]) / den
	}
	center(z)
	half := func(h int) []float64 {
		if !(dh[h] > 0) {
			return nil
		}
		for t := range num[h] {
			num[h][t] /= dh[h]
		}
		center(num[h])
		return num[h]
	}
	return z, half(0), half(1), den
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
