package daemon

import "context"

// gate bounds how many cameras estimate a window at once: as many as
// there are cores. A window's estimate keeps one core busy
// (estimator.workers: 1) or spreads over several, so more estimates at
// once than cores buy no throughput: they only hold more windows' working
// sets (normalised copies, features, a cold start's matrices) in memory
// together, which is what set the peak resident set of four cameras on
// two cores. A nil gate lets everything through.
type gate chan struct{}

// newGate returns a gate of n slots (n ≥ 1).
func newGate(n int) gate { return make(gate, max(1, n)) }

// acquire takes a slot, waiting for one; false if ctx ended first.
func (g gate) acquire(ctx context.Context) bool {
	if g == nil {
		return ctx.Err() == nil
	}
	select {
	case g <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// release gives back a slot taken by acquire.
func (g gate) release() {
	if g != nil {
		<-g
	}
}
