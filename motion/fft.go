package motion

import (
	"gonum.org/v1/gonum/dsp/fourier"
)

// plan2 is a 2-D discrete Fourier transform of w×h row-major arrays:
//
//	F(u, v) = Σ_y Σ_x f(x, y) · exp(−2πi (u·x/w + v·y/h))
//
// computed as w-point transforms of the rows, then h-point transforms of
// the columns. The inverse is unnormalised (it returns w·h·f), as gonum's.
// A plan is not safe for concurrent use.
type plan2 struct {
	w, h     int
	row, col *fourier.CmplxFFT
	a, b     []complex128 // one row or column
}

func newPlan2(w, h int) *plan2 {
	n := max(w, h)
	return &plan2{w: w, h: h, row: fourier.NewCmplxFFT(w), col: fourier.NewCmplxFFT(h),
		a: make([]complex128, n), b: make([]complex128, n)}
}

// forward sets dst (len w·h) to the transform of the real array src.
func (p *plan2) forward(dst []complex128, src []float64) {
	for i, v := range src {
		dst[i] = complex(v, 0)
	}
	p.transform(dst, false)
}

// transform replaces x (len w·h) by its transform, or by the unnormalised
// inverse transform when inverse is set.
func (p *plan2) transform(x []complex128, inverse bool) {
	w, h := p.w, p.h
	run := func(t *fourier.CmplxFFT, dst, src []complex128) {
		if inverse {
			t.Sequence(dst, src)
		} else {
			t.Coefficients(dst, src)
		}
	}
	a, b := p.a[:w], p.b[:w]
	for y := range h {
		r := x[y*w : (y+1)*w]
		copy(a, r)
		run(p.row, b, a)
		copy(r, b)
	}
	a, b = p.a[:h], p.b[:h]
	for u := range w {
		for y := range h {
			a[y] = x[y*w+u]
		}
		run(p.col, b, a)
		for y := range h {
			x[y*w+u] = b[y]
		}
	}
}
