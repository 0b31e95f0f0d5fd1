package motion

import (
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
type plan2 struct {
	w, h, hw int
	row      *fourier.FFT
	cols     *colFFT // the h-point transforms of the hw columns
}

func newPlan2(w, h int) *plan2 {
	hw := w/2 + 1
	return &plan2{w: w, h: h, hw: hw, row: fourier.NewFFT(w), cols: newColFFT(h, hw)}
}

// halfLen is the length of a half spectrum.
func (p *plan2) halfLen() int { return p.hw * p.h }

// forward sets dst (len p.halfLen()) to the half spectrum of src (len w·h).
func (p *plan2) forward(dst []complex128, src []float64) {
	w, hw := p.w, p.hw
	for y := range p.h {
		p.row.Coefficients(dst[y*hw:(y+1)*hw], src[y*w:(y+1)*w])
	}
	p.columns(dst, false)
}

// inverse sets dst (len w·h) to w·h times the real array whose half
// spectrum is x (len p.halfLen()); x is overwritten.
func (p *plan2) inverse(dst []float64, x []complex128) {
	p.columns(x, true)
	w, hw := p.w, p.hw
	for y := range p.h {
		p.row.Sequence(dst[y*w:(y+1)*w], x[y*hw:(y+1)*hw])
	}
}

// columns transforms each of the half spectrum's hw columns in place
// (inverse: unnormalised), all at once (colFFT).
func (p *plan2) columns(x []complex128, inverse bool) {
	p.cols.transform(x, inverse)
}
