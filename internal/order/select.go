// Package order holds order statistics shared by the estimator, the
// certificate and the region finder: the k-th smallest of a slice without
// sorting it.
package order

// Select returns the value sorted(x)[k] (0 ≤ k < len(x)), reordering x:
// Hoare's quickselect with a median-of-three pivot, linear on average
// where a sort is n log n. The medians of exposure gains, revisit
// residuals and spectra are taken per pixel and per frame of every
// window, where sorting them showed in profiles.
func Select(x []float64, k int) float64 {
	lo, hi := 0, len(x)-1
	for lo < hi {
		// Median of three as the pivot: data often arrive nearly sorted
		// (background pixels in scan order).
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
