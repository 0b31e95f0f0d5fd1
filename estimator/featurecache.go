package estimator

import (
	"slices"

	"github.com/physd/physd/internal/pixhash"
)

// featureCache keeps each frame's features h = W(x − μ) across calls, for
// an encoder whose W and μ stay put between calls: the online learner's,
// whose spatial features only a cold start changes, while every frame
// sits in several overlapping windows and the replay set and each window
// reads its features several times. Frames are keyed by the address of
// their pixels (pixhash.Addr: frames are shared, never written after
// decoding, and the key keeps none alive — exposure-normalised copies
// die with their window) and checked against a hash of the frame's
// pixels, so that a recycled buffer holding another frame is not
// mistaken for the one it held; a row is
// bitwise the one features would compute, since each is one worker's dot
// products of that frame alone.
type featureCache struct {
	w, mean []float64 // the W and μ the rows were computed with
	rows    map[uintptr]cachedRow
	calls   uint64
}

type cachedRow struct {
	h     []float64
	print uint64 // fingerprint of the frame it was computed from
	used  uint64 // the call that last read it
}

// fingerprint is the frame's pixel hash (pixhash.Sum).
func fingerprint(f []float64) uint64 { return pixhash.Sum(f) }

// cacheKeep is how many calls a row survives unread: a window reads its
// frames about four times, so frames that left every window and the
// replay set are dropped within two windows.
const cacheKeep = 8

// EnableFeatureCache makes e keep its frames' features across calls
// (see featureCache); the online learner turns it on for the encoder it
// keeps. An encoder with a cache is not safe for concurrent use.
func (e *LowRank) EnableFeatureCache() {
	if e.cache == nil {
		e.cache = &featureCache{rows: map[uintptr]cachedRow{}}
	}
}

// cachedFeatures is features through the cache: rows of frames seen with
// the current W and μ are reused, the others computed and kept.
func (e *LowRank) cachedFeatures(frames [][]float64) []float64 {
	c := e.cache
	wd := data(e.W)
	if !slices.Equal(c.w, wd) || !slices.Equal(c.mean, e.Mean) {
		c.w, c.mean = append(c.w[:0], wd...), append(c.mean[:0], e.Mean...)
		clear(c.rows)
	}
	c.calls++
	prints := make([]uint64, len(frames))
	var miss [][]float64
	var missPrint []uint64
	for i, f := range frames {
		if len(f) == 0 {
			continue
		}
		prints[i] = fingerprint(f)
		if r, ok := c.rows[pixhash.Addr(f)]; !ok || r.print != prints[i] {
			miss, missPrint = append(miss, f), append(missPrint, prints[i])
		}
	}
	if len(miss) > 0 {
		hm := e.computeFeatures(miss)
		for j, f := range miss {
			c.rows[pixhash.Addr(f)] = cachedRow{h: hm[j*e.K : (j+1)*e.K : (j+1)*e.K], print: missPrint[j]}
		}
	}
	h := make([]float64, len(frames)*e.K)
	for i, f := range frames {
		if len(f) == 0 {
			continue
		}
		r := c.rows[pixhash.Addr(f)]
		r.used = c.calls
		c.rows[pixhash.Addr(f)] = r
		copy(h[i*e.K:(i+1)*e.K], r.h)
	}
	for k, r := range c.rows {
		if c.calls-r.used > cacheKeep {
			delete(c.rows, k)
		}
	}
	return h
}
