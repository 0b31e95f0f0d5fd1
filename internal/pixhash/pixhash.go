// Package pixhash fingerprints a frame's pixels, for caches that key a
// frame by its pixel slice and must not take a recycled buffer for the
// frame it held.
package pixhash

import (
	"math"
	"unsafe"
)

// Sum hashes every pixel's bits: FNV-1a over 64-bit words in four
// interleaved lanes (pixel i goes to lane i mod 4), the lanes then hashed
// in turn. Frames that differ anywhere, even only where a small object
// is, differ in it: each step is a bijection of the lane's state for a
// given pixel and injective in the pixel for a given state. Four lanes
// because one chain of multiplies waits on the multiplier every pixel.
//
//	hᵢ₊₁ = (hᵢ ⊕ bits(fᵢ)) · FNV prime  (mod 2⁶⁴), per lane
func Sum(f []float64) uint64 {
	const basis, prime = 14695981039346656037, 1099511628211
	h0, h1, h2, h3 := uint64(basis), uint64(basis^1), uint64(basis^2), uint64(basis^3)
	i := 0
	for ; i+4 <= len(f); i += 4 {
		h0 = (h0 ^ math.Float64bits(f[i])) * prime
		h1 = (h1 ^ math.Float64bits(f[i+1])) * prime
		h2 = (h2 ^ math.Float64bits(f[i+2])) * prime
		h3 = (h3 ^ math.Float64bits(f[i+3])) * prime
	}
	for ; i < len(f); i++ {
		h0 = (h0 ^ math.Float64bits(f[i])) * prime
	}
	h := uint64(basis)
	for _, l := range [...]uint64{h0, h1, h2, h3, uint64(len(f))} {
		h = (h ^ l) * prime
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
