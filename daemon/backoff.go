package daemon

import "time"

// backoff is the wait before reopening a source that failed: first, then
// doubled after each failure up to max, back to first once frames flow
// again; each wait is spread by ±20 % so that many cameras that failed
// together do not reconnect together.
type backoff struct {
	first, max, cur time.Duration
}

func newBackoff(first, max time.Duration) *backoff {
	return &backoff{first: first, max: max, cur: first}
}

// next is the wait before the next attempt.
func (b *backoff) next() time.Duration {
	d := jitter(b.cur)
	b.cur = min(2*b.cur, b.max)
	return d
}

// reset starts again from the first wait.
func (b *backoff) reset() { b.cur = b.first }

// jitter spreads d by ±20 %.
func jitter(d time.Duration) time.Duration {
	f := 0.8 + 0.4*float64(time.Now().UnixNano()%1000)/1000
	return time.Duration(float64(d) * f)
}
