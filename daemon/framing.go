package daemon

import (
	"context"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
)

// batch is what the framing stage hands the learning stage: the next
// job, and the windows that newer ones replaced before they started, for
// the reporting stage to publish as skipped. Skipped windows travel down
// the line with the job after them, so that publishing them never puts
// NATS, or during an outage the outbox's fsyncs, on the frame path.
type batch struct {
	next    job
	skipped []job
}

// maxSkipped bounds the skipped windows a batch carries; beyond it they
// are only counted.
const maxSkipped = 64

// offer queues a job; if the learner is still busy with an older one that
// has not started, the older one is dropped and counted as skipped, so a
// slow board coarsens its windows instead of falling behind.
func (c *camera) offer(ctx context.Context, j job) {
	b := batch{next: j}
	for {
		select {
		case c.jobs <- b:
			return
		case <-ctx.Done():
			return
		default:
		}
		select {
		case old := <-c.jobs:
			n := c.skipped.Add(1)
			if now := time.Now(); now.Sub(c.lastSkipLog) > 30*time.Second {
				c.lastSkipLog = now
				c.log.Warn("windows skipped: estimation is behind the stream", "window_start", old.next.start, "window_end", old.next.end, "skipped_total", n)
			}
			carry := append(old.skipped, old.next.light())
			b.skipped = append(carry, b.skipped...)[:min(len(carry)+len(b.skipped), maxSkipped)]
		default:
		}
	}
}

// light is the job without its frames: what a skipped window's
// diagnostic needs.
func (j job) light() job {
	return job{clips: make([]estimator.Clip, len(j.clips)), start: j.start, end: j.end, frames: j.frames, single: j.single}
}

// frame cuts the source's frames into windows (or events) and offers them
// to the learning stage; a source restart starts the windows again.
func (c *camera) frame(ctx context.Context, in <-chan sourceItem) {
	win := c.cfg.EffectiveWindow(c.all.Windows)
	newSlicer := func() *window.Slicer {
		s, _ := window.NewSlicer(window.SlicerOptions{Length: win.Length, Hop: win.Hop, MaxGap: win.MaxGap, FPS: c.cfg.FPS}) // checked by runSource
		return s
	}
	slicer := newSlicer()
	var cutter *window.EventCutter
	if c.cfg.Mode == config.ModeEvents {
		ev := c.all.Events
		cutter = window.NewEventCutter(window.EventOptions{Threshold: ev.MotionThreshold, Quiet: ev.Quiet, MaxLength: ev.MaxLength, MinFrames: estimator.MinFrames})
	}
	var kept []*window.Event
	for it := range in {
		if it.restart {
			slicer = newSlicer()
			continue
		}
		f := it.frame
		if c.cut != nil {
			var ok bool
			if f, ok = c.cutZone(f); !ok {
				continue
			}
		}
		before := slicer.Dropped
		w, brk := slicer.Push(f)
		c.dropped.Add(int64(slicer.Dropped - before))
		if brk != nil {
			c.breaks.Add(1)
			c.log.Info("stream break: windows restart", "seq", brk.Seq, "reason", brk.Reason)
		}
		if cutter != nil {
			if e := cutter.Push(f, brk != nil); e != nil {
				c.events.Add(1)
				kept = append(kept, e)
				if len(kept) > max(c.all.Events.Keep, c.all.Events.MinEvents) {
					kept = kept[1:]
				}
				c.offer(ctx, eventJob([]*window.Event{e}, true))
				if len(kept) >= c.all.Events.MinEvents {
					c.offer(ctx, eventJob(kept, false))
				}
			}
			continue
		}
		if w != nil {
			c.offer(ctx, windowJob(w))
		}
	}
}

func windowJob(w *window.Window) job {
	j := job{clips: []estimator.Clip{w.Clip()}, start: w.Frames[0].Wall,
		end: w.Frames[len(w.Frames)-1].Wall, frames: len(w.Frames), first: w.Frames[0].Seq, hop: w.Hop}
	j.addRefs(w.Frames)
	return j
}

// addRefs adds the reference patches of a clip's frames, if they have any.
func (j *job) addRefs(frames []stream.Frame) {
	p, w, h := window.Refs(frames)
	if p == nil {
		return
	}
	j.refW, j.refH, j.srcW, j.srcH = w, h, frames[0].SrcW, frames[0].SrcH
	j.refs = append(j.refs, p)
}

// eventJob makes a multi-trajectory job of events.
func eventJob(evs []*window.Event, single bool) job {
	n := 0
	for _, e := range evs {
		n += len(e.Frames)
	}
	last := evs[len(evs)-1].Frames
	j := job{clips: window.EventClips(evs), single: single, frames: n, start: evs[0].Frames[0].Wall, end: last[len(last)-1].Wall}
	for _, e := range evs {
		j.addRefs(e.Frames)
	}
	return j
}
