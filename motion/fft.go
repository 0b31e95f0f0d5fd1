package motion

import (
	"math/cmplx"

	"gonum.org/v1/gonum/dsp/fourier"
)

// plan2 is the 2-D discrete Fourier transform of real w×h row-major
// arrays,
//
//	F(u, v) = Σ_y Σ_x f(x, y) · exp(−2πi (u·x/w + v·y/h)),
//
// kept as its non-redundant half: for real f, F(w−u, h−v) = conj F(u, v),
// so the columns u = 0 … w/2 (hw = w/2 + 1 of them) hold all of it. A
// half spectrum is h rows of hw entries, row-major. The forward transform
// is w-point real transforms of the rows, then h-point complex transforms
// of the hw columns; the inverse undoes them in the other order. This does
// about half the work of the full complex transform, and a half spectrum
// takes half its memory. The inverse is unnormalised (it returns w·h·f),
// as gonum's. A plan is not safe for concurrent use.
//
// For an even w the rows are transformed all at once: each row's samples
// packed in pairs, z_j = f_{2j} + i·f_{2j+1}, make n = w/2 complex points,
// whose transform Z (colFFT, the rows side by side) gives the row's
//
//	F(u) = E(u) + ω^u·O(u),  E(u) = (Z(u) + conj Z(n−u))/2,  O(u) = (Z(u) − conj Z(n−u))/2i,
//
// with ω = exp(−2πi/w) and Z n-periodic; the inverse runs it backwards,
// 2Z(u) = (F(u) + conj F(n−u)) + i·(F(u) − conj F(n−u))·conj ω^u. An odd
// w takes gonum's real transform row by row.
type plan2 struct {
	w, h, hw int
	cols     *colFFT // the h-point transforms of the hw columns
	// Even w: rows transforms the packed rows, n×h (z), and tw holds
	// ω^u for u ≤ n. Odd w: row, gonum's w-point real transform.
	rows *colFFT
	z    []complex128
	tw   []complex128
	row  *fourier.FFT
}

func newPlan2(w, h int) *plan2 {
	hw := w/2 + 1
	p := &plan2{w: w, h: h, hw: hw, cols: newColFFT(h, hw)}
	if w%2 == 1 {
		p.row = fourier.NewFFT(w)
		return p
	}
	n := w / 2
	p.rows, p.z, p.tw = newColFFT(n, h), make([]complex128, n*h), make([]complex128, n+1)
	for u := range p.tw {
		p.tw[u], _ = unitRoot(u, w)
	}
	return p
}

// halfLen is the length of a half spectrum.
func (p *plan2) halfLen() int { return p.hw * p.h }

// forward sets dst (len p.halfLen()) to the half spectrum of src (len w·h).
func (p *plan2) forward(dst []complex128, src []float64) {
	w, h, hw := p.w, p.h, p.hw
	if p.row != nil {
		for y := range h {
			p.row.Coefficients(dst[y*hw:(y+1)*hw], src[y*w:(y+1)*w])
		}
	} else {
		n, z := w/2, p.z
		for y := range h {
			r := src[y*w : (y+1)*w]
			for j := range n {
				z[j*h+y] = complex(r[2*j], r[2*j+1])
			}
		}
		p.rows.transform(z, false)
		for y := range h {
			d := dst[y*hw : (y+1)*hw]
			for u := range d {
				a, b := z[(u%n)*h+y], cmplx.Conj(z[((n-u)%n)*h+y])
				d[u] = scale(0.5, a+b) + p.tw[u]*rotate(scale(0.5, a-b), false)
			}
		}
	}
	p.columns(dst, false)
}

// inverse sets dst (len w·h) to w·h times the real array whose half
// spectrum is x (len p.halfLen()); x is overwritten.
func (p *plan2) inverse(dst []float64, x []complex128) {
	p.columns(x, true)
	w, h, hw := p.w, p.h, p.hw
	if p.row != nil {
		for y := range h {
			p.row.Sequence(dst[y*w:(y+1)*w], x[y*hw:(y+1)*hw])
		}
		return
	}
	n, z := w/2, p.z
	for y := range h {
		f := x[y*hw : (y+1)*hw]
		for u := range n {
			a, b := f[u], cmplx.Conj(f[n-u])
			z[u*h+y] = (a + b) + rotate((a-b)*cmplx.Conj(p.tw[u]), true)
		}
	}
	p.rows.transform(z, true)
	for y := range h {
		r := dst[y*w : (y+1)*w]
		for j := range n {
			v := z[j*h+y]
			r[2*j], r[2*j+1] = real(v), imag(v)
		}
	}
}

// columns transforms each of the half spectrum's hw columns in place
// (inverse: unnormalised), all at once (colFFT).
func (p *plan2) columns(x []complex128, inverse bool) {
	p.cols.transform(x, inverse)
}
