package motion

import "math"

// colFFT is the n-point complex discrete Fourier transform of each of the
// b columns of an n×b row-major array,
//
//	X[k][c] = Σ_j x[j][c] · exp(∓2πi·jk/n),  k = 0 … n−1,
//
// (− forward, + inverse, unnormalised), all columns at once. It runs
// Stockham's autosort form of the mixed-radix Cooley–Tukey algorithm: a
// pass of radix p splits each length-L transform into p of length L/p,
//
//	y[q + s(pj + k)] = ω_L^{jk} Σ_r x[q + s(j + rL/p)] ω_p^{rk},  ω_L = exp(∓2πi/L),
//
// for j < L/p, q < s, with s the product of the radices before it; the
// next pass reads y with L ← L/p and s ← s·p, and after the last (L = 1)
// the result is in natural order. An element here is a whole row of b
// values, and the s rows q < s of one index are contiguous, so every
// butterfly runs down s·b consecutive values: no column is gathered or
// scattered, as a one-column-at-a-time transform must.
//
// Radices 4, 2, 3 and 5 have their own butterflies; any other prime
// factor a direct p-point sum. A colFFT is not safe for concurrent use.
type colFFT struct {
	n, b   int
	passes []fftPass
	tmp    []complex128
}

// fftPass is one radix-p pass over transforms of length l = p·m.
type fftPass struct {
	p, m, s int
	// fwd and inv hold ω_l^{jk} for j < m, k < p at j·p + k (the
	// twiddles), with the forward and the inverse sign.
	fwd, inv []complex128
	// cos and sin hold cos 2πt/p and sin 2πt/p, t < p, and a holds one
	// element's p inputs, for a direct p-point sum.
	cos, sin []float64
	a        []complex128
}

// newColFFT returns the n-point transform of b columns (n, b ≥ 1).
func newColFFT(n, b int) *colFFT {
	f := &colFFT{n: n, b: b, tmp: make([]complex128, n*b)}
	l, s := n, 1
	for _, p := range radices(n) {
		m := l / p
		ps := fftPass{p: p, m: m, s: s, fwd: make([]complex128, m*p), inv: make([]complex128, m*p)}
		for j := range m {
			for k := range p {
				ps.fwd[j*p+k], ps.inv[j*p+k] = unitRoot(j*k, l)
			}
		}
		if p > 5 {
			ps.cos, ps.sin, ps.a = make([]float64, p), make([]float64, p), make([]complex128, p)
			for t := range p {
				ps.sin[t], ps.cos[t] = math.Sincos(2 * math.Pi * float64(t) / float64(p))
			}
		}
		f.passes = append(f.passes, ps)
		l, s = m, s*p
	}
	return f
}

// unitRoot returns exp(−2πi·t/l) and exp(+2πi·t/l), the angle reduced
// modulo l first.
func unitRoot(t, l int) (fwd, inv complex128) {
	sin, cos := math.Sincos(2 * math.Pi * float64(t%l) / float64(l))
	return complex(cos, -sin), complex(cos, sin)
}

// radices factors n into the passes' radices: fours, then twos, threes,
// fives, then any other primes in increasing order.
func radices(n int) []int {
	var out []int
	for _, p := range [...]int{4, 2, 3, 5} {
		for n%p == 0 {
			out = append(out, p)
			n /= p
		}
	}
	for p := 7; n > 1; p += 2 {
		for n%p == 0 {
			out = append(out, p)
			n /= p
		}
	}
	return out
}

// transform replaces x (n·b values, row-major) by its column transform.
func (f *colFFT) transform(x []complex128, inverse bool) {
	in, out := x[:f.n*f.b], f.tmp
	for i := range f.passes {
		f.passes[i].run(out, in, f.b, inverse)
		in, out = out, in
	}
	if len(f.passes)%2 == 1 {
		copy(x, in)
	}
}

// run is one pass from in to out.
func (ps *fftPass) run(out, in []complex128, b int, inverse bool) {
	p, m := ps.p, ps.m
	sb := ps.s * b // the contiguous run of one element index
	tw := ps.fwd
	if inverse {
		tw = ps.inv
	}
	blk := func(s []complex128, idx int) []complex128 { return s[idx*sb : (idx+1)*sb] }
	for j := range m {
		w := tw[j*p : (j+1)*p]
		if j == 0 {
			w = nil // ω⁰ = 1
		}
		switch p {
		case 2:
			radix2(blk(out, 2*j), blk(out, 2*j+1), blk(in, j), blk(in, j+m), w)
		case 3:
			radix3(blk(out, 3*j), blk(out, 3*j+1), blk(out, 3*j+2), blk(in, j), blk(in, j+m), blk(in, j+2*m), w, inverse)
		case 4:
			radix4(out[4*j*sb:(4*j+4)*sb], blk(in, j), blk(in, j+m), blk(in, j+2*m), blk(in, j+3*m), w, inverse)
		case 5:
			radix5(out[5*j*sb:(5*j+5)*sb], in, j, m, sb, w, inverse)
		default:
			ps.radixOdd(out[p*j*sb:(p*j+p)*sb], in, j, sb, w, inverse)
		}
	}
}

// scale returns c·z, without the complex product's cross terms.
func scale(c float64, z complex128) complex128 { return complex(c*real(z), c*imag(z)) }

// rotate returns −i·z (forward) or +i·z (inverse).
func rotate(z complex128, inverse bool) complex128 {
	if inverse {
		return complex(-imag(z), real(z))
	}
	return complex(imag(z), -real(z))
}

// radix2 is the two-point butterfly, y0 = a0 + a1, y1 = (a0 − a1)·w[1]
// (w nil: unit twiddles).
func radix2(y0, y1, a0, a1, w []complex128) {
	y1 = y1[:len(y0)]
	a0, a1 = a0[:len(y0)], a1[:len(y0)]
	if w == nil {
		for i := range y0 {
			u, v := a0[i], a1[i]
			y0[i], y1[i] = u+v, u-v
		}
		return
	}
	w1 := w[1]
	for i := range y0 {
		u, v := a0[i], a1[i]
		y0[i], y1[i] = u+v, (u-v)*w1
	}
}

// twiddle multiplies y by w (w nil: leaves it).
func twiddle(y []complex128, w []complex128, k int) {
	if w == nil {
		return
	}
	c := w[k]
	for i := range y {
		y[i] *= c
	}
}

// radix3 is the three-point butterfly: with ω = exp(∓2πi/3) = −½ ∓ i√3/2,
//
//	y0 = a0 + (a1 + a2),  y1,2 = a0 − ½(a1 + a2) ∓ i·(√3/2)(a1 − a2) (± for y2),
//
// then y_k times w[k] (w nil: unit twiddles).
func radix3(y0, y1, y2, a0, a1, a2, w []complex128, inverse bool) {
	const s3 = 0.8660254037844386 // √3/2
	n := len(y0)
	y1, y2, a0, a1, a2 = y1[:n], y2[:n], a0[:n], a1[:n], a2[:n]
	for i := range y0 {
		t1 := a1[i] + a2[i]
		t2 := a0[i] - scale(0.5, t1)
		t3 := rotate(scale(s3, a1[i]-a2[i]), inverse)
		y0[i], y1[i], y2[i] = a0[i]+t1, t2+t3, t2-t3
	}
	twiddle(y1, w, 1)
	twiddle(y2, w, 2)
}

// radix4 is the four-point butterfly (ω = ∓i) into the four consecutive
// runs of y:
//
//	y0 = (a0 + a2) + (a1 + a3),  y2 = (a0 + a2) − (a1 + a3),
//	y1 = (a0 − a2) + ω(a1 − a3), y3 = (a0 − a2) − ω(a1 − a3),
//
// then y_k times w[k] (w nil: unit twiddles).
func radix4(y, a0, a1, a2, a3, w []complex128, inverse bool) {
	n := len(a0)
	y0, y1, y2, y3 := y[:n], y[n:2*n], y[2*n:3*n], y[3*n:4*n]
	a1, a2, a3 = a1[:n], a2[:n], a3[:n]
	for i := range a0 {
		t0, t1 := a0[i]+a2[i], a0[i]-a2[i]
		t2, t3 := a1[i]+a3[i], rotate(a1[i]-a3[i], inverse)
		if w == nil {
			y0[i], y1[i], y2[i], y3[i] = t0+t2, t1+t3, t0-t2, t1-t3
		} else {
			y0[i], y1[i], y2[i], y3[i] = t0+t2, (t1+t3)*w[1], (t0-t2)*w[2], (t1-t3)*w[3]
		}
	}
}

// radix5 is the five-point butterfly into the five consecutive runs of y,
// reading element indices j + r·m (runs of sb) of in. With c_k = cos 2πk/5
// and s_k = sin 2πk/5, t1 = a1 + a4, t2 = a2 + a3, t3 = a1 − a4,
// t4 = a2 − a3:
//
//	y0 = a0 + t1 + t2,
//	y1,4 = a0 + c1·t1 + c2·t2 ± ω(s1·t3 + s2·t4),
//	y2,3 = a0 + c2·t1 + c1·t2 ± ω(s2·t3 − s1·t4),  ω = ∓i,
//
// then y_k times w[k] (w nil: unit twiddles).
func radix5(y, in []complex128, j, m, sb int, w []complex128, inverse bool) {
	const (
		c1 = 0.30901699437494745 // cos 2π/5
		c2 = -0.8090169943749475 // cos 4π/5
		s1 = 0.9510565162951535  // sin 2π/5
		s2 = 0.5877852522924731  // sin 4π/5
	)
	a0 := in[j*sb : (j+1)*sb]
	a1 := in[(j+m)*sb : (j+m+1)*sb]
	a2 := in[(j+2*m)*sb : (j+2*m+1)*sb]
	a3 := in[(j+3*m)*sb : (j+3*m+1)*sb]
	a4 := in[(j+4*m)*sb : (j+4*m+1)*sb]
	y0, y1, y2, y3, y4 := y[:sb], y[sb:2*sb], y[2*sb:3*sb], y[3*sb:4*sb], y[4*sb:5*sb]
	for i := range a0 {
		t1, t2 := a1[i]+a4[i], a2[i]+a3[i]
		t3, t4 := a1[i]-a4[i], a2[i]-a3[i]
		b1 := a0[i] + scale(c1, t1) + scale(c2, t2)
		b2 := a0[i] + scale(c2, t1) + scale(c1, t2)
		d1 := rotate(scale(s1, t3)+scale(s2, t4), inverse)
		d2 := rotate(scale(s2, t3)-scale(s1, t4), inverse)
		y0[i] = a0[i] + t1 + t2
		if w == nil {
			y1[i], y2[i], y3[i], y4[i] = b1+d1, b2+d2, b2-d2, b1-d1
		} else {
			y1[i], y2[i], y3[i], y4[i] = (b1+d1)*w[1], (b2+d2)*w[2], (b2-d2)*w[3], (b1-d1)*w[4]
		}
	}
}

// radixOdd is the direct p-point butterfly for an odd p into the p
// consecutive runs of y, reading element indices j + r·m (runs of sb) of
// in. The inputs pair up, s_r = a_r + a_{p−r} and d_r = a_r − a_{p−r}
// (r = 1 … (p−1)/2), so that each output pair costs real multiples only:
//
//	y_0 = a_0 + Σ s_r,
//	y_k, y_{p−k} = a_0 + Σ_r cos(2πrk/p)·s_r ± ω·Σ_r sin(2πrk/p)·d_r,  ω = ∓i,
//
// then y_k times w[k] (w nil: unit twiddles).
func (ps *fftPass) radixOdd(y, in []complex128, j, sb int, w []complex128, inverse bool) {
	p, m, a := ps.p, ps.m, ps.a
	half := (p - 1) / 2
	for i := range sb {
		for r := range p {
			a[r] = in[(j+r*m)*sb+i]
		}
		y0 := a[0]
		for r := 1; r <= half; r++ {
			a[r], a[p-r] = a[r]+a[p-r], a[r]-a[p-r] // s_r, d_r
			y0 += a[r]
		}
		y[i] = y0
		for k := 1; k <= half; k++ {
			re, im := a[0], complex128(0)
			for r := 1; r <= half; r++ {
				t := r * k % p
				re += scale(ps.cos[t], a[r])
				im += scale(ps.sin[t], a[p-r])
			}
			im = rotate(im, inverse)
			y[k*sb+i], y[(p-k)*sb+i] = re+im, re-im
		}
	}
	for k := 1; k < p; k++ {
		twiddle(y[k*sb:(k+1)*sb], w, k)
	}
}
