package daemon

import (
	"context"
	"log/slog"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
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

// framer is a line's framing stage: it cuts the frames into windows (or
// events) and offers them to the learning stage.
type framer struct {
	log    *slog.Logger
	window config.Windows
	fps    float64
	mode   config.Mode
	events config.Events
	// ambient is the ambient mode's record, lags and calibration (mode
	// ambient; window.Hop is then how often the record is offered).
	ambient config.Ambient
	// cut is a zone's cut of its camera's whole gray frames (cutZone),
	// with its own working memory; source is then the zone's state,
	// whether its region fits.
	cut *stream.GrayReader
	// auto is windows.bin: auto's choice (nil: a fixed decimation).
	auto        *autoBin
	count       *counters
	source      *sourceState
	dash        *camDash
	lastSkipLog time.Time
}

// offer queues a job; if the learner is still busy with an older one that
// has not started, the older one is dropped and counted as skipped, so a
// slow board coarsens its windows instead of falling behind.
func (f *framer) offer(ctx context.Context, jobs chan batch, j job) {
	b := batch{next: j}
	for {
		select {
		case jobs <- b:
			return
		case <-ctx.Done():
			return
		default:
		}
		select {
		case old := <-jobs:
			n := f.count.skipped.Add(1)
			if now := time.Now(); now.Sub(f.lastSkipLog) > 30*time.Second {
				f.lastSkipLog = now
				f.log.Warn("windows skipped: estimation is behind the stream", "window_start", old.next.start, "window_end", old.next.end, "skipped_total", n)
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
	l := job{clips: make([]estimator.Clip, len(j.clips)), start: j.start, end: j.end, frames: j.frames, single: j.single, bin: j.bin}
	if j.ambient != nil {
		a := *j.ambient
		a.corr = nil
		l.ambient = &a
	}
	return l
}

// events is how many trajectories the job holds: its clips, or the one
// record of an ambient job.
func (j job) events() int {
	if j.ambient != nil {
		return 1
	}
	return len(j.clips)
}

// run cuts the frames of in into windows (or events) and offers them
// to the learning stage on jobs; a source restart starts the windows
// again. An ambient line sums its record instead (runAmbient).
func (f *framer) run(ctx context.Context, in <-chan sourceItem, jobs chan batch) {
	if f.mode == config.ModeAmbient {
		f.runAmbient(ctx, in, jobs)
		return
	}
	// Frames are binned in time before the windows are cut
	// (windows.bin); the slicer's nominal rate is the bins'. An auto line
	// starts at the full rate.
	n := max(int(f.window.Bin), 1)
	if f.auto != nil {
		n = 1
	}
	newSlicer := func(n int) *window.Slicer {
		s, _ := window.NewSlicer(window.SlicerOptions{Length: f.window.Length, Hop: f.window.Hop, MaxGap: f.window.MaxGap, FPS: f.fps / float64(n)}) // checked before the source opened
		return s
	}
	slicer, bin := newSlicer(n), window.NewBinner(n)
	var cutter *window.EventCutter
	if f.mode == config.ModeEvents {
		ev := f.events
		cutter = window.NewEventCutter(window.EventOptions{Threshold: ev.MotionThreshold, Quiet: ev.Quiet, MaxLength: ev.MaxLength, MinFrames: estimator.MinFrames})
	}
	var kept []*window.Event
	for it := range in {
		if it.restart {
			slicer, bin = newSlicer(bin.N()), window.NewBinner(bin.N())
			continue
		}
		fr := it.frame
		if m, why := f.auto.next(bin.N(), fr.Time); why != "" {
			f.log.Info("frames binned anew: windows restart", "bin", m, "was", bin.N(), "why", why)
			slicer, bin = newSlicer(m), window.NewBinner(m)
		}
		if f.cut != nil {
			var ok bool
			if fr, ok = f.cutZone(fr); !ok {
				continue
			}
		}
		binDropped := bin.Dropped
		fr, ok := bin.Push(fr)
		f.count.dropped.Add(int64(bin.Dropped - binDropped))
		if !ok {
			continue
		}
		before := slicer.Dropped
		w, brk := slicer.Push(fr)
		f.count.dropped.Add(int64(slicer.Dropped - before))
		if brk != nil {
			f.count.breaks.Add(1)
			f.log.Info("stream break: windows restart", "seq", brk.Seq, "reason", brk.Reason)
		}
		if cutter != nil {
			if e := cutter.Push(fr, brk != nil); e != nil {
				f.count.events.Add(1)
				kept = append(kept, e)
				if len(kept) > max(f.events.Keep, f.events.MinEvents) {
					kept = kept[1:]
				}
				f.offer(ctx, jobs, eventJob([]*window.Event{e}, true).binned(bin.N()))
				if len(kept) >= f.events.MinEvents {
					f.offer(ctx, jobs, eventJob(kept, false).binned(bin.N()))
				}
			}
			continue
		}
		if w != nil {
			f.offer(ctx, jobs, windowJob(w).binned(bin.N()))
		}
	}
}

// cutZone cuts the zone's frame from the camera's whole gray frame: its
// region, resized as a camera with that region would read it. A frame
// the region does not fit (the stream changed resolution) is counted as
// dropped and the zone goes offline until one fits.
func (f *framer) cutZone(fr stream.Frame) (stream.Frame, bool) {
	f.count.frames.Add(1)
	if fr.Gray == nil {
		f.count.dropped.Add(1)
		return stream.Frame{}, false
	}
	z, err := f.cut.Apply(fr.Gray)
	if err != nil {
		f.count.dropped.Add(1)
		if now := time.Now(); now.Sub(f.lastSkipLog) > 30*time.Second {
			f.lastSkipLog = now
			f.log.Warn("zone cannot be cut from the camera's frame", "width", fr.W, "height", fr.H, "err", err)
		}
		f.source.set(wire.StateOffline, err.Error())
		return stream.Frame{}, false
	}
	z.Seq, z.Time, z.Wall = fr.Seq, fr.Time, fr.Wall
	z.Key, z.KeyKnown, z.KeyGuessed = fr.Key, fr.KeyKnown, fr.KeyGuessed
	if st, _ := f.source.get(); st != wire.StateOnline {
		f.source.set(wire.StateOnline, "")
	}
	f.dash.setFrame(z)
	return z, true
}

func windowJob(w *window.Window) job {
	j := job{clips: []estimator.Clip{w.Clip()}, start: w.Frames[0].Wall,
		end: w.Frames[len(w.Frames)-1].Wall, frames: len(w.Frames), first: w.Frames[0].Seq, hop: w.Hop,
		srcW: w.Frames[0].SrcW, srcH: w.Frames[0].SrcH}
	j.addRefs(w.Frames)
	return j
}

// binned is the job with its frames' bin (window.Binner.N).
func (j job) binned(n int) job {
	j.bin = n
	return j
}

// addRefs adds the reference patches of a clip's frames, if they have any.
func (j *job) addRefs(frames []stream.Frame) {
	p, w, h := window.Refs(frames)
	if p == nil {
		return
	}
	j.refW, j.refH = w, h
	j.refs = append(j.refs, p)
}

// eventJob makes a multi-trajectory job of events.
func eventJob(evs []*window.Event, single bool) job {
	n := 0
	for _, e := range evs {
		n += len(e.Frames)
	}
	last := evs[len(evs)-1].Frames
	j := job{clips: window.EventClips(evs), single: single, frames: n, start: evs[0].Frames[0].Wall, end: last[len(last)-1].Wall,
		srcW: last[0].SrcW, srcH: last[0].SrcH}
	for _, e := range evs {
		j.addRefs(e.Frames)
	}
	return j
}
