package evidence

import (
	"sync"
	"time"

	"github.com/physd/physd/stream"
)

// Ring is a camera's recent access units, safe for one writer (the
// source's goroutine, through Add) and any number of readers (Cut). It
// keeps every unit from the last key picture that arrived at or before
// Hold ago, and drops whole groups of pictures, oldest first, beyond
// MaxBytes. A new session (a reconnection) or a change of codec starts
// it again: a clip never spans two sessions' clocks.
type Ring struct {
	hold     time.Duration
	maxBytes int

	mu    sync.Mutex
	units []stream.AccessUnit
	bytes int
	// dropped counts units dropped for the byte cap before Hold.
	dropped int64
}

// NewRing returns a ring holding hold of video within maxBytes (≤ 0: no
// byte cap).
func NewRing(hold time.Duration, maxBytes int) *Ring {
	return &Ring{hold: hold, maxBytes: maxBytes}
}

// Add appends an access unit. Units before the stream's first key
// picture are not kept: nothing decodes them.
func (r *Ring) Add(u stream.AccessUnit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.units); n > 0 {
		last := r.units[n-1]
		if u.Session != last.Session || u.Codec != last.Codec || u.PTS < last.PTS-10*stream.ClockRate {
			r.reset()
		}
	}
	if len(r.units) == 0 && !u.Key {
		return
	}
	r.units = append(r.units, u)
	r.bytes += len(u.Data)
	r.trim(u.Wall)
}

func (r *Ring) reset() {
	clear(r.units)
	r.units, r.bytes = r.units[:0], 0
}

// trim drops the groups of pictures no longer needed: while the second
// key picture arrived Hold or more before now, everything before it; and
// while over the byte cap, the oldest group (never the last).
func (r *Ring) trim(now time.Time) {
	for {
		k := r.nextKey(1)
		if k < 0 {
			return
		}
		old := !r.units[k].Wall.After(now.Add(-r.hold))
		over := r.maxBytes > 0 && r.bytes > r.maxBytes
		if !old && !over {
			return
		}
		if over && !old {
			r.dropped += int64(k)
		}
		for _, u := range r.units[:k] {
			r.bytes -= len(u.Data)
		}
		// Copy down so the backing array does not grow without bound.
		n := copy(r.units, r.units[k:])
		clear(r.units[n:])
		r.units = r.units[:n]
	}
}

// nextKey is the index of the first key picture at or after i (−1: none).
func (r *Ring) nextKey(i int) int {
	for ; i < len(r.units); i++ {
		if r.units[i].Key {
			return i
		}
	}
	return -1
}

// Codec is the codec of the units held ("" when empty).
func (r *Ring) Codec() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.units) == 0 {
		return ""
	}
	return r.units[0].Codec
}

// Newest is the arrival time of the last unit (zero when empty).
func (r *Ring) Newest() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.units) == 0 {
		return time.Time{}
	}
	return r.units[len(r.units)-1].Wall
}

// Stats are the ring's size: units held, their bytes, and units dropped
// for the byte cap before they were Hold old.
func (r *Ring) Stats() (units, bytes int, dropped int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.units), r.bytes, r.dropped
}

// Cut returns the units for a clip of [from, to]: from the last key
// picture that arrived at or before from (or the first held, when the
// ring does not reach back that far) through the last that arrived at or
// before to; ok is false when it holds no unit in [from, to]. The clip
// shares the units' data, which the ring never modifies.
func (r *Ring) Cut(from, to time.Time) (c Clip, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	start := 0
	for i, u := range r.units {
		if u.Wall.After(from) {
			break
		}
		if u.Key {
			start = i
		}
	}
	end := len(r.units)
	for end > start && r.units[end-1].Wall.After(to) {
		end--
	}
	if end <= start || r.units[end-1].Wall.Before(from) {
		return Clip{}, false
	}
	c = Clip{From: from, To: to, Units: append([]stream.AccessUnit(nil), r.units[start:end]...)}
	c.Codec = c.Units[0].Codec
	return c, true
}
