package stream

import (
	"math"
	"slices"
	"time"
)

// recentSteps is how many recent reliable steps extrapolation uses.
const recentSteps = 15

// ptsClock turns the positions OpenCV reports after each read
// (CAP_PROP_POS_MSEC, in milliseconds) into frame times, repairing the
// unusable ones as the package documentation describes. It is shared by
// files and live cameras.
type ptsClock struct {
	declared     float64         // declared rate, 0 if none
	recent       []time.Duration // last reliable steps
	n            int             // frames seen
	first, last  time.Duration   // times of the first and last frame
	lastReliable bool            // whether last is a trustworthy time
	repaired     int
}

// next converts the position read after frame c.n into its time. It
// reports ok=false, and extrapolates, when the value is unusable: not
// finite, negative, absurdly large, or not later than the previous time.
func (c *ptsClock) next(ms float64) (t time.Duration, ok bool) {
	ok = !math.IsNaN(ms) && !math.IsInf(ms, 0) && ms >= 0 && ms < 1e12
	if ok {
		t = time.Duration(math.Round(ms * float64(time.Millisecond)))
	}
	switch {
	case c.n == 0:
		if !ok {
			t = 0
			c.repaired++
		}
		c.first = t
	case !ok || t <= c.last:
		t, ok = c.last+c.stepEstimate(), false
		c.repaired++
	case c.lastReliable:
		if len(c.recent) == recentSteps {
			copy(c.recent, c.recent[1:])
			c.recent = c.recent[:recentSteps-1]
		}
		c.recent = append(c.recent, t-c.last)
	}
	c.n++
	c.last = t
	c.lastReliable = ok
	return t, ok
}

// stepEstimate is the step used to extrapolate an unusable frame time: the
// median of the recent reliable steps, else 1/declared rate, else 0.
func (c *ptsClock) stepEstimate() time.Duration {
	if len(c.recent) > 0 {
		s := slices.Clone(c.recent)
		slices.Sort(s)
		return s[len(s)/2]
	}
	if c.declared > 0 {
		return time.Duration(math.Round(float64(time.Second) / c.declared))
	}
	return 0
}
