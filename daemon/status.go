package daemon

import (
	"context"
	"time"

	"github.com/physd/physd/wire"
)

// heartbeat publishes the camera's status periodically and once at exit.
func (c *line) heartbeat(ctx context.Context) {
	period := c.spec.heartbeat
	if period <= 0 {
		period = 10 * time.Second
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			c.source.set(wire.StateStopped, "")
			pctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			c.publishStatus(pctx)
			cancel()
			return
		case <-t.C:
			c.publishStatus(ctx)
		}
	}
}

func (c *line) status() wire.Status {
	state, errText := c.source.get()
	s := wire.Status{Schema: wire.SchemaStatus, Node: c.node, Camera: c.cfg.Name, Zone: c.zone, Time: time.Now().UTC(), State: state, Error: errText,
		Source: c.sourceName(), Mode: string(c.cfg.Mode), Frames: c.count.frames.Load(), FramesDropped: c.count.dropped.Load(),
		Breaks: c.count.breaks.Load(), WindowsSkipped: c.count.skipped.Load(), Events: c.count.events.Load()}
	if c.reconnects != nil {
		s.Reconnects = c.reconnects.Load()
	}
	// A zone is only as online as its camera's source.
	if c.up != c.source {
		if upState, upErr := c.up.get(); upState != wire.StateOnline && upState != "" {
			s.State, s.Error = upState, "the camera's source is "+string(upState)
			if upErr != "" {
				s.Error += ": " + upErr
			}
		}
	}
	c.rec.fill(&s)
	return s
}

func (c *line) publishStatus(ctx context.Context) {
	s := c.status()
	if err := c.bus.publish(ctx, &s); err != nil {
		c.log.Debug("status not published", "err", err)
	}
}

// sourceName is the source's name for the status message; a zone reports
// its camera's source.
func (c *line) sourceName() string {
	if c.src == nil {
		return ""
	}
	return c.src.Name()
}
