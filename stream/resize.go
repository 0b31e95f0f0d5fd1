package stream

import "math"

// resizeArea resizes the w×h image src (row-major float64) to dw×dh the
// way OpenCV 4.6's cv::resize does with INTER_AREA on a CV_64F image:
//
//   - when the image shrinks (or keeps its size) along both axes, every
//     output pixel is the area-weighted mean of the source pixels its cell
//     covers (OpenCV's resizeArea; its integer-factor fast path computes
//     the same block means);
//   - otherwise OpenCV falls back to bilinear interpolation with
//     "area-mode" coefficients, reproduced here: for output index d the
//     source index is s = ⌊d·scale⌋ and the weight of s+1 is the fractional
//     part of (d+1) − (s+1)/scale, clamped at the borders.
//
// OpenCV stores the weights as float32; they are rounded the same way here,
// so the results agree with OpenCV's to float rounding (< 1e-4 gray levels).
func resizeArea(src []float64, w, h, dw, dh int) []float64 {
	invX, invY := float64(dw)/float64(w), float64(dh)/float64(h)
	scaleX, scaleY := 1/invX, 1/invY
	if scaleX >= 1 && scaleY >= 1 {
		return resizeAreaMean(src, w, h, dw, dh, scaleX, scaleY)
	}
	return resizeAreaLinear(src, w, h, dw, dh, scaleX, scaleY, invX, invY)
}

// resizeArea is resizeArea with s's working memory (s may be nil): the
// area tables and the intermediate rows are kept from call to call; the
// result is always a new slice.
func (s *grayScratch) resizeArea(src []float64, w, h, dw, dh int) []float64 {
	invX, invY := float64(dw)/float64(w), float64(dh)/float64(h)
	scaleX, scaleY := 1/invX, 1/invY
	if s == nil || scaleX < 1 || scaleY < 1 {
		return resizeArea(src, w, h, dw, dh)
	}
	if k := [4]int{w, h, dw, dh}; s.tabFor != k || s.xtab == nil {
		s.xtab, s.ytab, s.tabFor = areaTable(w, dw, scaleX), areaTable(h, dh, scaleY), k
	}
	tmp := floats(&s.tmp, h*dw)
	clear(tmp)
	return areaMean(src, w, dw, dh, s.xtab, s.ytab, tmp, s.frame(dw*dh))
}

// areaWeight is one term of an output pixel's area mean: the source index
// si contributes alpha to output index di.
type areaWeight struct {
	di, si int
	alpha  float64
}

// areaTable is OpenCV's computeResizeAreaTab for one axis.
func areaTable(ssize, dsize int, scale float64) []areaWeight {
	tab := make([]areaWeight, 0, 2*ssize)
	for dx := 0; dx < dsize; dx++ {
		fsx1 := float64(dx) * scale
		fsx2 := fsx1 + scale
		cellWidth := math.Min(scale, float64(ssize)-fsx1)
		sx1, sx2 := int(math.Ceil(fsx1)), int(math.Floor(fsx2))
		sx2 = min(sx2, ssize-1)
		sx1 = min(sx1, sx2)
		if float64(sx1)-fsx1 > 1e-3 {
			tab = append(tab, areaWeight{dx, sx1 - 1, f32((float64(sx1) - fsx1) / cellWidth)})
		}
		for sx := sx1; sx < sx2; sx++ {
			tab = append(tab, areaWeight{dx, sx, f32(1 / cellWidth)})
		}
		if fsx2-float64(sx2) > 1e-3 {
			tab = append(tab, areaWeight{dx, sx2, f32(math.Min(math.Min(fsx2-float64(sx2), 1), cellWidth) / cellWidth)})
		}
	}
	return tab
}

// resizeAreaMean is the area-average branch: separable weights, rows first.
func resizeAreaMean(src []float64, w, h, dw, dh int, scaleX, scaleY float64) []float64 {
	return areaMean(src, w, dw, dh, areaTable(w, dw, scaleX), areaTable(h, dh, scaleY), make([]float64, len(src)/w*dw), make([]float64, dw*dh))
}

// areaMean applies the area tables: each source row resized horizontally
// into tmp (h×dw, zeroed), then the rows combined into dst (dw×dh,
// zeroed), which it returns.
func areaMean(src []float64, w, dw, dh int, xtab, ytab []areaWeight, tmp, dst []float64) []float64 {
	h := len(src) / w
	if len(xtab) == 0 {
		h = 0
	}
	// An output pixel's terms are consecutive in xtab: each is summed in a
	// register, in the table's order, as out[di] += … would (bit for bit),
	// four rows at a time so that the four sums' additions overlap.
	y := 0
	for ; y+4 <= h; y += 4 {
		r0, r1, r2, r3 := src[y*w:(y+1)*w], src[(y+1)*w:(y+2)*w], src[(y+2)*w:(y+3)*w], src[(y+3)*w:(y+4)*w]
		o0, o1, o2, o3 := tmp[y*dw:(y+1)*dw], tmp[(y+1)*dw:(y+2)*dw], tmp[(y+2)*dw:(y+3)*dw], tmp[(y+3)*dw:(y+4)*dw]
		cur := xtab[0].di
		a0, a1, a2, a3 := o0[cur], o1[cur], o2[cur], o3[cur]
		for _, t := range xtab {
			if t.di != cur {
				o0[cur], o1[cur], o2[cur], o3[cur] = a0, a1, a2, a3
				cur = t.di
				a0, a1, a2, a3 = o0[cur], o1[cur], o2[cur], o3[cur]
			}
			a0 += r0[t.si] * t.alpha
			a1 += r1[t.si] * t.alpha
			a2 += r2[t.si] * t.alpha
			a3 += r3[t.si] * t.alpha
		}
		o0[cur], o1[cur], o2[cur], o3[cur] = a0, a1, a2, a3
	}
	for ; y < h; y++ {
		row, out := src[y*w:(y+1)*w], tmp[y*dw:(y+1)*dw]
		cur, acc := xtab[0].di, out[xtab[0].di]
		for _, t := range xtab {
			if t.di != cur {
				out[cur], cur, acc = acc, t.di, out[t.di]
			}
			acc += row[t.si] * t.alpha
		}
		out[cur] = acc
	}
	for _, t := range ytab {
		row, out := tmp[t.si*dw:(t.si+1)*dw], dst[t.di*dw:(t.di+1)*dw]
		for x, v := range row {
			out[x] += v * t.alpha
		}
	}
	return dst
}

// linearTable returns, for each output index, the first source index and
// the two interpolation weights of OpenCV's area-mode bilinear resize.
func linearTable(ssize, dsize int, scale, inv float64) (ofs []int, a0, a1 []float64) {
	ofs, a0, a1 = make([]int, dsize), make([]float64, dsize), make([]float64, dsize)
	for d := range dsize {
		s := int(math.Floor(float64(d) * scale))
		f := float32(float64(d+1) - float64(s+1)*inv)
		if f <= 0 {
			f = 0
		} else {
			f -= float32(math.Floor(float64(f)))
		}
		if s < 0 {
			s, f = 0, 0
		}
		if s >= ssize-1 {
			s, f = ssize-1, 0
		}
		ofs[d], a0[d], a1[d] = s, float64(1-f), float64(f)
	}
	return ofs, a0, a1
}

// resizeAreaLinear is the bilinear branch used when the image grows along
// at least one axis.
func resizeAreaLinear(src []float64, w, h, dw, dh int, scaleX, scaleY, invX, invY float64) []float64 {
	xofs, xa0, xa1 := linearTable(w, dw, scaleX, invX)
	yofs, ya0, ya1 := linearTable(h, dh, scaleY, invY)
	hrow := func(y int, out []float64) {
		row := src[y*w : (y+1)*w]
		for d, s := range xofs {
			v := row[s] * xa0[d]
			if xa1[d] != 0 {
				v += row[s+1] * xa1[d]
			}
			out[d] = v
		}
	}
	r0, r1 := make([]float64, dw), make([]float64, dw)
	dst := make([]float64, dw*dh)
	for d, s := range yofs {
		hrow(s, r0)
		out := dst[d*dw : (d+1)*dw]
		if ya1[d] == 0 {
			for x := range out {
				out[x] = r0[x] * ya0[d]
			}
			continue
		}
		hrow(min(s+1, h-1), r1)
		for x := range out {
			out[x] = r0[x]*ya0[d] + r1[x]*ya1[d]
		}
	}
	return dst
}

// f32 rounds a weight to float32, as OpenCV stores it.
func f32(x float64) float64 { return float64(float32(x)) }
