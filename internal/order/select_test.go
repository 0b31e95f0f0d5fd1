package order

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// Select finds the element a sort puts at k: ties, repeats, sorted and
// reversed inputs included.
func TestSelect(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 500 {
		n := 1 + rng.IntN(70)
		x := make([]float64, n)
		for i := range x {
			switch trial % 4 {
			case 0:
				x[i] = rng.NormFloat64()
			case 1:
				x[i] = float64(rng.IntN(3)) // many ties
			case 2:
				x[i] = float64(i) // sorted
			default:
				x[i] = float64(n - i) // reversed
			}
		}
		sorted := slices.Clone(x)
		slices.Sort(sorted)
		k := rng.IntN(n)
		if got := Select(slices.Clone(x), k); got != sorted[k] {
			t.Fatalf("trial %d: Select(%v, %d) = %v, sort gives %v", trial, x, k, got, sorted[k])
		}
	}
}

// Infinities are ordered like any value, ties of +Inf included (the
// pivot's equal range has no next float up).
func TestSelectInf(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 100 {
		x := make([]float64, 40+rng.IntN(200))
		for i := range x {
			switch rng.IntN(3) {
			case 0:
				x[i] = math.Inf(1)
			case 1:
				x[i] = math.Inf(-1)
			default:
				x[i] = float64(rng.IntN(4))
			}
		}
		sorted := slices.Clone(x)
		slices.Sort(sorted)
		for _, k := range []int{0, len(x) - 1, len(x) / 2, rng.IntN(len(x))} {
			checkSelect(t, x, sorted, k, 2*bits.Len(uint(len(x)))+8)
		}
	}
}

// checkSelect fails unless Select (within budget partitions) returns
// sorted[k] and leaves x partitioned around k.
func checkSelect(t *testing.T, x, sorted []float64, k, budget int) {
	t.Helper()
	y := slices.Clone(x)
	if got := selectWithin(y, k, budget); got != sorted[k] {
		t.Fatalf("n %d, budget %d: Select(·, %d) = %v, sort gives %v", len(x), budget, k, got, sorted[k])
	}
	for i, v := range y {
		if (i < k && v > y[k]) || (i > k && v < y[k]) {
			t.Fatalf("n %d, budget %d: x[%d] = %v on the wrong side of x[%d] = %v", len(x), budget, i, v, k, y[k])
		}
	}
}

// Select on long slices (branch-free partitions, then Hoare's; or a sort
// when the partitions run out of budget) finds the element a sort puts at
// k and leaves the slice partitioned around it, for every kind of input
// and rank, the extremes included.
func TestSelectLong(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n := 1 + rng.IntN(6000)
		x := make([]float64, n)
		for i := range x {
			switch trial % 6 {
			case 0:
				x[i] = rng.NormFloat64()
			case 1:
				x[i] = float64(rng.IntN(5)) // many ties
			case 2:
				x[i] = float64(i) // sorted
			case 3:
				x[i] = float64(n - i) // reversed
			case 4:
				x[i] = 1 // all equal
			default:
				x[i] = 1 + 0.003*rng.NormFloat64() // gains: a narrow cluster
				if rng.IntN(10) == 0 {
					x[i] = 3 * rng.Float64() // and outliers (the object's pixels)
				}
			}
		}
		sorted := slices.Clone(x)
		slices.Sort(sorted)
		for _, k := range []int{0, n - 1, n / 2, rng.IntN(n), rng.IntN(n)} {
			for _, budget := range []int{0, 1, 3, 2*bits.Len(uint(n)) + 8} {
				checkSelect(t, x, sorted, k, budget)
			}
		}
	}
}

// BenchmarkSelect times the median of a frame's worth of exposure ratios
// (4180 pixels: a 209×20 region) and of a pixel's column in the exposure
// reference (61 frames' gray levels), by Select and by Hoare's
// quickselect alone. The inputs cycle through 256 different slices: one
// slice over and over teaches the branch predictor the comparisons.
func BenchmarkSelect(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	ratios := func() []float64 {
		x := make([]float64, 4180)
		for i := range x {
			x[i] = 1 + 0.003*rng.NormFloat64()
			if rng.IntN(10) == 0 {
				x[i] = 3 * rng.Float64() // the object's pixels
			}
		}
		return x
	}
	column := func() []float64 {
		x := make([]float64, 61)
		level := rng.Float64()
		for i := range x {
			// 3×3 area means of 8-bit levels, and their noise.
			x[i] = math.Round((level+0.02*rng.NormFloat64())*255*9) / (255 * 9)
		}
		return x
	}
	for _, in := range []struct {
		name string
		gen  func() []float64
	}{{"ratios4180", ratios}, {"column61", column}} {
		pool := make([][]float64, 256)
		for p := range pool {
			pool[p] = in.gen()
		}
		y := make([]float64, len(pool[0]))
		for _, c := range []struct {
			name string
			sel  func([]float64, int) float64
		}{{"select", Select}, {"hoare", hoare}} {
			b.Run(in.name+"/"+c.name, func(b *testing.B) {
				i := 0
				for b.Loop() {
					copy(y, pool[i%len(pool)])
					c.sel(y, len(y)/2)
					i++
				}
			})
		}
	}
}
