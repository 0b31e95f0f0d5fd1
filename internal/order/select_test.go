package order

import (
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

// Select on long slices (which it narrows by a sample first) finds the
// element a sort puts at k, for every kind of input and rank, the
// extremes included.
func TestSelectLong(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n := narrowMin + rng.IntN(6000)
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
			if got := Select(slices.Clone(x), k); got != sorted[k] {
				t.Fatalf("trial %d, n %d: Select(·, %d) = %v, sort gives %v", trial, n, k, got, sorted[k])
			}
		}
	}
}

// BenchmarkSelect times the median of a frame's worth of exposure ratios
// (4180 pixels: a 209×20 region), by Select and by quickselect alone. The
// inputs cycle through 256 different slices: one slice over and over
// teaches the branch predictor quickselect's comparisons.
func BenchmarkSelect(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	pool := make([][]float64, 256)
	for p := range pool {
		x := make([]float64, 4180)
		for i := range x {
			x[i] = 1 + 0.003*rng.NormFloat64()
			if rng.IntN(10) == 0 {
				x[i] = 3 * rng.Float64()
			}
		}
		pool[p] = x
	}
	y := make([]float64, 4180)
	for _, c := range []struct {
		name string
		sel  func([]float64, int) float64
	}{{"select", Select}, {"quickselect", quickselect}} {
		b.Run(c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				copy(y, pool[i%len(pool)])
				c.sel(y, len(y)/2)
				i++
			}
		})
	}
}
