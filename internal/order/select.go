// Package order holds order statistics shared by the estimator, the
// certificate and the region finder: the k-th smallest of a slice without
// sorting it.
package order

import (
	"math"
	"math/bits"
	"slices"
)

// Select returns the value sorted(x)[k] (0 ≤ k < len(x)), reordering x
// so that x[:k] ≤ x[k] ≤ x[k+1:]; x holds no NaN. The medians of
// exposure gains, revisit residuals and spectra are taken per pixel and
// per frame of every window, where sorting them showed in profiles:
// Select is linear on average where a sort is n log n.
//
// It is quickselect: branch-free Lomuto partitions (partitionLess) while
// the range is long, Hoare's (hoare) once it is short. A range that has
// not shrunk to hoareMax after 2·log2(n)+8 partitions (inputs built
// against the median-of-three pivot) is sorted instead, so the worst case
// is n log n, not n².
func Select(x []float64, k int) float64 {
	return selectWithin(x, k, 2*bits.Len(uint(len(x)))+8)
}

// selectWithin is Select with a budget of partitions before it sorts.
func selectWithin(x []float64, k, budget int) float64 {
	lo, hi := 0, len(x) // x[lo:hi] holds rank k; left of lo ≤, right of hi ≥ it
	for ; hi-lo > hoareMax; budget-- {
		if budget == 0 {
			slices.Sort(x[lo:hi])
			return x[k]
		}
		// Median of three as the pivot: data often arrive nearly sorted
		// (background pixels in scan order).
		a, b, c := x[lo], x[lo+(hi-lo)/2], x[hi-1]
		pivot := max(min(a, b), min(max(a, b), c))
		s := lo + partitionLess(x[lo:hi], pivot)
		switch {
		case k < s:
			hi = s
		case s > lo:
			lo = s
		default:
			// Nothing below the pivot: gather the elements equal to it
			// (ties would otherwise stall the loop), the answer when k
			// falls among them. v ≤ pivot is v < the next float up.
			t := hi
			if !math.IsInf(pivot, 1) {
				t = s + partitionLess(x[s:hi], math.Nextafter(pivot, math.Inf(1)))
			}
			if k < t {
				return x[k]
			}
			lo = t
		}
	}
	return hoare(x[lo:hi], k-lo)
}

// hoareMax is the longest range Select hands to hoare: on short
// ranges the branch-free partitions' swap of every element costs more
// than Hoare's mispredicted branches.
const hoareMax = 32

// partitionLess moves the elements of x below pivot to its front, in one
// pass that swaps every element and branches on none (Lomuto's partition
// without its branch: a comparison mispredicted half the time costs more
// than a swap), and returns how many there are. Invariant at i:
// x[:s] < pivot ≤ x[s:i].
func partitionLess(x []float64, pivot float64) int {
	s := 0
	for i, v := range x {
		x[i] = x[s]
		x[s] = v
		var f int
		if v < pivot {
			f = 1
		}
		s += f
	}
	return s
}

// hoare is Select by Hoare's quickselect with a median-of-three pivot; it
// leaves x partitioned around k.
func hoare(x []float64, k int) float64 {
	lo, hi := 0, len(x)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if x[mid] < x[lo] {
			x[mid], x[lo] = x[lo], x[mid]
		}
		if x[hi] < x[lo] {
			x[hi], x[lo] = x[lo], x[hi]
		}
		if x[hi] < x[mid] {
			x[hi], x[mid] = x[mid], x[hi]
		}
		pivot := x[mid]
		i, j := lo, hi
		for i <= j {
			for x[i] < pivot {
				i++
			}
			for x[j] > pivot {
				j--
			}
			if i <= j {
				x[i], x[j] = x[j], x[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return x[k]
		}
	}
	return x[k]
}
