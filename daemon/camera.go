package daemon

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/motion"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/tracker"
	"github.com/physd/physd/wire"
)

// job is one unit of estimation: a sliding window (one clip) or a set of
// excitation events (several clips), or a single event fitted alone for
// its diagnostic.
type job struct {
	clips []estimator.Clip
	// refs are the reference region's patches (refW×refH), per clip and
	// frame, when the camera has one; srcW×srcH is the source frame.
	refs                   [][][]float64
	refW, refH, srcW, srcH int
	start                  time.Time
	end                    time.Time
	frames                 int
	single                 bool // a lone event: published as a diagnostic only
	// first is the stream's index (Seq) of a window's first frame and hop
	// how many frames apart windows start (0 for events), for the
	// tracker (tracker.Stream).
	first, hop int
}

// publisher is what a camera needs of the message bus (the NATS bus
// implements it): publish a message, on its subject and with its id.
type publisher interface {
	publish(ctx context.Context, m wire.Message) error
}

// camera runs one configured camera as a line of stages (start), one
// file each: source (runner.go: reopening with back-off, fanning frames
// out to zones), framing (framing.go: windows or events), learning and
// certification (learning.go: the window analysis), reporting
// (reporting.go: diagnostics, estimates, alerts, status). Its goroutines
// stop with its context.
type camera struct {
	cfg config.Camera
	all *config.Config
	src stream.Source
	log *slog.Logger
	bus publisher
	// node is the board's name, for messages and their ids (bus.node).
	node   string
	dir    string // state directory for this camera
	onEst  func(wire.Estimate)
	preset estimator.Preset
	// motionCache keeps the camera-motion test's per-frame and per-pair
	// results for the next overlapping windows (nil: none kept).
	motionCache *motion.Cache
	// trackCache keeps the tracker's matches for the next overlapping
	// windows.
	trackCache *tracker.Cache
	// trainTime observes each window's training and fitting time.
	trainTime interface{ Observe(float64) }
	// work sums the learning stage's wall time per step and counts its
	// cold starts, for /metrics and the bench's breakdown.
	work stageWork

	jobs chan batch // capacity 1: a newer window replaces one not yet started
	// gate is the daemon's bound on windows estimated at once, shared
	// by its cameras (nil: none).
	gate gate

	// source is the state of the frames' source: for a camera its own,
	// for a zone whether its region can be cut (up holds its camera's).
	source sourceState
	// rec is what the line reported; alerts is the reporting stage's
	// alone.
	rec    *record
	alerts *alerter
	dash   *camDash // the dashboard's record; nil records nothing

	frames, dropped, breaks, skipped, events, reconnects atomic.Int64

	cancel      context.CancelFunc
	done        chan struct{}
	lastSkipLog time.Time // framing stage only

	// A zone's line (zones.go): zone is its name, cut its preprocessing
	// of the camera's whole gray frames, feed where those frames arrive
	// (its source stage is the camera's).
	zone string
	cut  *stream.Preprocess
	feed chan sourceItem
	up   *camera // the camera whose source feeds the zone
	// A camera with zones runs only its source stage and fans the frames
	// out to its zones' lines (fanOut); feeds are theirs, by zone name.
	zmu   sync.Mutex
	feeds map[string]chan sourceItem
}

// key names the camera's line in subjects, message IDs, metrics and the
// daemon's table: the camera's name, or "<camera>.<zone>" for a zone.
func (c *camera) key() string {
	if c.zone == "" {
		return c.cfg.Name
	}
	return c.cfg.Name + "." + c.zone
}

func (c *camera) setState(s wire.State, errText string) { c.source.set(s, errText) }

// start launches the camera's pipeline, one goroutine a stage — source
// (frames, reconnects, state) → framing (windows or events) → learning
// (learner and certificate: one outcome, its verdict computed once) →
// reporting (estimates, diagnostics, alerts, to the publisher) — and the
// heartbeat. Each stage ends when its input closes; cancelling the camera
// stops the source, and what is already in the line is still reported.
func (c *camera) start(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	c.cancel = cancel
	c.done = make(chan struct{})
	c.jobs = make(chan batch, 1)
	frames := make(chan sourceItem, frameQueue)
	outs := make(chan outcome, outcomeQueue)
	var wg sync.WaitGroup
	if c.feeds != nil { // a camera with zones: source → its zones' lines
		wg.Add(3)
		go func() { defer wg.Done(); defer close(frames); c.runSource(ctx, frames) }()
		go func() { defer wg.Done(); c.fanOut(frames) }()
		go func() { defer wg.Done(); c.heartbeat(ctx) }()
		go func() { wg.Wait(); close(c.done) }()
		return
	}
	wg.Add(5)
	if c.feed != nil { // a zone: the camera's source stage feeds it
		wg.Done()
		frames = c.feed
	} else {
		go func() { defer wg.Done(); defer close(frames); c.runSource(ctx, frames) }()
	}
	go func() { defer wg.Done(); defer close(c.jobs); c.frame(ctx, frames) }()
	go func() { defer wg.Done(); defer close(outs); c.learn(ctx, outs) }()
	go func() { defer wg.Done(); c.report(ctx, outs) }()
	go func() { defer wg.Done(); c.heartbeat(ctx) }()
	go func() { wg.Wait(); close(c.done) }()
}

// stop cancels the camera and waits for it, at most until ctx ends.
func (c *camera) stop(ctx context.Context) {
	c.cancel()
	select {
	case <-c.done:
	case <-ctx.Done():
		c.log.Warn("camera did not stop in time")
	}
}
