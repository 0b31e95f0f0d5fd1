package daemon

import (
	"sync/atomic"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/window"
)

// autoBinProbe is how long an auto-binned line runs decimated before it
// looks at its camera's full rate again for one window: long enough to
// cost nothing, short enough that a mode which rose, or a faster one the
// decimation hides, is found within minutes.
const autoBinProbe = 10 * time.Minute

// binChoice carries an auto-binned line's decimation (windows.bin: auto)
// from its reporting stage, which learns it from certified windows
// (window.AutoBin), to its framing stage, which applies it. The latest
// request wins; one made from windows of another decimation than the
// framer's (a window certified just before a change or a probe, still in
// flight) is stale and dropped.
type binChoice struct {
	// req is n<<8 | the bin of the window it was learned from; 0: none.
	req atomic.Int64
}

// learn requests the decimation a certified window r of job j calls for.
func (c *binChoice) learn(j job, r *estimator.Result) {
	if c == nil || r == nil || len(j.clips) == 0 {
		return
	}
	from := max(j.bin, 1)
	n := window.AutoBin(r.Gamma1, r.Gamma0, j.clips[0].Dt, j.frames, from, int(config.MaxBin))
	c.req.Store(int64(n)<<8 | int64(from))
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
		return n, "chosen from a certified window (window.AutoBin)"
	}
	if cur > 1 && t-a.since >= a.probe {
		a.since = t
		return 1, "probing the full frame rate for one window"
	}
	return cur, ""
}
