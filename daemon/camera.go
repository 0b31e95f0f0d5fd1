package daemon

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/wire"
)

// camera runs one configured camera's source and hands its frames to its
// lines — its own, or one per zone (fanOut): it opens the source, reopens
// it with back-off when it fails, and keeps the source's state. What a
// line does with the frames is the line's (line.go).
type camera struct {
	name string
	src  stream.Source
	log  *slog.Logger
	// check is run before the source is opened: a camera whose windows
	// cannot be cut never opens it.
	check        func() error
	reconnectMax time.Duration
	// source is the source's state; a camera's own line reports it, and
	// its zones' lines read it.
	source     sourceState
	reconnects atomic.Int64
	// count and work are the entry that reports the source's frames and
	// decoding time: the camera's own line, or its source entry.
	count *counters
	work  *stageWork
	dash  *camDash

	// evidence is the camera's part of the alerts' evidence (its
	// packets' ring), shared by its zones' lines.
	evidence *cameraEvidence

	mu    sync.Mutex
	feeds map[string]chan sourceItem // by line key

	g goroutines
}

// start runs the source and its fan-out until ctx ends or the source ends
// for good; then it closes its lines' feeds, so that they finish what
// they hold.
func (c *camera) start(parent context.Context) {
	ctx := c.g.begin(parent)
	// The lines' feeds absorb the jitter (frameQueue each); this queue
	// only hands frames to the fan-out.
	frames := make(chan sourceItem, 1)
	c.g.run(func() { defer close(frames); c.run(ctx, frames) })
	c.g.run(func() { c.fanOut(frames) })
	c.g.started()
}

// stop cancels the camera's source and waits for it, at most until ctx
// ends.
func (c *camera) stop(ctx context.Context) { c.g.stop(ctx, c.log, "camera source") }

// run reads the source, reopening it with back-off when it fails, and
// hands its frames on; a restart marks where the windows must start
// again. Whether to reopen is read from the source: a recording's end
// (stream.Ended) is final, and a source that awaits a publisher (WHIP) is
// reopened at once, for it waits rather than fails.
func (c *camera) run(ctx context.Context, out chan<- sourceItem) {
	if c.check != nil {
		if err := c.check(); err != nil {
			c.source.set(wire.StateOffline, err.Error())
			c.log.Error("camera windows", "err", err)
			return
		}
	}
	back := newBackoff(250*time.Millisecond, c.reconnectMax)
	send := func(it sourceItem) error {
		select {
		case out <- it:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	aw, ok := c.src.(publisherAwaiter)
	awaits := ok && aw.AwaitsPublisher()
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			c.reconnects.Add(1)
			if send(sourceItem{restart: true}) != nil {
				return
			}
		}
		switch {
		case !awaits:
			c.source.set(wire.StateStarting, "")
		case attempt == 0:
			c.source.set(wire.StateWaiting, "no publisher yet")
		}
		got := false
		err := c.src.Run(ctx, func(f stream.Frame) error {
			if !got {
				got = true
				c.source.set(wire.StateOnline, "")
				c.log.Info("camera online", "source", c.src.Name(), "width", f.W, "height", f.H)
				back.reset()
			}
			c.count.frames.Add(1)
			c.work.addDuration(stageDecode, f.Decode)
			c.work.addDuration(stagePreprocess, f.Preprocess)
			c.dash.setFrame(f)
			c.evidence.frame(f)
			return send(sourceItem{frame: f})
		})
		if ctx.Err() != nil {
			return
		}
		if stream.Ended(err) {
			c.source.set(wire.StateEnded, "")
			c.log.Info("camera source ended", "source", c.src.Name())
			return
		}
		c.source.set(wire.StateOffline, err.Error())
		if awaits {
			c.log.Warn("publisher gone; waiting for the next", "source", c.src.Name(), "err", err)
			continue
		}
		wait := back.next()
		c.log.Error("camera source failed; reopening", "source", c.src.Name(), "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// publisherAwaiter is a source that waits for a publisher to push its
// stream (stream.WHIPSource).
type publisherAwaiter interface{ AwaitsPublisher() bool }

// fanOut hands each item of the source to every line, in order, and
// closes their feeds when the source ends. It holds mu while it sends, so
// a line detached meanwhile (detach) is never sent to after its feed is
// closed; a line's framing stage is cheap, so the others wait on it only
// briefly.
func (c *camera) fanOut(in <-chan sourceItem) {
	for it := range in {
		c.mu.Lock()
		for _, ch := range c.feeds {
			ch <- it
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	for key, ch := range c.feeds {
		close(ch)
		delete(c.feeds, key)
	}
	c.mu.Unlock()
}

// attach makes a feed for the line key, which then gets every frame the
// source hands out from now on.
func (c *camera) attach(key string) chan sourceItem {
	ch := make(chan sourceItem, frameQueue)
	c.mu.Lock()
	if old, ok := c.feeds[key]; ok {
		close(old)
	}
	c.feeds[key] = ch
	c.mu.Unlock()
	return ch
}

// detach closes the line's feed: the line finishes what it holds and
// stops.
func (c *camera) detach(key string) {
	c.mu.Lock()
	if ch, ok := c.feeds[key]; ok {
		close(ch)
		delete(c.feeds, key)
	}
	c.mu.Unlock()
}

// newCamera is the runner of a camera's source.
func newCamera(cc config.Camera, src stream.Source, log *slog.Logger, check func() error, count *counters, work *stageWork, dash *camDash) *camera {
	maxWait := cc.Source.ReconnectMax
	if maxWait <= 0 { // a Config built in code rather than loaded
		maxWait = config.DefaultReconnectMax
	}
	return &camera{name: cc.Name, src: src, log: log, check: check, reconnectMax: maxWait, count: count, work: work, dash: dash,
		feeds: map[string]chan sourceItem{}}
}
