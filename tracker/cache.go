package tracker

import (
	"math"
	"sync"

	"github.com/physd/physd/internal/pixhash"
	"github.com/physd/physd/internal/recent"
)

// Cache keeps, across the overlapping windows of one camera, the objects
// found in each seed frame and where each template matched in each
// frame: a window after the last (one hop later) seeds its objects in
// the same frames of the stream (Stream), takes the objects the first
// window to hold a frame found there, cuts the same templates and
// follows them along the same predictions through the frames both
// windows hold, so only the frames new to the window are searched (and
// scanned again for an object lost: bestWhereMemo). An entry is keyed by
// the template's pixels and mask, the frame's pixels (their address,
// checked against their fingerprint as motion.Cache does: the key keeps
// no frame alive) and the search's start and radius; a cached match is
// bitwise the one searched afresh. Entries unused for cacheKeep Follow
// calls are dropped (recent.Map). Safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	calls   uint64
	matches recent.Map[matchKey, matchEntry]
	seeded  recent.Map[seedKey, seedEntry]
	founds  recent.Map[foundKey, foundEntry]
	// hits and misses count the matches looked up.
	hits, misses int64
}

// cacheKeep is how many Follow calls an entry survives unused: a match
// is used by every window that still holds its seed frame and its frame.
const cacheKeep = 2

// frameID is a frame's pixels: where they are and their fingerprint.
type frameID struct {
	addr  uintptr
	print uint64
}

type matchKey struct {
	template uint64
	frame    frameID
	// w is the frames' width: the same pixels in another shape are
	// another frame.
	w, x, y, r int
}

type seedKey struct {
	frame   frameID
	w, objs int
}

type seedEntry struct {
	ss []seed
	// kept marks a frame whose template became a path Follow returned.
	kept bool
}

// foundKey is a re-acquisition scan of one frame: the template's best
// match among the corners a set near (its hash, nearKey) allows.
type foundKey struct {
	template uint64
	frame    frameID
	w        int
	near     uint64
}

type foundEntry struct {
	x, y int
	s    float64
}

type matchEntry struct {
	q Point
	s float64
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{matches: recent.New[matchKey, matchEntry](), seeded: recent.New[seedKey, seedEntry](), founds: recent.New[foundKey, foundEntry]()}
}

// begin starts a Follow call: entries unused for cacheKeep calls go.
func (c *Cache) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.matches.Sweep(c.calls, cacheKeep)
	c.seeded.Sweep(c.calls, cacheKeep)
	c.founds.Sweep(c.calls, cacheKeep)
}

func (c *Cache) found(k foundKey) (foundEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.founds.Get(k, c.calls)
}

func (c *Cache) putFound(k foundKey, e foundEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.founds.Put(k, e, c.calls)
}

// seeds returns the objects found in a seed frame by an earlier window.
func (c *Cache) seeds(k seedKey) ([]seed, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.seeded.Get(k, c.calls)
	return e.ss, ok
}

// order puts first the seed frames (indices into ids) whose templates
// became paths in an earlier window, each group in stream order: an
// object seen in several seed frames is followed from the first that
// finds it, and the same template window after window is what the
// cache holds matches of.
func (c *Cache) order(at []int, ids []frameID, w, objs int) []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first, rest []int
	for _, k := range at {
		if e, _ := c.seeded.Peek(seedKey{ids[k], w, objs}); e.kept {
			first = append(first, k)
		} else {
			rest = append(rest, k)
		}
	}
	return append(first, rest...)
}

// kept marks seed frame k's objects as followed to a path.
func (c *Cache) kept(k seedKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seeded.Update(k, func(e *seedEntry) { e.kept = true })
}

func (c *Cache) putSeeds(k seedKey, ss []seed) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seeded.Put(k, seedEntry{ss: ss}, c.calls)
}

func (c *Cache) match(k matchKey) (Point, float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.matches.Get(k, c.calls)
	if ok {
		c.hits++
	} else {
		c.misses++
	}
	return e.q, e.s, ok
}

func (c *Cache) put(k matchKey, q Point, s float64) {
	c.mu.Lock()
	c.matches.Put(k, matchEntry{q: q, s: s}, c.calls)
	c.mu.Unlock()
}

// frameIDs identifies every frame of frames.
func frameIDs(frames [][]float64) []frameID {
	ids := make([]frameID, len(frames))
	for i, f := range frames {
		ids[i] = frameID{pixhash.Addr(f), pixhash.Sum(f)}
	}
	return ids
}

// templateKey hashes what a template's matches depend on: its size, its
// mask (the runs of each row) and its centred pixels and norm, FNV-1a
// over 64-bit words as pixhash.Sum.
func templateKey(t *template) uint64 {
	h := pixhash.Sum(t.v)
	mix := func(v uint64) {
		h ^= v
		h *= 1099511628211
	}
	mix(uint64(t.w))
	mix(uint64(t.h))
	mix(math.Float64bits(t.norm))
	for y, rs := range t.rows {
		for _, r := range rs {
			mix(uint64(y)<<40 | uint64(r.x0)<<20 | uint64(r.x1))
		}
	}
	return h
}

// searchMemo is template.search through the template's cache, when it
// has one.
func (t *template) searchMemo(f []float64, i, w, h, x0, y0, r int) (Point, float64) {
	if t.cache == nil {
		return t.search(f, w, h, x0, y0, r)
	}
	k := matchKey{template: t.key, frame: t.ids[i], w: w, x: x0, y: y0, r: r}
	if q, s, ok := t.cache.match(k); ok {
		return q, s
	}
	q, s := t.search(f, w, h, x0, y0, r)
	t.cache.put(k, q, s)
	return q, s
}

// nearKey hashes the corners a re-acquisition scan may take: FNV-1a
// over the flags packed 64 to a word, and their count.
func nearKey(near []bool) uint64 {
	h := uint64(14695981039346656037)
	var word uint64
	for i, b := range near {
		if b {
			word |= 1 << (i % 64)
		}
		if i%64 == 63 || i == len(near)-1 {
			h = (h ^ word) * 1099511628211
			word = 0
		}
	}
	return (h ^ uint64(len(near))) * 1099511628211
}

// bestWhereMemo is bestWhere through the template's cache, when it has
// one; nk is near's nearKey. A lost object is looked for in every frame
// after the loss, and a window after this one, following the same
// template along the same matches to the same loss, scans the same
// frames with the same near set: those scans are kept.
func (t *template) bestWhereMemo(f []float64, i, w int, near []bool, nk uint64) (int, int, float64) {
	if t.cache == nil {
		return t.bestWhere(f, w, near)
	}
	k := foundKey{template: t.key, frame: t.ids[i], w: w, near: nk}
	if e, ok := t.cache.found(k); ok {
		return e.x, e.y, e.s
	}
	x, y, s := t.bestWhere(f, w, near)
	t.cache.putFound(k, foundEntry{x: x, y: y, s: s})
	return x, y, s
}
