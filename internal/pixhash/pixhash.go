// Package pixhash fingerprints a frame's pixels, for caches that key a
// frame by its pixel slice and must not take a recycled buffer for the
// frame it held.
package pixhash

import (
	"math"
	"unsafe"
)

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

// Addr is the address of f's first pixel, a cache key that, unlike a
// pointer, does not keep the frame alive: a cache keyed by it holds no
// frame after every window has let it go. A freed frame's address can be
// handed to a new frame, which is why an entry is checked against the
// frame's Sum; a new frame with the same pixels at the same address has,
// bit for bit, the same cached results. f must not be empty.
func Addr(f []float64) uintptr { return uintptr(unsafe.Pointer(&f[0])) }
