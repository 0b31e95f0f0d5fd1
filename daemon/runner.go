package daemon

import (
	"context"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
)

// runSource reads the source, reopening it with backoff when it fails,
// and hands its frames to the framing stage; a restart marks where the
// windows must start again.
func (c *camera) runSource(ctx context.Context, out chan<- sourceItem) {
	win := c.cfg.EffectiveWindow(c.all.Windows)
	if _, err := window.NewSlicer(window.SlicerOptions{Length: win.Length, Hop: win.Hop, MaxGap: win.MaxGap, FPS: c.cfg.FPS}); err != nil {
		c.setState(wire.StateOffline, err.Error())
		c.log.Error("camera windows", "err", err)
		return
	}
	const firstBackoff = 250 * time.Millisecond
	backoff, maxBackoff := firstBackoff, c.cfg.Source.ReconnectMax
	if maxBackoff <= 0 { // a Config built in code rather than loaded
		maxBackoff = config.DefaultReconnectMax
	}
	send := func(it sourceItem) error {
		select {
		case out <- it:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// A source that awaits its publisher (WHIP) waits rather than fails
	// until one connects, and is reopened at once when a session ends.
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
			c.setState(wire.StateStarting, "")
		case attempt == 0:
			c.setState(wire.StateWaiting, "no publisher yet")
		}
		got := false
		err := c.src.Run(ctx, func(f stream.Frame) error {
			if !got {
				got = true
				c.setState(wire.StateOnline, "")
				c.log.Info("camera online", "source", c.src.Name(), "width", f.W, "height", f.H)
				backoff = firstBackoff
			}
			c.frames.Add(1)
			c.work.addDuration(stageDecode, f.Decode)
			c.work.addDuration(stagePreprocess, f.Preprocess)
			c.dash.setFrame(f)
			return send(sourceItem{frame: f})
		})
		if ctx.Err() != nil {
			return
		}
		// A recording (or a finite synthetic stream) ends; a live stream
		// that ends is reopened like one that failed.
		if stream.Ended(err) {
			c.setState(wire.StateEnded, "")
			c.log.Info("camera source ended", "source", c.src.Name())
			return
		}
		c.setState(wire.StateOffline, err.Error())
		if awaits {
			c.log.Warn("publisher gone; waiting for the next", "source", c.src.Name(), "err", err)
			continue
		}
		c.log.Error("camera source failed; reopening", "source", c.src.Name(), "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(jitter(backoff)):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// publisherAwaiter is a source that waits for a publisher to push its
// stream (stream.WHIPSource).
type publisherAwaiter interface{ AwaitsPublisher() bool }

// jitter spreads reconnects of many cameras: ±20 %.
func jitter(d time.Duration) time.Duration {
	f := 0.8 + 0.4*float64(time.Now().UnixNano()%1000)/1000
	return time.Duration(float64(d) * f)
}

// fanOut hands each item of the camera's source stage to every zone's
// line, in order, and closes their feeds when the source ends. It holds
// zmu while it sends, so a zone detached meanwhile (detach) is never sent
// to after its feed is closed; a zone's framing stage is cheap, so the
// others wait on it only briefly.
func (c *camera) fanOut(in <-chan sourceItem) {
	for it := range in {
		c.zmu.Lock()
		for _, ch := range c.feeds {
			ch <- it
		}
		c.zmu.Unlock()
	}
	c.zmu.Lock()
	for name, ch := range c.feeds {
		close(ch)
		delete(c.feeds, name)
	}
	c.feeds = map[string]chan sourceItem{} // still a camera with zones
	c.zmu.Unlock()
}

// attach makes a feed for the zone's line, which then gets every frame
// the camera's source stage hands out from now on.
func (c *camera) attach(zone string) chan sourceItem {
	ch := make(chan sourceItem, frameQueue)
	c.zmu.Lock()
	if old, ok := c.feeds[zone]; ok {
		close(old)
	}
	c.feeds[zone] = ch
	c.zmu.Unlock()
	return ch
}

// detach closes the zone's feed: its line finishes what it holds and
// stops.
func (c *camera) detach(zone string) {
	c.zmu.Lock()
	if ch, ok := c.feeds[zone]; ok {
		close(ch)
		delete(c.feeds, zone)
	}
	c.zmu.Unlock()
}
