// Package finite finds NaN and infinite values in pixel slices, fast:
// every frame of every window is checked by the steps that read it.
package finite

import "math"

// First returns the index and value of f's first NaN or infinite
// element, and ok false when every element is finite. It sums 0·v over
// f first — NaN exactly when some v is NaN or infinite — a multiply-add
// an element without a branch, in four independent sums (one chain
// waits on the adder's latency every element); the element is looked
// for only then.
func First(f []float64) (i int, v float64, found bool) {
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(f); j += 4 {
		s0 += 0 * f[j]
		s1 += 0 * f[j+1]
		s2 += 0 * f[j+2]
		s3 += 0 * f[j+3]
	}
	for ; j < len(f); j++ {
		s0 += 0 * f[j]
	}
	if (s0+s1)+(s2+s3) == 0 {
		return 0, 0, false
	}
	for j, v := range f {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return j, v, true
		}
	}
	return 0, 0, false
}
