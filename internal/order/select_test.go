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
