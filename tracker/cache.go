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
// windows hold, so only the frames new to the window are searched. It
// also keeps the scores at the places a lost object was looked for, so
// a scan again scores only places no window scanned (bestWhereMemo). An
// entry is keyed by the template's pixels and mask, the frame's pixels
// (their address, checked against their fingerprint as motion.Cache
// does: the key keeps no frame alive) and, for a match, the search's
// start and radius; what the cache returns is bitwise what a search
// afresh finds. Entries unused for cacheKeep Follow calls are dropped
// (recent.Map). Safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	calls   uint64
	matches recent.Map[matchKey, matchEntry]
	seeded  recent.Map[seedKey, seedEntry]
	scans   recent.Map[scanKey, scanned]
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

// scanKey is a template in one frame (w wide): the re-acquisition scans
// of that frame (bestWhereMemo).
type scanKey struct {
	template uint64
	frame    frameID
	w        int
}

// scanned is what a template's scans of a frame have scored: the match
// s[j] at corner at[j] (y·nx + x, nx the corners in a row), at
// ascending. Read-only once in the cache: a scan that scores more
// corners puts a new one.
type scanned struct {
	at []int32
	s  []float64
}

type matchEntry struct {
	q Point
	s float64
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{matches: recent.New[matchKey, matchEntry](), seeded: recent.New[seedKey, seedEntry](), scans: recent.New[scanKey, scanned]()}
}

// begin starts a Follow call: entries unused for cacheKeep calls go.
func (c *Cache) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.matches.Sweep(c.calls, cacheKeep)
	c.seeded.Sweep(c.calls, cacheKeep)
	c.scans.Sweep(c.calls, cacheKeep)
}

func (c *Cache) scanned(k scanKey) scanned {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, _ := c.scans.Get(k, c.calls)
	return e
}

func (c *Cache) putScanned(k scanKey, e scanned) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.scans.Put(k, e, c.calls)
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

// bestWhereMemo is bestWhere through the template's cache, when it has
// one. A lost object is looked for in every frame after the loss, among
// the corners near the places it was followed through; a window after
// this one scans the same frames again, with a set of corners that
// differs by what the frames it gained and lost added to the path. The
// score at a corner does not depend on the set, so the scores every scan
// computed are kept and a scan computes only those of corners no scan of
// the frame did. They are bestWhere's to the bit: the same running sums
// (of the whole frame) and the same products; and the corners are
// visited in bestWhere's order, so ties go the same way.
//
// corners lists the corners near sets, ascending (cornersOf): the scans
// of one loss share the set, and reading a few dozen corners from a
// list instead of a flag for each of thousands is most of what a scan
// whose scores are all kept costs.
func (t *template) bestWhereMemo(f []float64, i, w int, near []bool, corners []int32) (int, int, float64) {
	if t.cache == nil {
		return t.bestWhere(f, w, near)
	}
	k := scanKey{template: t.key, frame: t.ids[i], w: w}
	old := t.cache.scanned(k)
	nx := w - t.w + 1
	var add scanned
	built := false
	bx, by, best := 0, 0, math.Inf(-1)
	j := 0
	for _, c32 := range corners {
		c := int(c32)
		for j < len(old.at) && old.at[j] < c32 {
			j++
		}
		var s float64
		if j < len(old.at) && old.at[j] == c32 {
			s = old.s[j]
		} else {
			if !built {
				t.z.build(f, w, 0, 0, w, len(f)/w)
				built = true
			}
			s = t.ncc(f, w, c%nx, c/nx)
			add.at, add.s = append(add.at, c32), append(add.s, s)
		}
		if s > best {
			bx, by, best = c%nx, c/nx, s
		}
	}
	if len(add.at) > 0 {
		t.cache.putScanned(k, old.merge(add))
	}
	return bx, by, best
}

// cornersOf lists the corners near sets, ascending; nil without a
// cache, whose scans read near itself.
func (t *template) cornersOf(near []bool) []int32 {
	if t.cache == nil {
		return nil
	}
	var cs []int32
	for c, use := range near {
		if use {
			cs = append(cs, int32(c))
		}
	}
	return cs
}

// merge returns the scores of a and b (disjoint corners) in one list.
func (a scanned) merge(b scanned) scanned {
	n := len(a.at) + len(b.at)
	m := scanned{at: make([]int32, 0, n), s: make([]float64, 0, n)}
	i, j := 0, 0
	for i < len(a.at) || j < len(b.at) {
		if j == len(b.at) || i < len(a.at) && a.at[i] < b.at[j] {
			m.at, m.s = append(m.at, a.at[i]), append(m.s, a.s[i])
			i++
		} else {
			m.at, m.s = append(m.at, b.at[j]), append(m.s, b.s[j])
			j++
		}
	}
	return m
}
