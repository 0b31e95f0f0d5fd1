package daemon

import (
	"time"

	"github.com/physd/physd/analysis"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/flow"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
)

// Queue lengths between a camera's stages.
const (
	// frameQueue holds frames between the source and the framing stage:
	// framing is cheap, so this only absorbs scheduling jitter.
	frameQueue = 32
	// outcomeQueue holds outcomes between learning and reporting, so that
	// a slow publisher (an outbox append during a NATS outage) does not
	// hold up the next window's fit.
	outcomeQueue = 8
)

// sourceItem is what the source stage hands the framing stage: a frame, or
// a restart of the source (the windows start again).
type sourceItem struct {
	frame   stream.Frame
	restart bool
}

// outcome is the learning stage's result for one job, as the reporting
// stage publishes it: the estimate with its verdict, an error, or a window
// that was skipped.
type outcome struct {
	job     job
	res     *estimator.Result
	verdict window.Verdict
	info    wire.EncoderInfo
	train   time.Duration
	// amp is the window's displacement amplitude in source pixels (nil:
	// not measured); the reporting stage adds the line's scale.
	amp *flow.Amplitude
	// peak is the highest spectral line of the window's readouts, Hz
	// (analysis.Report.Peak; 0: none).
	peak float64
	// ambient is an ambient record's facts (nil for the other modes).
	ambient *wire.Ambient
	// modes are the window's modes when it rings in several
	// (analysis.Report.Modes; nil otherwise).
	modes   *analysis.Modes
	err     error // the window could not be estimated
	skipped bool  // a newer window replaced this one before it was fitted
}
