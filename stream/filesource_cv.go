//go:build !nocv

package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"
)

// probeFile opens and closes path, to report early a file that is not a
// video or whose frames do not fit the preprocessing.
func probeFile(path string, pre Preprocess) error {
	d, err := openFile(context.Background(), path, pre)
	if err != nil {
		return err
	}
	d.Close()
	return nil
}

// run implements FileSource.Run: one decoding pass per loop, sharing
// ReadFile's decoder and its presentation-time repairs.
func (s *FileSource) run(ctx context.Context, emit func(Frame) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// libavformat and libavcodec allocate with malloc, which serves each
	// OS thread from an arena of its own; unpinned, a camera's decoder
	// ran on whichever thread the goroutine had, and the file reopened
	// at every loop spread its buffers over several arenas, whose freed
	// memory stays resident.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	opened := time.Now()
	seq := 0
	var offset time.Duration // Time of the first frame of this pass
	for {
		d, err := openFile(ctx, s.path, s.opt.Preprocess)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return s.wrap(err)
		}
		last := offset
		err = d.each(ctx, func(pic *picture, pts time.Duration, _ bool) error {
			t := pts
			if s.opt.FPS > 0 {
				t = IndexTime(d.seq, s.opt.FPS)
			}
			t0 := time.Now()
			f, err := d.frame(pic, s.opt.Preprocess)
			if err != nil {
				return fmt.Errorf("frame %d: %w", seq, err)
			}
			// For the daemon's per-stage accounting, as the live
			// sources measure them.
			f.Decode, f.Preprocess = d.lastReadTook, time.Since(t0)
			f.Seq, f.Time = seq, offset+t
			f.Wall = opened.Add(f.Time)
			if s.opt.Realtime {
				if err := SleepUntil(ctx, f.Wall); err != nil {
					return err
				}
			}
			if err := emit(f); err != nil {
				return emitError{err}
			}
			seq++
			last = f.Time
			return nil
		})
		step := d.clock.stepEstimate()
		if s.opt.FPS > 0 {
			step = IndexTime(1, s.opt.FPS)
		}
		decoded := d.seq
		d.Close()
		var ee emitError
		switch {
		case errors.As(err, &ee):
			return ee.err
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return s.wrap(err)
		case decoded == 0:
			return s.wrap(fmt.Errorf("no frame could be decoded: %w", ErrNotVideo))
		case !s.opt.Loop:
			return io.EOF
		}
		if step <= 0 {
			step = fallbackStep
		}
		offset = last + step
	}
}
