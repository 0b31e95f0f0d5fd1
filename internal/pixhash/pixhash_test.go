package pixhash

import (
	"math"
	"testing"
)

// A change to any one pixel, or to the sign of a zero, changes the sum;
// equal frames sum equal.
func TestSum(t *testing.T) {
	f := make([]float64, 4096)
	for i := range f {
		f[i] = 0.25
	}
	base := Sum(f)
	if Sum(append([]float64(nil), f...)) != base {
		t.Fatal("equal frames, different sums")
	}
	for _, i := range []int{0, 1, 2047, 4095} {
		g := append([]float64(nil), f...)
		g[i] += 1.0 / 256
		if Sum(g) == base {
			t.Errorf("pixel %d changed, sum did not", i)
		}
	}
	if Sum([]float64{0, 1}) == Sum([]float64{math.Copysign(0, -1), 1}) {
		t.Error("+0 and −0 sum equal")
	}
}

// BenchmarkSum times the fingerprint of a 209×20 frame.
func BenchmarkSum(b *testing.B) {
	f := make([]float64, 209*20)
	for i := range f {
		f[i] = float64(i%251) / 251
	}
	for b.Loop() {
		Sum(f)
	}
}
