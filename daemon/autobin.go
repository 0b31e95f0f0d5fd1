package daemon

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/window"
)

// autoBinProbe is how long an auto-binned line runs decimated before it
// looks at its camera's full rate again for one window: long enough to
// cost nothing, short enough that a mode which rose, or a faster one the
// decimation hides, is found within minutes.
const autoBinProbe = 10 * time.Minute

// binChoice carries an auto-binned line's decimation (windows.bin: auto)
// from its reporting stage, which learns it from the windows it
// reports, to its framing stage, which applies it. The latest request
// wins; one made from windows of another decimation than the framer's (a
// window reported just before a change or a probe, still in flight) is
// stale and dropped.
//
// What a window asks for (want):
//   - a certified one: window.AutoBin of its mode, no coarser than the
//     spectral lines of its readouts allow (window.AutoBinBand);
//   - any other: what those lines allow, at most window.BlindBin, and no
//     coarser than the line's last certified window asked for.
//
// When it is requested:
//   - what a certified window's own mode asks for, at once (as a mode
//     the line follows moves, so does its decimation);
//   - a finer one the lines ask for, once binFiner windows in a row ask
//     for one (the coarsest of theirs): a line one window shows (a seam,
//     a burst of the codec's) does not restart the line's windows, and a
//     mode that rose is seen a hop later;
//   - a coarser one, once binSettle windows in a row allow it (the least
//     of theirs), or binBlind before the line's first certificate.
type binChoice struct {
	// req is n<<8 | the bin of the window it was learned from; 0: none.
	req atomic.Int64
	// The reporting stage's own: the decimation its windows came at,
	// what the last of them asked for, and what the line's last
	// certified mode asked for (window.AutoBin; 0: none yet).
	from  int
	asked []int
	cert  int
}

// binFiner and binSettle are how many windows in a row must ask for a
// finer decimation, or allow a coarser one, before it is requested;
// binBlind, how many must allow a coarser one when the line has not
// certified a mode yet (its first windows at the full rate are its
// learner's best chance to find one).
const (
	binFiner  = 2
	binSettle = 3
	binBlind  = 10
)

// settle is how many windows must allow a coarser decimation.
func (c *binChoice) settle() int {
	if c.cert == 0 {
		return binBlind
	}
	return binSettle
}

// learn takes the decimation the outcome o of job j calls for.
func (c *binChoice) learn(j job, o outcome) {
	if c == nil || o.err != nil || o.skipped || j.single || len(j.clips) == 0 {
		return
	}
	from := max(j.bin, 1)
	if from != c.from {
		c.from, c.asked = from, c.asked[:0]
	}
	n, mode := c.want(j, o, from)
	c.asked = append(c.asked, n)
	if len(c.asked) > c.settle() {
		c.asked = append(c.asked[:0], c.asked[1:]...) // kept in place: a line runs for months
	}
	switch {
	case mode && n != from:
	case n < from && len(c.asked) >= binFiner && slices.Max(c.asked[len(c.asked)-binFiner:]) < from:
		n = slices.Max(c.asked[len(c.asked)-binFiner:])
	case n > from && len(c.asked) >= c.settle() && slices.Min(c.asked) > from:
		n = slices.Min(c.asked)
	default:
		return
	}
	c.asked = c.asked[:0]
	c.req.Store(int64(n)<<8 | int64(from))
}

// want is the decimation o asks for, and whether a certified mode asks
// for it (not only the window's spectral lines).
func (c *binChoice) want(j job, o outcome, from int) (int, bool) {
	dt, maxN := j.clips[0].Dt, int(config.MaxBin)
	if o.verdict.Certified && o.res != nil {
		m := window.AutoBin(o.res.Gamma1, o.res.Gamma0, dt, j.frames, from, maxN)
		b := window.AutoBinBand(o.peak, dt, j.frames, from, maxN, false)
		c.cert = m
		return min(m, b), m <= b
	}
	n := window.AutoBinBand(o.peak, dt, j.frames, from, maxN, true)
	if c.cert > 0 {
		n = min(n, c.cert)
	}
	return n, false
}

// take returns the decimation last requested from windows binned by cur,
// if it differs from cur.
func (c *binChoice) take(cur int) (int, bool) {
	v := c.req.Load()
	if v == 0 {
		return 0, false
	}
	c.req.CompareAndSwap(v, 0)
	n, from := int(v>>8), int(v&0xff)
	return n, from == cur && n != cur
}

// autoBin is the framing stage's side of windows.bin: auto: the choice it
// applies and when it last looked at the full rate.
type autoBin struct {
	choice *binChoice
	probe  time.Duration
	// since is the stream time the current decimation began.
	since time.Duration
}

// next is the decimation the frame at stream time t should be binned by,
// given the current one, and why it changes ("" when it does not).
func (a *autoBin) next(cur int, t time.Duration) (int, string) {
	if a == nil {
		return cur, ""
	}
	if t < a.since {
		a.since = t // the stream started again: its clock with it
	}
	if n, ok := a.choice.take(cur); ok {
		a.since = t
		return n, "chosen from the windows' modes and spectral lines (window.AutoBin, window.AutoBinBand)"
	}
	if cur > 1 && t-a.since >= a.probe {
		a.since = t
		return 1, "probing the full frame rate for one window"
	}
	return cur, ""
}
