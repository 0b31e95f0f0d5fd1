package daemon

import (
	"sync/atomic"
	"time"
)

// stage is a step of a camera's learning stage whose time is kept.
type stage int

const (
	stageDecode     stage = iota // decoding the pictures (per frame, the source's goroutine)
	stagePreprocess              // gray, crop, resize (per frame, the source's goroutine)
	stageMotion                  // the camera's own motion, measured and removed
	stageTrain                   // the learner's training: warm steps and cold starts
	stageFit                     // the learner's estimate fits on the window's own frames
	stageCertify                 // certifying the learner's estimates
	stageWeigh                   // tracked objects, certificates, the choice
	stagePublish                 // the diagnostic and the estimate on NATS
	nStages
)

// String is the stage's label in physd_stage_seconds_total.
func (s stage) String() string {
	switch s {
	case stageDecode:
		return "decode"
	case stagePreprocess:
		return "preprocess"
	case stageMotion:
		return "motion"
	case stageTrain:
		return "train"
	case stageFit:
		return "fit"
	case stageCertify:
		return "certify"
	case stageWeigh:
		return "weigh"
	case stagePublish:
		return "publish"
	}
	return "unknown"
}

// stageWork is what a camera spent, safe for concurrent use: wall time
// per stage (the per-frame stages on the source's goroutine, the others on
// the learning stage's, which runs them in turn, so their sums add up to
// its busy time; publish on the reporting stage's), the cold starts it ran
// and those it held back, and the windows it did not train on.
type stageWork struct {
	ns                   [nStages]atomic.Int64
	coldStarts, coldHeld atomic.Int64
	// untrained counts the windows estimated without warm training
	// (estimator.LearnerOptions.Lazy).
	untrained atomic.Int64
}

// add charges the time since t0 to stage s.
func (w *stageWork) add(s stage, t0 time.Time) { w.ns[s].Add(int64(time.Since(t0))) }

// addDuration charges d to stage s.
func (w *stageWork) addDuration(s stage, d time.Duration) { w.ns[s].Add(int64(d)) }

// seconds is the time charged to s so far.
func (w *stageWork) seconds(s stage) float64 { return time.Duration(w.ns[s].Load()).Seconds() }
