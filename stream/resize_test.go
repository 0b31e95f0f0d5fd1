package stream

import (
	"math/rand/v2"
	"testing"
)

// areaMean sums each output pixel's terms in registers, four rows at a
// time; the result must be bit for bit the plain accumulation in memory,
// out[di] += src[si]·α in the table's order, for any number of rows.
func TestAreaMeanSumsInTableOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][4]int{{640, 60, 209, 20}, {640, 480, 74, 55}, {97, 7, 31, 3}, {64, 5, 64, 5}, {9, 9, 4, 2}} {
		w, h, dw, dh := sz[0], sz[1], sz[2], sz[3]
		src := make([]float64, w*h)
		for i := range src {
			src[i] = 255 * rng.Float64()
		}
		xtab, ytab := areaTable(w, dw, float64(w)/float64(dw)), areaTable(h, dh, float64(h)/float64(dh))
		got := areaMean(src, w, dw, dh, xtab, ytab, make([]float64, h*dw), make([]float64, dw*dh))
		tmp := make([]float64, h*dw)
		for y := range h {
			for _, e := range xtab {
				tmp[y*dw+e.di] += src[y*w+e.si] * e.alpha
			}
		}
		want := make([]float64, dw*dh)
		for _, e := range ytab {
			for x := range dw {
				want[e.di*dw+x] += tmp[e.si*dw+x] * e.alpha
			}
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v: pixel %d = %v, want %v", sz, i, got[i], want[i])
			}
		}
	}
}

// Frames cut from one block are zeroed and separate: appending to one
// (its capacity ends at its length) copies it and leaves the next alone.
func TestFrameSlab(t *testing.T) {
	var s grayScratch
	var fs [][]float64
	for range 2*frameSlab + 3 {
		f := s.frame(7)
		for _, v := range f {
			if v != 0 {
				t.Fatal("a new frame is not zeroed")
			}
		}
		if cap(f) != 7 {
			t.Fatalf("capacity %d past the frame's 7 pixels", cap(f))
		}
		for i := range f {
			f[i] = float64(len(fs))
		}
		fs = append(fs, f)
	}
	_ = append(fs[0], -1)
	for k, f := range fs {
		for _, v := range f {
			if v != float64(k) {
				t.Fatalf("frame %d holds %v", k, f)
			}
		}
	}
}
