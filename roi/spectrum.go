package roi

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/physd/physd/internal/order"
)

// clipData is one clip prepared for the search: per-cell residual signals,
// their periodograms and noise floors. Signals are stored cell-major as
// float32 (the search holds up to MaxSamples of them).
type clipData struct {
	n, nb int
	dt    float64
	res   []float32 // nb × n: the cell's residual after global changes and its trend
	nfft  int
	nbin  int     // nfft/2 + 1
	df    float64 // Hz per bin
	pad   float64 // nfft / n: bins per natural (1/T) bin
	lobe  int     // bins in half the Hann window's main lobe (2 natural bins)
	spec  []float32
	// anchors are the bins where each cell's noise floor is measured;
	// floor holds nb × len(anchors) mean-equivalent floors (median / ln 2).
	anchors []int
	floor   []float32
	kLo     int // first and last bins of the searched band
	kHi     int
}

// quantFloor is the least noise variance of a cell: the quantisation of
// 8-bit video, (1/255)²/12, in the [0, 1] levels of Clip.Frames. A cell
// cleaner than that (a synthetic, flat background) cannot make a peak out
// of rounding.
const quantFloor = 1.0 / (255 * 255 * 12)

// prepare removes global changes and trends and computes each cell's
// periodogram and noise floor.
func prepare(c Clip, gw, gh int, fLo, fHi float64) *clipData {
	n, nb := len(c.Frames), gw*gh
	d := &clipData{n: n, nb: nb, dt: c.Dt, res: removeGlobal(c.Frames, gw, gh)}
	d.nfft = 1
	for d.nfft < 2*n {
		d.nfft *= 2
	}
	d.nbin = d.nfft/2 + 1
	d.df = 1 / (float64(d.nfft) * c.Dt)
	d.pad = float64(d.nfft) / float64(n)
	d.lobe = max(1, int(math.Ceil(2*d.pad)))
	d.kLo = max(1, int(math.Floor(fLo/d.df)))
	d.kHi = min(d.nbin-1, int(math.Ceil(fHi/d.df)))
	for k := 1; k < d.nbin; {
		d.anchors = append(d.anchors, k)
		k = max(k+max(1, int(math.Round(2*d.pad))), int(math.Ceil(float64(k)*1.1)))
	}
	if last := d.anchors[len(d.anchors)-1]; last != d.nbin-1 {
		d.anchors = append(d.anchors, d.nbin-1)
	}
	d.spec = make([]float32, nb*d.nbin)
	d.floor = make([]float32, nb*len(d.anchors))

	fft := fourier.NewFFT(d.nfft)
	win := make([]float64, n)
	var w2 float64
	for t := range win {
		s := math.Sin(math.Pi * (float64(t) + 0.5) / float64(n))
		win[t] = s * s
		w2 += win[t] * win[t]
	}
	norm := 2 / (float64(d.nfft) * w2) // Σ_k P(k) ≈ the variance
	seq := make([]float64, d.nfft)
	coef := make([]complex128, d.nbin)
	work := make([]float64, 0, d.nbin)
	qf := quantFloor * 2 / float64(d.nfft) // per bin
	stride := max(1, int(d.pad))           // zero-padded bins repeat their neighbours
	for b := range nb {
		sig := d.res[b*n : (b+1)*n]
		for t, v := range sig {
			seq[t] = float64(v) * win[t]
		}
		coef = fft.Coefficients(coef, seq)
		p := d.spec[b*d.nbin : (b+1)*d.nbin]
		for k, z := range coef {
			p[k] = float32(norm * (real(z)*real(z) + imag(z)*imag(z)))
		}
		fl := d.floor[b*len(d.anchors) : (b+1)*len(d.anchors)]
		for i, a := range d.anchors {
			lo, hi := floorWindow(a, d.pad, d.nbin)
			work = work[:0]
			for k := lo; k <= hi; k += stride {
				work = append(work, float64(p[k]))
			}
			fl[i] = float32(max(median(work)/math.Ln2, qf))
		}
	}
	return d
}

// floorWindow is the band of bins whose median is the noise floor at bin
// a: ±25 % of its frequency, at least ±8 and at most ±32 natural bins.
func floorWindow(a int, pad float64, nbin int) (lo, hi int) {
	hw := min(max(int(math.Ceil(8*pad)), a/4), int(math.Ceil(32*pad)))
	return max(1, a-hw), min(nbin-1, a+hw)
}

// floorAt is cell b's noise floor at bin k, interpolated between anchors.
func (d *clipData) floorAt(b, k int) float64 {
	fl := d.floor[b*len(d.anchors) : (b+1)*len(d.anchors)]
	a := d.anchors
	i := searchAnchor(a, k)
	if i == len(a)-1 || a[i] == k {
		return float64(fl[i])
	}
	w := float64(k-a[i]) / float64(a[i+1]-a[i])
	return (1-w)*float64(fl[i]) + w*float64(fl[i+1])
}

// searchAnchor returns the last index i with a[i] ≤ k (0 if none).
func searchAnchor(a []int, k int) int {
	lo, hi := 0, len(a)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if a[mid] <= k {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// sceneScore is the scene's spectrum over bins kLo…kHi: the sum over cells
// of max(0, ln(SNR/sceneFloor)), SNR the cell's periodogram over its noise
// floor.
func (d *clipData) sceneScore() []float64 {
	sc := make([]float64, d.kHi-d.kLo+1)
	for b := range d.nb {
		p := d.spec[b*d.nbin : (b+1)*d.nbin]
		for k := d.kLo; k <= d.kHi; k++ {
			if snr := float64(p[k]) / d.floorAt(b, k); snr > sceneFloor {
				sc[k-d.kLo] += math.Log(snr / sceneFloor)
			}
		}
	}
	return sc
}

// at interpolates sc (sceneScore's) at frequency f; 0 outside the band.
func (d *clipData) at(sc []float64, f float64) float64 {
	x := f/d.df - float64(d.kLo)
	if x < 0 || x > float64(len(sc)-1) {
		return 0
	}
	i := int(x)
	if i == len(sc)-1 {
		return sc[i]
	}
	w := x - float64(i)
	return (1-w)*sc[i] + w*sc[i+1]
}

// harmonicPower adds, for each cell, its excess power (periodogram minus
// noise floor) over the main lobes at f, 2f and 3f to excess, the part at
// f to fund, and raises peak to its largest whitened value there.
func (d *clipData) harmonicPower(f float64, excess, fund, peak []float64) {
	for h := 1; h <= harmonics; h++ {
		kc := int(math.Round(float64(h) * f / d.df))
		lo, hi := max(1, kc-d.lobe), min(d.nbin-1, kc+d.lobe)
		if lo > hi || float64(h)*f > 0.45/d.dt {
			break
		}
		for b := range d.nb {
			p := d.spec[b*d.nbin : (b+1)*d.nbin]
			for k := lo; k <= hi; k++ {
				fl := d.floorAt(b, k)
				pk := float64(p[k])
				if ex := pk - fl; ex > 0 {
					excess[b] += ex
					if h == 1 {
						fund[b] += ex
					}
				}
				peak[b] = max(peak[b], pk/fl)
			}
		}
	}
}

// segment is one persistence sub-segment of a clip: samples [i0, i1),
// the orthonormal basis of its trend and harmonics, and the share of the
// detrended variance the harmonics must explain (rsqThreshold).
type segment struct {
	clip, i0, i1 int
	q            [][]float64
	thr          float64
	first        bool // the clip's first sub-segment
}

// segments cuts the clip into sub-segments of at least periodsPerSeg
// periods of f (at most maxSegs) in which f's harmonics can be fitted.
func (d *clipData) segments(clip int, f float64) []segment {
	periods := f * float64(d.n) * d.dt
	k := min(maxSegs, int(math.Floor(periods/periodsPerSeg)))
	var out []segment
	for s := range k {
		i0, i1 := s*d.n/k, (s+1)*d.n/k
		m := i1 - i0
		nh := 0
		for h := 1; h <= harmonics && float64(h)*f <= 0.45/d.dt && 2+2*h <= m/3; h++ {
			nh = h
		}
		if nh == 0 {
			continue
		}
		q := basis(m, nh, f, d.dt)
		out = append(out, segment{clip: clip, i0: i0, i1: i1, q: q, thr: rsqThreshold(m, len(q)), first: s == 0})
	}
	return out
}

// activity is what the sub-segments say of one cell at one frequency.
type activity struct {
	hits  int     // sub-segments in which the harmonics explain enough
	early bool    // one of them is a clip's first
	power float64 // the most variance the harmonics explain in one of them
}

// activity tests cell b in every sub-segment: it oscillates at f in a
// sub-segment when f's harmonics explain more of its detrended variance
// than noise would (rsqThreshold).
func (s *search) activity(segs []segment, b int) activity {
	var a activity
	for _, sg := range segs {
		d := s.clips[sg.clip]
		y := d.res[b*d.n+sg.i0 : b*d.n+sg.i1]
		var yy float64
		for _, v := range y {
			yy += float64(v) * float64(v)
		}
		var trend, harm float64
		for j, qj := range sg.q {
			var c float64
			for t, v := range y {
				c += qj[t] * float64(v)
			}
			if j < 2 {
				trend += c * c
			} else {
				harm += c * c
			}
		}
		m := float64(len(y))
		if rest := yy - trend; rest > quantFloor*m && harm >= sg.thr*rest {
			a.hits++
			a.early = a.early || sg.first
			a.power = max(a.power, harm/m)
		}
	}
	return a
}

// basis returns an orthonormal basis (over m samples) of the span of 1, t,
// and cos, sin(2π h f t) for h = 1…nh, in that order, by Gram–Schmidt
// applied twice. Directions that vanish (numerically dependent) are
// dropped, except the first two, which are always independent.
func basis(m, nh int, f, dt float64) [][]float64 {
	var vs [][]float64
	one, lin := make([]float64, m), make([]float64, m)
	for t := range m {
		one[t] = 1
		lin[t] = float64(t) - float64(m-1)/2
	}
	vs = append(vs, one, lin)
	for h := 1; h <= nh; h++ {
		c, s := make([]float64, m), make([]float64, m)
		for t := range m {
			ph := 2 * math.Pi * float64(h) * f * float64(t) * dt
			c[t], s[t] = math.Cos(ph), math.Sin(ph)
		}
		vs = append(vs, c, s)
	}
	var q [][]float64
	for _, v := range vs {
		for range 2 {
			for _, u := range q {
				var dot float64
				for t := range v {
					dot += u[t] * v[t]
				}
				for t := range v {
					v[t] -= dot * u[t]
				}
			}
		}
		var nn float64
		for _, x := range v {
			nn += x * x
		}
		if nn < 1e-9*float64(m) {
			continue
		}
		inv := 1 / math.Sqrt(nn)
		for t := range v {
			v[t] *= inv
		}
		q = append(q, v)
	}
	return q
}

// rsqThreshold is the share of a segment's detrended variance that its
// harmonic regressors must explain to count as oscillating: under white
// noise, with p regressors (two of them the trend) on m samples, that
// share is Beta((p−2)/2, (m−p)/2); the threshold is its mean plus four
// standard deviations, at least 0.25 and at most 0.9.
func rsqThreshold(m, p int) float64 {
	a, b := float64(p-2)/2, float64(m-p)/2
	if b <= 0 {
		return 0.9
	}
	mean := a / (a + b)
	sd := math.Sqrt(a * b / ((a + b) * (a + b) * (a + b + 1)))
	return min(0.9, max(0.25, mean+4*sd))
}

// median returns the median of x, reordering it.
func median(x []float64) float64 {
	n := len(x)
	if n == 0 {
		return 0
	}
	m := order.Select(x, n/2)
	if n%2 == 1 {
		return m
	}
	// The lower middle, sorted(x)[n/2−1]: Select leaves x[:n/2] ≤ m,
	// so it is the largest of those.
	return (slices.Max(x[:n/2]) + m) / 2
}
