package roi

import "math"

// Ridge weights of the per-frame global fit, relative to the number of
// inlier cells. The shift terms get a real ridge: in a plain scene the mean
// image's gradient lives only around the moving object, whose cells the
// robust fit drops, and an unshrunk shift fitted on the few remaining
// gradient cells could be anything.
const (
	ridgeLevel = 1e-9
	ridgeShift = 0.05
	trimSigma  = 3.0
	fitRounds  = 3
)

// removeGlobal returns, cell-major (nb × n), what each cell does beyond the
// whole picture: each frame x is fitted over the cells by
//
//	x_b ≈ a + g·m̃_b + u·∂xm̃_b + v·∂ym̃_b,
//
// m the mean image (m̃ and its gradients standardised over the cells),
// by least squares with cells beyond trimSigma robust σ dropped, fitRounds
// times, and the residual of every cell kept; each cell's residual is then
// detrended by a straight line.
func removeGlobal(frames [][]float32, gw, gh int) []float32 {
	n, nb := len(frames), gw*gh
	mean := make([]float64, nb)
	for _, f := range frames {
		for b, v := range f {
			mean[b] += float64(v)
		}
	}
	for b := range mean {
		mean[b] /= float64(n)
	}
	gx, gy := make([]float64, nb), make([]float64, nb)
	for y := range gh {
		for x := range gw {
			xl, xr := max(0, x-1), min(gw-1, x+1)
			yu, yd := max(0, y-1), min(gh-1, y+1)
			gx[y*gw+x] = (mean[y*gw+xr] - mean[y*gw+xl]) / float64(max(1, xr-xl))
			gy[y*gw+x] = (mean[yd*gw+x] - mean[yu*gw+x]) / float64(max(1, yd-yu))
		}
	}
	ones := make([]float64, nb)
	for b := range ones {
		ones[b] = 1
	}
	cols := [4][]float64{ones, standardise(mean), standardise(gx), standardise(gy)}
	ridge := [4]float64{ridgeLevel, ridgeLevel, ridgeShift, ridgeShift}

	res := make([]float32, nb*n)
	in := make([]bool, nb)
	r := make([]float64, nb)
	absr := make([]float64, nb)
	for t, f := range frames {
		for b := range in {
			in[b] = true
		}
		for round := range fitRounds {
			var a [4][4]float64
			var rhs [4]float64
			cnt := 0.0
			for b := range nb {
				if !in[b] {
					continue
				}
				cnt++
				y := float64(f[b])
				for i := range 4 {
					ci := cols[i][b]
					rhs[i] += ci * y
					for j := i; j < 4; j++ {
						a[i][j] += ci * cols[j][b]
					}
				}
			}
			for i := range 4 {
				a[i][i] += ridge[i] * max(cnt, 1)
				for j := range i {
					a[i][j] = a[j][i]
				}
			}
			beta := solve4(a, rhs)
			for b := range nb {
				fit := 0.0
				for i := range 4 {
					fit += beta[i] * cols[i][b]
				}
				r[b] = float64(f[b]) - fit
				absr[b] = math.Abs(r[b])
			}
			if round == fitRounds-1 {
				break
			}
			sigma := 1.4826 * median(absr)
			if !(sigma > 0) {
				break
			}
			for b := range nb {
				in[b] = math.Abs(r[b]) <= trimSigma*sigma
			}
		}
		for b := range nb {
			res[b*n+t] = float32(r[b])
		}
	}
	detrend(res, nb, n)
	return res
}

// standardise returns (x − mean)/RMS over the cells, or zeros if x is
// constant.
func standardise(x []float64) []float64 {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	out := make([]float64, len(x))
	sd := math.Sqrt(ss / float64(len(x)))
	if !(sd > 1e-12) {
		return out
	}
	for i, v := range x {
		out[i] = (v - m) / sd
	}
	return out
}

// solve4 solves the symmetric positive definite 4×4 system a·x = b by
// Cholesky; a pivot that vanishes sets its unknown to 0.
func solve4(a [4][4]float64, b [4]float64) [4]float64 {
	var l [4][4]float64
	var ok [4]bool
	for i := range 4 {
		for j := 0; j <= i; j++ {
			s := a[i][j]
			for k := range j {
				s -= l[i][k] * l[j][k]
			}
			if i == j {
				if s > 1e-300 {
					l[i][i], ok[i] = math.Sqrt(s), true
				}
			} else if ok[j] {
				l[i][j] = s / l[j][j]
			}
		}
	}
	var y, x [4]float64
	for i := range 4 {
		if !ok[i] {
			continue
		}
		s := b[i]
		for k := range i {
			s -= l[i][k] * y[k]
		}
		y[i] = s / l[i][i]
	}
	for i := 3; i >= 0; i-- {
		if !ok[i] {
			continue
		}
		s := y[i]
		for k := i + 1; k < 4; k++ {
			s -= l[k][i] * x[k]
		}
		x[i] = s / l[i][i]
	}
	return x
}

// detrend subtracts from each cell's signal (nb × n, cell-major) its
// least-squares straight line.
func detrend(res []float32, nb, n int) {
	tc := float64(n-1) / 2
	var stt float64
	for t := range n {
		stt += (float64(t) - tc) * (float64(t) - tc)
	}
	for b := range nb {
		s := res[b*n : (b+1)*n]
		var sy, sty float64
		for t, v := range s {
			sy += float64(v)
			sty += (float64(t) - tc) * float64(v)
		}
		m, k := sy/float64(n), 0.0
		if stt > 0 {
			k = sty / stt
		}
		for t := range s {
			s[t] = float32(float64(s[t]) - m - k*(float64(t)-tc))
		}
	}
}
