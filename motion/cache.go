package motion

import (
	"context"
	"sync"

	"github.com/physd/physd/internal/pixhash"
)

// Cache keeps, across the overlapping windows of one camera, what Measure
// computes of single frames (the half-size frame, its descriptor, and in
// the detection test its preparation for registering) and of
// pairs of frames (their registration): each frame sits in several windows, and registering
// pairs is most of a window's test. Entries are keyed by the address of
// the frame's pixels (pixhash.Addr: frames are shared, never written
// after decoding, and the key keeps none alive) and checked against a
// hash of its pixels, so a recycled buffer is not
// taken for the frame it held; a cached result is bitwise the one
// computed afresh. Entries not used for cacheKeep calls are dropped.
// Safe for concurrent use.
type Cache struct {
	mu     sync.Mutex
	calls  uint64
	halves map[uintptr]halfEntry
	descs  map[frameKey]frameEntry[[]float64]
	preps  map[frameKey]frameEntry[prepared]
	pairs  map[pairKey]pairEntry
	// dist is the last window's descriptor distances (n×n, row-major)
	// between the frames distIDs names: the next window's frames it
	// shares take their distances from it.
	dist    []float64
	distIDs []frameID
}

// frameID is a frame by its pixels: where they are, their fingerprint
// and its size.
type frameID struct {
	frameKey
	print uint64
}

// cacheKeep is how many Measure calls an entry survives unused.
const cacheKeep = 4

type frameKey struct {
	p    uintptr
	w, h int
}

type pairKey struct{ a, b frameKey }

type halfEntry struct {
	print uint64
	f     []float64
	used  uint64
}

// frameEntry is what the cache keeps of one frame: its descriptor, or
// its preparation for registering (registrar.prepare: 16 bytes a pixel of
// the detection test's half-size frames, a few MB for a camera's line),
// with the frame's fingerprint.
type frameEntry[T any] struct {
	print uint64
	v     T
	used  uint64
}

type pairEntry struct {
	prints [2]uint64
	d      Shift
	r, r0  float64
	ok     bool
	used   uint64
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{halves: map[uintptr]halfEntry{}, descs: map[frameKey]frameEntry[[]float64]{}, preps: map[frameKey]frameEntry[prepared]{}, pairs: map[pairKey]pairEntry{}}
}

// fingerprint is the frame's pixel hash (pixhash.Sum).
func fingerprint(f []float64) uint64 { return pixhash.Sum(f) }

// begin starts a Measure call: entries unused for cacheKeep calls go.
func (c *Cache) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	for k, e := range c.halves {
		if c.calls-e.used > cacheKeep {
			delete(c.halves, k)
		}
	}
	for k, e := range c.descs {
		if c.calls-e.used > cacheKeep {
			delete(c.descs, k)
		}
	}
	for k, e := range c.preps {
		if c.calls-e.used > cacheKeep {
			delete(c.preps, k)
		}
	}
	for k, e := range c.pairs {
		if c.calls-e.used > cacheKeep {
			delete(c.pairs, k)
		}
	}
}

// halve is the package's halve through the cache.
func (c *Cache) halve(f []float64, w, h int) ([]float64, int, int) {
	if c == nil || len(f) == 0 {
		return halve(f, w, h)
	}
	pr := fingerprint(f)
	c.mu.Lock()
	e, ok := c.halves[pixhash.Addr(f)]
	if ok && e.print == pr && len(e.f) == (w/2)*(h/2) {
		e.used = c.calls
		c.halves[pixhash.Addr(f)] = e
		c.mu.Unlock()
		return e.f, w / 2, h / 2
	}
	c.mu.Unlock()
	out, hw, hh := halve(f, w, h)
	c.mu.Lock()
	c.halves[pixhash.Addr(f)] = halfEntry{print: pr, f: out, used: c.calls}
	c.mu.Unlock()
	return out, hw, hh
}

// descriptor returns frame f's descriptor if cached, else nil; pr is
// f's fingerprint.
func (c *Cache) descriptor(f []float64, pr uint64, w, h int) []float64 {
	d, _ := getFrame(c, c.descs, f, pr, w, h)
	return d
}

func (c *Cache) putDescriptor(f []float64, pr uint64, w, h int, desc []float64) {
	putFrame(c, c.descs, f, pr, w, h, desc)
}

// preparation returns frame f's preparation if cached; pr is f's
// fingerprint.
func (c *Cache) preparation(f []float64, pr uint64, w, h int) (prepared, bool) {
	return getFrame(c, c.preps, f, pr, w, h)
}

func (c *Cache) putPreparation(f []float64, pr uint64, w, h int, p prepared) {
	putFrame(c, c.preps, f, pr, w, h, p)
}

// getFrame returns m's entry for the w×h frame f if its fingerprint is pr
// (a recycled buffer's is not), marking it used.
func getFrame[T any](c *Cache, m map[frameKey]frameEntry[T], f []float64, pr uint64, w, h int) (T, bool) {
	var zero T
	if c == nil || len(f) == 0 {
		return zero, false
	}
	k := frameKey{pixhash.Addr(f), w, h}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := m[k]
	if !ok || e.print != pr {
		return zero, false
	}
	e.used = c.calls
	m[k] = e
	return e.v, true
}

// putFrame keeps v for the w×h frame f of fingerprint pr in m.
func putFrame[T any](c *Cache, m map[frameKey]frameEntry[T], f []float64, pr uint64, w, h int, v T) {
	if c == nil || len(f) == 0 {
		return
	}
	c.mu.Lock()
	m[frameKey{pixhash.Addr(f), w, h}] = frameEntry[T]{print: pr, v: v, used: c.calls}
	c.mu.Unlock()
}

// registered returns the registration of frame b against frame a if
// cached; prints are their fingerprints.
func (c *Cache) registered(a, b []float64, prints [2]uint64, w, h int) (pairEntry, bool) {
	if c == nil || len(a) == 0 || len(b) == 0 {
		return pairEntry{}, false
	}
	k := pairKey{frameKey{pixhash.Addr(a), w, h}, frameKey{pixhash.Addr(b), w, h}}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.pairs[k]
	if !ok || e.prints != prints {
		return pairEntry{}, false
	}
	e.used = c.calls
	c.pairs[k] = e
	return e, true
}

func (c *Cache) putRegistered(a, b []float64, prints [2]uint64, w, h int, e pairEntry) {
	if c == nil || len(a) == 0 || len(b) == 0 {
		return
	}
	e.prints = prints
	c.mu.Lock()
	e.used = c.calls
	c.pairs[pairKey{frameKey{pixhash.Addr(a), w, h}, frameKey{pixhash.Addr(b), w, h}}] = e
	c.mu.Unlock()
}

// distances returns the n×n matrix of descriptor distances (descDist)
// between the frames, row-major, computed on workers goroutines, each
// pair once, the pairs of frames the last window also held taken from
// the cache (prints are the frames' fingerprints). The result is the
// same to the bit.
func (c *Cache) distances(ctx context.Context, workers int, frames [][]float64, prints []uint64, desc [][]float64, w, h int) ([]float64, error) {
	n := len(frames)
	dist := make([]float64, n*n)
	ids := make([]frameID, n)
	for k, f := range frames {
		ids[k] = frameID{frameKey{pixhash.Addr(f), w, h}, prints[k]}
	}
	c.mu.Lock()
	prev, pn := c.dist, len(c.distIDs)
	at := make(map[frameID]int, pn)
	for i, id := range c.distIDs {
		at[id] = i
	}
	c.mu.Unlock()
	// old[k] is frame k's index in the last window, −1 if it was not in
	// it.
	old := make([]int, n)
	for k, id := range ids {
		old[k] = -1
		if i, ok := at[id]; ok {
			old[k] = i
		}
	}
	err := parallel(ctx, workers, n, func(_, k int) {
		for l := k; l < n; l++ {
			var d float64
			if old[k] >= 0 && old[l] >= 0 {
				d = prev[old[k]*pn+old[l]]
			} else {
				d = descDist(desc[k], desc[l])
			}
			dist[k*n+l], dist[l*n+k] = d, d
		}
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.dist, c.distIDs = dist, ids
	c.mu.Unlock()
	return dist, nil
}
