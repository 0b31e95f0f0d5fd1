package window

import (
	"math"
	"sort"

	"github.com/physd/physd/internal/order"
)

// revisitMetric compares a window's frames where its latent lives.
//
// Weights: ω_p = corr(x_p, z)², the share of pixel p's variance over the
// window that the latent explains (each clip centred on its own means).
// The moving object's pixels carry the latent and weigh near 1; static
// background, sensor noise, and a passer-by, hand or shadow that the
// latent does not follow weigh near 0. An encoder that folds a monotone
// motion still reads it from the object's pixels, which keep their
// weight, so the fold stays visible.
//
// Exposure: when at least a tenth of the pixels are background (ω_p <
// 0.1), each frame is mapped onto the mean frame by the affine map
// x ↦ (x − b)/a fitted on those pixels (least squares, then again
// without the pixels more than 3 robust σ off, which a passer-by would
// be). A scene whose state is its brightness has no such background and
// is compared as it is.
//
// Distance: d(a, b) = √(Σ ω_p (a_p − b_p)² / Σ ω_p).
type revisitMetric struct {
	frames     [][][]float64
	w          []float64
	wsum       float64
	mean       []float64
	background []int
	// gain[m][k], offset[m][k]: frame k of clip m's exposure map; norm
	// the frames it normalises, each computed once for every level.
	gain, offset [][]float64
	norm         [][][]float64
}

// backgroundR2 is the largest share of a pixel's variance the latent may
// explain for the pixel to count as background.
const backgroundR2 = 0.1

func newRevisitMetric(z [][]float64, frames [][][]float64) *revisitMetric {
	P := len(frames[0][0])
	met := &revisitMetric{frames: frames, w: make([]float64, P), mean: make([]float64, P)}
	sxz, sxx := make([]float64, P), make([]float64, P)
	var szz float64
	n := 0
	pm := make([]float64, P)
	for m, fm := range frames {
		clear(pm)
		var zm float64
		for k, f := range fm {
			zm += z[m][k]
			for p, v := range f {
				pm[p] += v
			}
		}
		inv := 1 / float64(len(fm))
		zm *= inv
		for p := range pm {
			pm[p] *= inv
		}
		for k, f := range fm {
			dz := z[m][k] - zm
			szz += dz * dz
			for p, v := range f {
				d := v - pm[p]
				sxz[p] += d * dz
				sxx[p] += d * d
				met.mean[p] += v
			}
			n++
		}
	}
	for p := range met.mean {
		met.mean[p] /= float64(n)
	}
	for p := range met.w {
		if sxx[p] > 0 && szz > 0 {
			met.w[p] = sxz[p] * sxz[p] / (sxx[p] * szz)
		}
		met.wsum += met.w[p]
		if met.w[p] < backgroundR2 {
			met.background = append(met.background, p)
		}
	}
	if len(met.background) < P/10 {
		met.background = nil
	}
	met.gain = make([][]float64, len(frames))
	met.offset = make([][]float64, len(frames))
	met.norm = make([][][]float64, len(frames))
	for m, fm := range frames {
		met.gain[m] = make([]float64, len(fm))
		met.offset[m] = make([]float64, len(fm))
		met.norm[m] = make([][]float64, len(fm))
	}
	return met
}

// normaliseFrames fits the exposure maps of the frames need marks
// (need[m][k]) and normalises them: the revisit test reads the frames
// at the levels' crossings, a fraction of the window, and a map and a
// normalised copy of every frame were most of its time and memory.
func (met *revisitMetric) normaliseFrames(need [][]bool) {
	for m, nm := range need {
		for k, ok := range nm {
			if ok {
				met.gain[m][k], met.offset[m][k] = met.exposure(met.frames[m][k])
				met.norm[m][k] = met.normalise(m, k)
			}
		}
	}
}

// exposure fits f_p ≈ a·μ_p + b on the background pixels, robustly.
func (met *revisitMetric) exposure(f []float64) (a, b float64) {
	if met.background == nil {
		return 1, 0
	}
	fit := func(keep func(p int) bool) (float64, float64, bool) {
		var n, sx, sy, sxx, sxy float64
		for _, p := range met.background {
			if !keep(p) {
				continue
			}
			x, y := met.mean[p], f[p]
			n++
			sx += x
			sy += y
			sxx += x * x
			sxy += x * y
		}
		den := n*sxx - sx*sx
		if n < 3 || !(den > 1e-12*n*n) {
			return 1, 0, false
		}
		a := (n*sxy - sx*sy) / den
		return a, (sy - a*sx) / n, true
	}
	a, b, ok := fit(func(int) bool { return true })
	if !ok {
		return 1, 0
	}
	res := make([]float64, len(met.background))
	for i, p := range met.background {
		res[i] = math.Abs(f[p] - a*met.mean[p] - b)
	}
	cut := 3 * 1.4826 * order.Select(res, len(res)/2) // the median
	if cut > 0 {
		if a2, b2, ok := fit(func(p int) bool { return math.Abs(f[p]-a*met.mean[p]-b) <= cut }); ok {
			a, b = a2, b2
		}
	}
	if !(a > 0.05) {
		return 1, 0
	}
	return a, b
}

// frame returns frame k of clip m, exposure-normalised
// (normaliseFrames must have marked it).
func (met *revisitMetric) frame(m, k int) []float64 { return met.norm[m][k] }

// normalise computes frame k of clip m, exposure-normalised: the frame
// itself when its map is the identity.
func (met *revisitMetric) normalise(m, k int) []float64 {
	f := met.frames[m][k]
	a, b := met.gain[m][k], met.offset[m][k]
	if a == 1 && b == 0 {
		return f
	}
	out := make([]float64, len(f))
	for p, v := range f {
		out[p] = (v - b) / a
	}
	return out
}

// frameAt interpolates linearly between the normalised frames of clip m
// around fractional index x, into dst (len P) when it must blend two;
// a frame that needs no blend is returned as it is.
func (met *revisitMetric) frameAt(dst []float64, m int, x float64) []float64 {
	n := len(met.frames[m])
	k := min(max(int(math.Floor(x)), 0), n-1)
	f := x - float64(k)
	if k+1 >= n || f <= 0 {
		return met.frame(m, k)
	}
	a, b := met.frame(m, k), met.frame(m, k+1)
	out := dst[:len(a)]
	for i := range out {
		out[i] = (1-f)*a[i] + f*b[i]
	}
	return out
}

// diff is the weighted RMS difference d(a, b).
func (met *revisitMetric) diff(a, b []float64) float64 {
	if !(met.wsum > 0) {
		return 0
	}
	var s float64
	for p, w := range met.w {
		d := a[p] - b[p]
		s += w * d * d
	}
	return math.Sqrt(s / met.wsum)
}

// concentration is the share of the total weight on the busiest tenth of
// the pixels.
func (met *revisitMetric) concentration() float64 {
	if !(met.wsum > 0) {
		return 0
	}
	w := append([]float64(nil), met.w...)
	sort.Sort(sort.Reverse(sort.Float64Slice(w)))
	var s float64
	for _, v := range w[:max(1, len(w)/10)] {
		s += v
	}
	return s / met.wsum
}
