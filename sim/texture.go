package sim

import (
	"math"
)

// Texture describes a static or moving band-limited random texture: a gray
// level Mean plus a zero-mean random field whose standard deviation is
// Contrast. Zero fields select the defaults of the surface the texture is
// used for (see Structure.Background and Structure.Surface).
type Texture struct {
	// Mean is the mean gray level, 0 (black) to 1 (white); 0 selects the
	// default.
	Mean float64 `json:"mean"`
	// Contrast is the standard deviation of the texture as a fraction of
	// full scale (0.1 ≈ 25 gray levels rms); 0 selects the default and a
	// negative value (Off) gives a flat surface of gray level Mean.
	Contrast float64 `json:"contrast"`
	// Scale is the lattice spacing in pixels of the finest of the texture's
	// octaves, at least 1; 0 selects the default. The texture's features
	// are about twice as large as Scale.
	Scale float64 `json:"scale"`
}

// Off, given as Structure.Noise or as a Texture's Contrast, turns that
// element off (0 there selects a default, not "none").
const Off = -1.0

// textureOctaves is the number of octaves of a texture: lattice spacings
// Scale·2^k, k = 0..textureOctaves−1, each with the same variance (a
// roughly 1/f amplitude spectrum, as in natural scenes).
const textureOctaves = 5

// beta3 is the centred cubic B-spline
//
//	β3(x) = 2/3 − x² + |x|³/2   for |x| < 1,
//	β3(x) = (2 − |x|)³/6        for 1 ≤ |x| < 2,
//	β3(x) = 0                   otherwise,
//
// a C² bump with Σ_k β3(x − k) = 1 for every x.
func beta3(x float64) float64 {
	x = math.Abs(x)
	switch {
	case x < 1:
		return 2.0/3 - x*x + x*x*x/2
	case x < 2:
		u := 2 - x
		return u * u * u / 6
	}
	return 0
}

// splineWeights returns the four cubic B-spline weights of a point at
// lattice coordinate X = a0 + f (a0 = floor(X), 0 ≤ f < 1): the point's
// value is Σ_{m=−1..2} w[m+1]·c[a0+m], with w[m+1] = β3(f − m).
func splineWeights(X float64) (a0 int, w [4]float64) {
	fl := math.Floor(X)
	f := X - fl
	for m := -1; m <= 2; m++ {
		w[m+1] = beta3(f - float64(m))
	}
	return int(fl), w
}

// textureField is a continuous texture over a W×H frame with a margin of
// pad pixels on every side,
//
//	T(X, Y) = mean + Σ_{a,b} c[a,b]·β3(X − a)·β3(Y − b),
//
// in pixel-index coordinates (pixel (i, j) has its centre at X = i,
// Y = j), with one coefficient per pixel of the padded frame. Sampling T
// at (i − dx, j − dy) renders the texture translated by (dx, dy) exactly:
// T is a fixed continuous function and the translation only changes
// where it is sampled. T stands for the pixel-integrated radiance, so a
// sample is a pixel value.
type textureField struct {
	mean     float64
	flat     bool
	w, h     int // frame size
	pad      int
	stride   int       // w + 2·pad
	c        []float64 // coefficients, c[(b+pad)·stride + a+pad]
	contrast float64
}

// newTextureField draws a texture of the given mean, contrast and finest
// lattice spacing over a w×h frame with margin pad, from seed and stream.
// With contrast ≤ 0 it is flat. The texture is a function of the plane
// that does not depend on pad (the lattice noise is a hash of its node),
// so the same seed gives the same texture whatever the motion's reach.
func newTextureField(seed int64, stream uint64, w, h, pad int, t Texture) *textureField {
	f := &textureField{mean: t.Mean, w: w, h: h, pad: pad, stride: w + 2*pad, contrast: t.Contrast}
	if !(t.Contrast > 0) {
		f.flat = true
		return f
	}
	rng := newRand(seed, stream)
	nx, ny := w+2*pad, h+2*pad
	f.c = make([]float64, nx*ny)
	var tmp []float64
	for k := 0; k < textureOctaves; k++ {
		hk := t.Scale * math.Pow(2, float64(k))
		// White noise on a lattice of spacing hk (offset at random so the
		// octaves' lattices do not line up), spread onto the padded pixel
		// lattice with cubic B-spline weights, rows then columns. Pixel
		// index a (frame column a − pad) is at lattice coordinate
		// (a − pad + off)/hk.
		offX, offY := hk*rng.Float64(), hk*rng.Float64()
		qx0 := int(math.Floor((-float64(pad)+offX)/hk)) - 2
		qy0 := int(math.Floor((-float64(pad)+offY)/hk)) - 2
		qnx := int(math.Ceil((float64(nx-pad)+offX)/hk)) + 3 - qx0
		qny := int(math.Ceil((float64(ny-pad)+offY)/hk)) + 3 - qy0
		noise := make([]float64, qnx*qny)
		for qy := 0; qy < qny; qy++ {
			for qx := 0; qx < qnx; qx++ {
				noise[qy*qnx+qx] = latticeNoise(seed, stream, k, qx+qx0, qy+qy0)
			}
		}
		if cap(tmp) < qny*nx {
			tmp = make([]float64, qny*nx)
		}
		tmp = tmp[:qny*nx]
		for a := 0; a < nx; a++ {
			q0, wt := splineWeights((float64(a-pad) + offX) / hk)
			for qy := 0; qy < qny; qy++ {
				row := noise[qy*qnx:]
				s := 0.0
				for m := 0; m < 4; m++ {
					s += wt[m] * row[q0-1+m-qx0]
				}
				tmp[qy*nx+a] = s
			}
		}
		for b := 0; b < ny; b++ {
			q0, wt := splineWeights((float64(b-pad) + offY) / hk)
			dst := f.c[b*nx : (b+1)*nx]
			for m := 0; m < 4; m++ {
				src := tmp[(q0-1+m-qy0)*nx:][:nx]
				for a, v := range src {
					dst[a] += wt[m] * v
				}
			}
		}
	}
	// Normalise: the texture sampled on the frame's pixels has mean
	// exactly t.Mean and standard deviation exactly t.Contrast (the
	// B-spline weights sum to 1, so subtracting m from every coefficient
	// subtracts m from T).
	f.mean = 0
	vals := make([]float64, w*h)
	f.sample(vals, 0, 0)
	m, s2 := 0.0, 0.0
	for _, v := range vals {
		m += v
	}
	m /= float64(len(vals))
	for _, v := range vals {
		s2 += (v - m) * (v - m)
	}
	sd := math.Sqrt(s2 / float64(len(vals)))
	scale := 0.0
	if sd > 0 {
		scale = t.Contrast / sd
	}
	for i := range f.c {
		f.c[i] = (f.c[i] - m) * scale
	}
	f.mean = t.Mean
	return f
}

// latticeNoise is a standard normal value attached to lattice node
// (qx, qy) of octave k of the texture (seed, stream): two uniforms from a
// SplitMix64 hash of the node, through the Box–Muller transform.
func latticeNoise(seed int64, stream uint64, k, qx, qy int) float64 {
	x := splitmix64(uint64(seed) ^ splitmix64(stream^splitmix64(uint64(k)^splitmix64(uint64(int64(qx))^splitmix64(uint64(int64(qy)))))))
	u1 := (float64(x>>11) + 0.5) / (1 << 53) // in (0, 1)
	u2 := float64(splitmix64(x)>>11) / (1 << 53)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// splitmix64 is the SplitMix64 finaliser, a bijective 64-bit mix.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// shiftWeights returns the per-frame sampling weights of the texture
// translated by (dx, dy): pixel (i, j) reads
// Σ_{m,n} wx[m]·wy[n]·c[i+ox+m−1, j+oy+n−1], with (ox, wx) =
// splineWeights(−dx) and (oy, wy) = splineWeights(−dy).
func shiftWeights(dx, dy float64) (ox, oy int, wx, wy [4]float64) {
	ox, wx = splineWeights(-dx)
	oy, wy = splineWeights(-dy)
	return
}

// at returns T(i − dx, j − dy) for the weights of shiftWeights(dx, dy).
// The pixel and its 4×4 support must lie within the padded frame.
func (f *textureField) at(i, j, ox, oy int, wx, wy *[4]float64) float64 {
	if f.flat {
		return f.mean
	}
	base := (j+oy-1+f.pad)*f.stride + i + ox - 1 + f.pad
	s := 0.0
	for n := 0; n < 4; n++ {
		r := f.c[base+n*f.stride:][:4]
		s += wy[n] * (wx[0]*r[0] + wx[1]*r[1] + wx[2]*r[2] + wx[3]*r[3])
	}
	return f.mean + s
}

// atPoint returns T(X, Y) at an arbitrary point of the padded frame (used
// where the displacement differs from pixel to pixel).
func (f *textureField) atPoint(X, Y float64) float64 {
	if f.flat {
		return f.mean
	}
	ox, wx := splineWeights(X)
	oy, wy := splineWeights(Y)
	return f.at(0, 0, ox, oy, &wx, &wy)
}

// sample writes T(i − dx, j − dy) for every pixel of the w×h frame into
// dst (row-major).
func (f *textureField) sample(dst []float64, dx, dy float64) {
	ox, oy, wx, wy := shiftWeights(dx, dy)
	for j := 0; j < f.h; j++ {
		row := dst[j*f.w : (j+1)*f.w]
		for i := range row {
			row[i] = f.at(i, j, ox, oy, &wx, &wy)
		}
	}
}

// halfPlaneArea returns the area of the unit square [0, 1]² on the side
// nx·x + ny·y ≤ c of a line (|(nx, ny)| > 0). By symmetry it reduces to
// a = |nx| ≥ b = |ny| ≥ 0 and c' = c + a·[nx<0] + b·[ny<0], where the
// area is the piecewise quadratic
//
//	0                       c' ≤ 0
//	c'²/(2ab)               0 < c' < b
//	(c' − b/2)/a            b ≤ c' < a
//	1 − (a + b − c')²/(2ab) a ≤ c' < a + b
//	1                       c' ≥ a + b,
//
// exact and continuous in c, hence exact under sub-pixel translation.
func halfPlaneArea(nx, ny, c float64) float64 {
	if nx < 0 {
		c -= nx
		nx = -nx
	}
	if ny < 0 {
		c -= ny
		ny = -ny
	}
	a, b := nx, ny
	if b > a {
		a, b = b, a
	}
	switch {
	case !(c > 0): // also NaN
		return 0
	case c >= a+b:
		return 1
	case c < b:
		return c * c / (2 * a * b)
	case c < a:
		return (c - b/2) / a
	}
	r := a + b - c
	return 1 - r*r/(2*a*b)
}

// ss8 is the subsampling of sdfCoverage8: 8×8 subsamples per pixel.
const ss8 = 8

// sdfCoverage8 estimates the fraction of pixel (i, j) (the square
// [i, i+1]×[j, j+1]) inside a shape given by a 1-Lipschitz signed
// distance f (negative inside): each of the 8×8 subsamples at
// (i + (s+½)/8, j + (t+½)/8) contributes clamp(½ − 8·f, 0, 1), a linear
// ramp one subsample wide. For an edge parallel to a pixel axis the ramps
// of a row of subsamples sum to the exact covered length, so the coverage
// is exact and linear in the edge position; for other edges its error is
// far below a gray level.
func sdfCoverage8(f func(x, y float64) float64, i, j int) float64 {
	cx, cy := float64(i)+0.5, float64(j)+0.5
	d := f(cx, cy)
	if d >= 0.75 {
		return 0
	}
	if d <= -0.75 {
		return 1
	}
	sum := 0.0
	for t := 0; t < ss8; t++ {
		y := float64(j) + (float64(t)+0.5)/ss8
		for s := 0; s < ss8; s++ {
			x := float64(i) + (float64(s)+0.5)/ss8
			sum += clamp01(0.5 - f(x, y)*ss8)
		}
	}
	return sum / (ss8 * ss8)
}

// gaussBlur convolves the w×h image px in place with a Gaussian of
// standard deviation sigma pixels (separable, kernel truncated at 3σ,
// edges clamped); tmp must hold w·h values.
func gaussBlur(px, tmp []float64, w, h int, sigma float64) {
	r := int(math.Ceil(3 * sigma))
	k := make([]float64, 2*r+1)
	sum := 0.0
	for i := range k {
		x := float64(i - r)
		k[i] = math.Exp(-x * x / (2 * sigma * sigma))
		sum += k[i]
	}
	for i := range k {
		k[i] /= sum
	}
	for j := 0; j < h; j++ {
		src, dst := px[j*w:(j+1)*w], tmp[j*w:(j+1)*w]
		for i := range dst {
			s := 0.0
			for m, km := range k {
				s += km * src[min(max(i+m-r, 0), w-1)]
			}
			dst[i] = s
		}
	}
	for j := 0; j < h; j++ {
		dst := px[j*w : (j+1)*w]
		for i := range dst {
			dst[i] = 0
		}
		for m, km := range k {
			src := tmp[min(max(j+m-r, 0), h-1)*w:][:w]
			for i, v := range src {
				dst[i] += km * v
			}
		}
	}
}
