// Package order holds order statistics shared by the estimator, the
// certificate and the region finder: the k-th smallest of a slice without
// sorting it.
package order

import "math"

// Select returns the value sorted(x)[k] (0 ≤ k < len(x)), reordering x
// in no order a caller may rely on (not partitioned around k); x holds
// no NaN. The medians of exposure gains, revisit residuals and
// spectra are taken per pixel and per frame of every window, where
// sorting them showed in profiles: Select is linear on average where a
// sort is n log n. A long x is first narrowed by a sample (narrow);
// what is left, and a short x, goes to Hoare's quickselect.
func Select(x []float64, k int) float64 {
	if len(x) >= narrowMin {
		if v, ok := narrow(x, k); ok {
			return v
		}
	}
	return quickselect(x, k)
}

// narrowMin is the length from which Select narrows by a sample first.
const narrowMin = 512

// narrow is Floyd and Rivest's idea for Select: the order statistics of a
// sample of s ≈ 2n^(2/3) elements at ranks s·k/n ∓ δ, δ ≈ 2.5 standard
// deviations of a sample rank (√(s·p(1−p)), p = k/n), bracket sorted(x)[k]
// as [lo, hi]; one pass counts the elements below lo and gathers those in
// [lo, hi] at the front of x, and the answer is the (k − below)-th of
// those. Most elements are only compared, without a swap or a
// mispredicted branch, where quickselect swaps and mispredicts about
// half of them several times over. It reports false, x reordered, when
// the bracket missed (a rare sample): the caller selects in all of x.
func narrow(x []float64, k int) (float64, bool) {
	n := len(x)
	c := math.Cbrt(float64(n))
	s := int(2 * c * c)
	// The sample: s elements spread evenly over x, swapped to its front
	// (a permutation of x whatever the stride; which elements are taken
	// only sets how tight the bracket is).
	stride := n / s
	for i := range s {
		x[i], x[i*stride] = x[i*stride], x[i]
	}
	p := float64(k) / float64(n)
	r := int(p * float64(s))
	d := int(2.5*math.Sqrt(float64(s)*p*(1-p))) + 1
	lo, hi := math.Inf(-1), math.Inf(1)
	rl, rh := r-d, r+d
	if rl >= 0 {
		lo = quickselect(x[:s], rl)
	}
	if rh < s {
		// Past rank rl the sample holds only elements ≥ lo.
		from := max(0, rl)
		hi = quickselect(x[from:s], rh-from)
	}
	// below counts the elements < lo; those in [lo, hi] go to x[:m].
	// The flags are set without branches; the one branch left (in the
	// bracket: a = 0, c = 1) is rarely taken, so rarely mispredicted.
	below, m := 0, 0
	for i, v := range x {
		var a, c int
		if v < lo {
			a = 1
		}
		if v <= hi {
			c = 1
		}
		below += a
		if c > a {
			x[m], x[i] = v, x[m]
			m++
		}
	}
	if k < below || k >= below+m {
		return 0, false
	}
	if 2*m > n {
		// A bracket that kept most of x (ties, an extreme k) is not
		// narrowed again.
		return quickselect(x[:m], k-below), true
	}
	return Select(x[:m], k-below), true
}

// quickselect is Select by Hoare's quickselect with a median-of-three
// pivot.
func quickselect(x []float64, k int) float64 {
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
