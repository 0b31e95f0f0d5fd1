package finite

import (
	"math"
	"testing"
)

// Every position of a non-finite value is found, whatever the slice's
// length modulo the four sums; finite slices (with −0, the largest
// float, subnormals) are not flagged.
func TestFirst(t *testing.T) {
	bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
	for n := 0; n <= 9; n++ {
		f := make([]float64, n)
		for i := range f {
			f[i] = []float64{math.Copysign(0, -1), math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 0.5}[i%5]
		}
		if i, v, found := First(f); found {
			t.Fatalf("n=%d: finite slice flagged at %d (%g)", n, i, v)
		}
		for pos := range n {
			for _, b := range bad {
				g := append([]float64(nil), f...)
				g[pos] = b
				g = append(g, math.NaN()) // a later one must not be reported first
				i, v, found := First(g)
				if !found || i != pos || !(math.IsNaN(v) == math.IsNaN(b)) {
					t.Errorf("n=%d: %g at %d: got %d %g %v", n, b, pos, i, v, found)
				}
			}
		}
	}
}

// BenchmarkFirst times the check of a 209×20 frame.
func BenchmarkFirst(b *testing.B) {
	f := make([]float64, 209*20)
	for i := range f {
		f[i] = float64(i%251) / 251
	}
	for b.Loop() {
		First(f)
	}
}
