package daemon

import (
	"sync/atomic"
	"time"
)

// stage is a step of a camera's learning stage whose time is kept.
type stage int

const (
	stageMotion stage = iota // the camera's own motion, measured and removed
	stageTrain               // the learner: warm training, fit, cold start
	stageWeigh               // tracked objects, certificates, the choice
	nStages
)

// String is the stage's label in physd_stage_seconds_total.
func (s stage) String() string {
	switch s {
	case stageMotion:
		return "motion"
	case stageTrain:
		return "train"
	case stageWeigh:
		return "weigh"
	}
	return "unknown"
}

// stageWork is what a camera's learning stage spent, safe for concurrent
// reads: wall time per stage (one goroutine runs them in turn, so the
// sums add up to the stage's busy time), the cold starts it ran and those
// it held back.
type stageWork struct {
	ns                   [nStages]atomic.Int64
	coldStarts, coldHeld atomic.Int64
}

// add charges the time since t0 to stage s.
func (w *stageWork) add(s stage, t0 time.Time) { w.ns[s].Add(int64(time.Since(t0))) }

// seconds is the time charged to s so far.
func (w *stageWork) seconds(s stage) float64 { return time.Duration(w.ns[s].Load()).Seconds() }
