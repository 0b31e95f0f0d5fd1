// Package pixhash fingerprints a frame's pixels, for caches that key a
// frame by its pixel slice and must not take a recycled buffer for the
// frame it held.
package pixhash

import "math"

// Sum hashes every pixel's bits (FNV-1a over 64-bit words): frames that
// differ anywhere, even only where a small object is, differ in it. It
// costs one multiply and one xor a pixel.
//
//	h₀ = offset basis,  hᵢ₊₁ = (hᵢ ⊕ bits(fᵢ)) · FNV prime  (mod 2⁶⁴)
func Sum(f []float64) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range f {
		h ^= math.Float64bits(v)
		h *= 1099511628211
	}
	return h
}
