package window

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/dsp/fourier"

	finitecheck "github.com/physd/physd/internal/finite"
)

// PeakRatio is how far a spectral line must stand above the floor
// measured around it for TopPeak to count it. A periodogram bin of noise
// is exponentially distributed; against a floor measured from a few
// dozen neighbours (itself uncertain) one passes about 10⁻⁵ of the time:
// white noise shows a line in 0.15 % of 181-sample windows
// (TestTopPeakInNoise), and such a line only asks for a finer decimation
// than needed.
const PeakRatio = 30

// PeakShare is the least share of a series' power (bins 3 and up) a
// spectral line must carry for TopPeak to count it: a mode a fit could
// find beside a stronger one (a second mode at a third of the first's
// amplitude carries a tenth), not a faint harmonic of a motion that is
// not sinusoidal, or a codec's key-frame beat.
const PeakShare = 0.01

// peakFloorHalf is the half-width, in bins, of the neighbourhood a bin's
// floor is measured in; peakGuard, the bins next to it left out (a Hann
// window spreads a line over ±2 bins); peakMinBin, the lowest bin
// searched: a line below it has M/7 samples a period or more, and the 48
// bins a window keeps under any decimation (AutoMinFrames) keep more
// than LineSamplesPerPeriod of its period.
const (
	peakFloorHalf = 16
	peakGuard     = 2
	peakMinBin    = 7
	// peakMinSide: an upper side of fewer bins (near the top of the
	// band) is left out of the floor.
	peakMinSide = 6
	// peakMinSamples: shorter series have too few bins to tell a line
	// from its neighbours.
	peakMinSamples = 32
)

// TopPeak is the highest frequency, in Hz, at which any of the series
// (each sampled dt seconds apart) holds a spectral line: a local maximum
// of its periodogram that stands PeakRatio times above the median of the
// bins around it,
//
//	P_k = |Σ_n h_n (x_n − a − b n) e^{−2πikn/M}|²,  h the Hann window,
//	P_k ≥ P_{k±1},  P_k ≥ PeakRatio · √(m₋ m₊),
//	m₋ = median{P_j : k−16 ≤ j < k−2},  m₊ = median{P_j : k+2 < j ≤ k+16},
//
// (the geometric mean of the two sides' medians follows a red spectrum,
// a drift's or a random walk's, where one median of both would not;
// near the top of the band, where there is no upper side, m₋ alone)
// with a + b n the series' least-squares line (a drift is no line), and
// that carries PeakShare of the series' power, P_{k−2} … P_{k+2} against
// the sum of P_3 and up. Bins below 7 are not searched. It is 0 when no
// series holds a line, or none is long enough to tell (32 samples).
//
// A line of a decimation's band is what a decimation must keep
// (AutoBinBand): a mode of the scene the fit has not (yet) certified, a
// harmonic, a second mode.
func TopPeak(series [][]float64, dt float64) float64 {
	if !(dt > 0) {
		return 0
	}
	var top float64
	var buf, p, near []float64
	var ffts map[int]*fourier.FFT
	for _, x := range series {
		m := len(x)
		if _, _, bad := finitecheck.First(x); m < peakMinSamples || bad {
			continue
		}
		if ffts == nil {
			ffts = map[int]*fourier.FFT{}
		}
		fft, ok := ffts[m]
		if !ok {
			fft = fourier.NewFFT(m)
			ffts[m] = fft
		}
		buf = detrendHann(buf[:0], x)
		p = periodogram(p[:0], fft.Coefficients(nil, buf))
		var total float64
		for _, v := range p[min(3, len(p)):] {
			total += v
		}
		// The highest line first: the search stops at it.
		for k := len(p) - 2; k >= peakMinBin; k-- {
			if float64(k)/(float64(m)*dt) <= top {
				break
			}
			if p[k] < p[k-1] || p[k] < p[k+1] || !(p[k] > 0) {
				continue
			}
			var ok bool
			if ok, near = isLine(p, k, total, near); ok {
				top = float64(k) / (float64(m) * dt)
				break
			}
		}
	}
	return top
}

// isLine says whether bin k of the periodogram p (total: the sum of P_3
// and up) is a spectral line by TopPeak's rule; near is scratch.
func isLine(p []float64, k int, total float64, near []float64) (bool, []float64) {
	return isLineAbove(p, k, total, PeakRatio, PeakShare, near)
}

// isLineAbove is isLine with ratio for PeakRatio and share for
// PeakShare.
func isLineAbove(p []float64, k int, total, ratio, share float64, near []float64) (bool, []float64) {
	if k < peakGuard+1 || k > len(p)-2 || p[k] < p[k-1] || p[k] < p[k+1] || !(p[k] > 0) {
		return false, near
	}
	var lo, hi float64
	lo, near = sideMedian(near, p[max(k-peakFloorHalf, 1):k-peakGuard])
	hi, near = sideMedian(near, p[min(k+peakGuard+1, len(p)):min(k+peakFloorHalf+1, len(p))])
	floor := lo
	if k+peakGuard+peakMinSide <= len(p)-1 {
		floor = math.Sqrt(lo * hi)
	}
	var line float64
	for _, v := range p[k-peakGuard : min(k+peakGuard+1, len(p))] {
		line += v
	}
	return p[k] >= ratio*floor && line >= share*total, near
}

// Line is a spectral line of a series (Lines).
type Line struct {
	// Hz is the line's frequency, refined between bins by the parabola
	// through the logarithms of the peak bin and its neighbours (exact
	// for a Gaussian peak; a Hann window's main lobe is close to one).
	Hz float64
	// Share is the line's share of the series' power: P_{k−2} … P_{k+2}
	// against the sum of P_3 and up.
	Share float64
}

// DecayLines is every spectral line of x (sampled dt seconds apart) by
// TopPeak's rule, the strongest first: the modes a free response
// carries. Its periodogram is of x less its least-squares line with no
// taper: a Hann window weighs the window's middle, where a well-damped
// mode of a release has died (a 2.7 Hz mode at ζ = 2 %, a third of a
// 1 Hz mode's amplitude, carried 2 % of a 20 s window's power and no
// line under Hann), while a decay is its own taper — its line is the
// Lorentzian of e^{−σt}, whatever the window. nil when x is too short
// (32 samples), holds a NaN, or has no line.
func DecayLines(x []float64, dt float64) []Line { return DecayLinesAbove(x, dt, PeakRatio) }

// DecayLinesAbove is DecayLines with lines ratio times above their
// floor instead of PeakRatio: a search whose candidates another test
// judges (a correlation function's, whose tail is smooth noise that
// raises the floor).
func DecayLinesAbove(x []float64, dt, ratio float64) []Line {
	return DecayLinesWith(x, dt, ratio, PeakShare)
}

// DecayLinesWith is DecayLinesAbove with lines carrying share of the
// series' power instead of PeakShare: a search whose candidates a fit
// then judges (a faint, well-damped higher mode beside a strong first
// one holds under 1 % of the power).
func DecayLinesWith(x []float64, dt, ratio, share float64) []Line {
	m := len(x)
	if _, _, bad := finitecheck.First(x); m < peakMinSamples || bad || !(dt > 0) {
		return nil
	}
	fft := fourier.NewFFT(m)
	p := periodogram(nil, fft.Coefficients(nil, detrend(nil, x, false)))
	var total float64
	for _, v := range p[min(3, len(p)):] {
		total += v
	}
	var near []float64
	var out []Line
	for k := peakMinBin; k < len(p)-1; k++ {
		var ok bool
		if ok, near = isLineAbove(p, k, total, ratio, share, near); !ok {
			continue
		}
		var line float64
		for _, v := range p[k-peakGuard : min(k+peakGuard+1, len(p))] {
			line += v
		}
		// δ = (ln P₋ − ln P₊) / (2 (ln P₋ − 2 ln P₀ + ln P₊)), within ±½ bin.
		delta := 0.0
		if l, c, r := math.Log(p[k-1]), math.Log(p[k]), math.Log(p[k+1]); l-2*c+r < 0 {
			delta = math.Max(-0.5, math.Min(0.5, (l-r)/(2*(l-2*c+r))))
		}
		out = append(out, Line{Hz: (float64(k) + delta) / (float64(m) * dt), Share: line / total})
	}
	slices.SortFunc(out, func(a, b Line) int { return cmp.Compare(b.Share, a.Share) })
	return out
}

// detrendHann appends to dst x less its least-squares line, times a Hann
// window.
func detrendHann(dst, x []float64) []float64 { return detrend(dst, x, true) }

// detrend appends to dst x less its least-squares line, times a Hann
// window when hann is set.
func detrend(dst, x []float64, hann bool) []float64 {
	m := len(x)
	// The line through (n, x_n): centred n makes its two sums apart.
	c := float64(m-1) / 2
	var sx, snx, snn float64
	for n, v := range x {
		d := float64(n) - c
		sx += v
		snx += d * v
		snn += d * d
	}
	a, b := sx/float64(m), snx/snn
	for n, v := range x {
		h := 1.0
		if hann {
			h = 0.5 - 0.5*math.Cos(2*math.Pi*float64(n)/float64(m-1))
		}
		dst = append(dst, h*(v-a-b*(float64(n)-c)))
	}
	return dst
}

// sideMedian returns the median of v (0 when empty), using buf as scratch.
func sideMedian(buf, v []float64) (float64, []float64) {
	if len(v) == 0 {
		return 0, buf
	}
	buf = append(buf[:0], v...)
	slices.Sort(buf)
	return buf[len(buf)/2], buf
}

// DecaySpectrum is the periodogram DecayLines reads of x (sampled dt
// seconds apart): the frequencies of bins 1 … M/2 in Hz and their power,
// |Σ_n (x_n − a − b n) e^{−2πikn/M}|², x's least-squares line a + b n
// taken out. nil when x is shorter than 4 samples or holds a NaN.
func DecaySpectrum(x []float64, dt float64) (hz, power []float64) {
	m := len(x)
	if _, _, bad := finitecheck.First(x); m < 4 || bad || !(dt > 0) {
		return nil, nil
	}
	p := periodogram(nil, fourier.NewFFT(m).Coefficients(nil, detrend(nil, x, false)))
	for k := 1; k < len(p); k++ {
		hz = append(hz, float64(k)/(float64(m)*dt))
		power = append(power, p[k])
	}
	return hz, power
}

// periodogram appends |c_k|² for k = 0 … M/2.
func periodogram(dst []float64, c []complex128) []float64 {
	for _, v := range c {
		dst = append(dst, real(v)*real(v)+imag(v)*imag(v))
	}
	return dst
}
