package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
	"time"

	"github.com/physd/physd/ambient"
	"github.com/physd/physd/analysis"
	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/flow"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
)

// An ambient line (config.ModeAmbient) watches a structure driven
// continuously — wind, traffic — whose windows never hold a free decay.
// Its framing stage reads each frame into one displacement with a readout
// frozen on the first seconds of video (flow.Linear), and sums the
// displacements' lagged products into a sliding record (ambient.Correlation):
// O(lags + pixels) a frame, and no frame is held once read. Every hop,
// once the record is full, it offers the learning stage a snapshot of the
// sums; the learning stage fits and certifies the record's correlation
// function (ambient.Identify) instead of a window. cmd/physd's estimate
// --ambient does the same for a file.

// ambientJob is what an ambient job carries instead of clips: a snapshot
// of the record's sums, and what its amplitude needs.
type ambientJob struct {
	// corr is the record's snapshot; nil in a skipped job (job.light).
	corr *ambient.Correlation
	// dt is the frame step the record was summed at, seconds.
	dt float64
	// noise is the readout's noise at its calibration, frame pixels.
	noise float64
	// frameW is the frames' width, for the source pixels a frame pixel
	// spans (learning.sourcePx).
	frameW int
}

// ambientFramer is an ambient line's framing state: the calibration's
// frames until the readout is frozen, then the record's sums and the wall
// times of their segments.
type ambientFramer struct {
	log *slog.Logger
	opt config.Ambient
	hop time.Duration
	// fps is the camera's configured rate (0: the frames' own times say).
	fps float64

	// calib holds copies of the frames the readout is calibrated on;
	// warned says a failed calibration was logged as a warning.
	calib    []stream.Frame
	calibPix [][]uint16
	warned   bool

	lin   *flow.Linear
	noise float64 // the readout's noise, frame pixels
	dt    float64
	corr  *ambient.Correlation
	// segLen, recordFrames and hopFrames are the segment, the record and
	// the hop in frames at dt.
	segLen, recordFrames, hopFrames int
	// pushed counts the latents pushed (breaks included) and since those
	// since the last offer; full says the record held recordFrames once.
	pushed, since int
	full          bool
	// starts are the wall times of the record's segments' first latents,
	// oldest first, as many as corr holds segments.
	starts   []time.Time
	lastWall time.Time
	// broken says the stream broke since the last frame: the next latent
	// is preceded by a NaN, so that no product spans the break.
	broken bool
}

func newAmbientFramer(log *slog.Logger, opt config.Ambient, hop time.Duration, fps float64) *ambientFramer {
	return &ambientFramer{log: log, opt: opt, hop: hop, fps: fps}
}

// runAmbient is the framing stage of an ambient line: it reads the frames
// of in into the record and offers a snapshot of it on jobs every hop
// once the record is full.
func (f *framer) runAmbient(ctx context.Context, in <-chan sourceItem, jobs chan batch) {
	// A slicer of short windows, for its rule of breaks and duplicates
	// only (the one every source shares); its windows are dropped.
	newSlicer := func() *window.Slicer {
		s, _ := window.NewSlicer(window.SlicerOptions{Length: time.Second, Hop: time.Second, MaxGap: f.window.MaxGap, FPS: f.fps})
		return s
	}
	slicer := newSlicer()
	a := newAmbientFramer(f.log, f.ambient, f.window.Hop, f.fps)
	for it := range in {
		if it.restart {
			slicer = newSlicer()
			a.breakStream()
			continue
		}
		fr := it.frame
		if f.cut != nil {
			var ok bool
			if fr, ok = f.cutZone(fr); !ok {
				continue
			}
		}
		before := slicer.Dropped
		_, brk := slicer.Push(fr)
		if d := slicer.Dropped - before; d > 0 {
			f.count.dropped.Add(int64(d))
			continue // a duplicate: not a frame of the record
		}
		if brk != nil {
			f.count.breaks.Add(1)
			f.log.Info("stream break: the ambient record's lags restart", "seq", brk.Seq, "reason", brk.Reason)
			a.breakStream()
		}
		if j, ok := a.push(fr); ok {
			f.offer(ctx, jobs, j)
		}
	}
}

// breakStream marks a break in the stream: a calibration under way starts
// again (its clip must be evenly spaced), and the record's next latent is
// preceded by a NaN.
func (a *ambientFramer) breakStream() {
	if a.lin == nil {
		a.calib, a.calibPix = nil, nil
		return
	}
	a.broken = true
}

// push reads one frame into the record (or the calibration's clip) and
// returns a job when one is due.
func (a *ambientFramer) push(fr stream.Frame) (job, bool) {
	if a.lin != nil && (fr.W != a.lin.W || fr.H != a.lin.H) {
		a.log.Info("the frame size changed: the ambient readout is calibrated again and the record starts over",
			"width", fr.W, "height", fr.H, "was_width", a.lin.W, "was_height", a.lin.H)
		*a = *newAmbientFramer(a.log, a.opt, a.hop, a.fps)
	}
	if a.lin == nil {
		a.calibrate(fr)
	} else {
		if a.broken {
			a.broken = false
			a.add(math.NaN(), fr.Wall)
		}
		a.add(a.lin.Read(fr.Pix), fr.Wall)
	}
	if a.corr == nil {
		return job{}, false
	}
	switch {
	case !a.full && a.pushed >= a.recordFrames:
		a.full = true
	case !a.full || a.since < a.hopFrames:
		return job{}, false
	}
	a.since = 0
	return job{ambient: &ambientJob{corr: a.corr.Clone(), dt: a.dt, noise: a.noise, frameW: a.lin.W},
		start: a.starts[0], end: a.lastWall, frames: a.corr.Frames(), srcW: fr.SrcW, srcH: fr.SrcH}, true
}

// add pushes one latent read at wall into the record, and keeps the wall
// times of its segments in step with the record's: a segment starts every
// segLen latents, and the oldest is dropped when one more than the record
// keeps has started.
func (a *ambientFramer) add(z float64, wall time.Time) {
	if a.pushed%a.segLen == 0 {
		if len(a.starts) == ambient.DefaultGroups {
			copy(a.starts, a.starts[1:])
			a.starts = a.starts[:len(a.starts)-1]
		}
		a.starts = append(a.starts, wall)
	}
	a.corr.Push(z)
	a.pushed++
	a.since++
	a.lastWall = wall
}

// calibrate adds a frame to the calibration's clip and, once the clip
// spans opt.Calibrate, freezes the readout on it and starts the record
// with the clip's frames. A calibration that fails is logged (a warning
// the first time) and made again on the next frames: nothing is published
// meanwhile.
func (a *ambientFramer) calibrate(fr stream.Frame) {
	// The frames are kept as 16-bit levels (1/65535 of full scale, far
	// below a camera's noise), a quarter of their float64 pixels: the
	// calibration's frames are the largest thing an ambient line holds,
	// and its peak resident set is theirs (make bench).
	q := make([]uint16, len(fr.Pix))
	for i, v := range fr.Pix {
		q[i] = uint16(math.Round(min(max(v, 0), 1) * 65535))
	}
	fr.Pix, fr.Ref, fr.Gray = nil, nil, nil
	a.calib = append(a.calib, fr)
	a.calibPix = append(a.calibPix, q)
	first := a.calib[0]
	if fr.Time-first.Time < a.opt.Calibrate {
		return
	}
	n := len(a.calib)
	dt := (fr.Time - first.Time).Seconds() / float64(n-1)
	if a.fps > 0 {
		dt = 1 / a.fps
	}
	// The readout is calibrated on every calibStride-th frame: which
	// pixels respond to the motion, and how, does not depend on the
	// frames' spacing, and a third of the frames is a third of the
	// calibration's memory.
	clip := estimator.Clip{W: fr.W, H: fr.H, Dt: calibStride * dt}
	for k := 0; k < n; k += calibStride {
		clip.Frames = append(clip.Frames, unquantize(a.calibPix[k], nil))
	}
	if err := a.freeze(clip, dt); err != nil {
		lvl := slog.LevelWarn
		if a.warned {
			lvl = slog.LevelDebug
		}
		a.warned = true
		a.log.Log(context.Background(), lvl, "ambient readout not calibrated; publishing nothing, trying again on the next frames",
			"calibrate", a.opt.Calibrate, "frames", n, "err", err)
		a.calib, a.calibPix = nil, nil
		return
	}
	a.log.Info("ambient readout calibrated", "frames", n, "fps", 1/dt, "pixels", a.lin.Pixels, "noise_px", a.noise,
		"lags", a.corr.Lags(), "record_frames", a.recordFrames, "hop_frames", a.hopFrames)
	clip.Frames = nil
	buf := make([]float64, fr.W*fr.H)
	for k, c := range a.calib {
		a.add(a.lin.Read(unquantize(a.calibPix[k], buf)), c.Wall)
	}
	a.calib, a.calibPix = nil, nil
	// Once per calibration: hand the calibration's memory back now
	// rather than when the runtime gets round to it.
	debug.FreeOSMemory()
}

// calibStride is the spacing, in frames, of the frames an ambient
// readout is calibrated on. make bench's ambient camera (640×480 read at
// 64×48, a 20 s calibration) peaked at 175.5 MiB with every frame as
// float64, 152.7 MiB with 16-bit copies and every second frame, against
// a steady 130–133 MiB; its readout read 240, then 89 pixels — enough:
// their white noise only adds to R(0), which is not fitted.
const calibStride = 3

// unquantize turns 16-bit levels back into gray levels in [0, 1], into
// buf when it is long enough.
func unquantize(q []uint16, buf []float64) []float64 {
	if len(buf) < len(q) {
		buf = make([]float64, len(q))
	}
	buf = buf[:len(q)]
	for i, v := range q {
		buf[i] = float64(v) / 65535
	}
	return buf
}

// freeze calibrates the readout on clip and sizes the record at the frame
// step dt.
func (a *ambientFramer) freeze(clip estimator.Clip, dt float64) error {
	lin, read, err := flow.CalibrateAuto(clip)
	if err != nil {
		return fmt.Errorf("ambient readout: %w", err)
	}
	fps := 1 / dt
	lags := int(math.Round(a.opt.MaxLag.Seconds()*fps)) + 1
	record := a.opt.Record.Seconds() * fps
	segLen := int(math.Ceil(record / ambient.DefaultGroups))
	corr, err := ambient.NewCorrelation(lags, segLen, ambient.DefaultGroups)
	if err != nil {
		return fmt.Errorf("ambient record at %.4g fps: %w", fps, err)
	}
	a.lin, a.noise, a.dt, a.corr, a.segLen = lin, read.Noise, dt, corr, segLen
	a.recordFrames = int(math.Round(record))
	a.hopFrames = max(1, int(math.Round(a.hop.Seconds()*fps)))
	return nil
}

// estimateAmbient identifies and certifies an ambient job's record: the
// fit of its correlation function, charged to the fit stage (it is one:
// the signature's, and the jackknife's of it). The amplitude is the
// record's: √2 times its rms, with the readout's noise, in source pixels.
func (c *learning) estimateAmbient(ctx context.Context, learner *estimator.Learner, th window.Thresholds, j job) (outcome, bool) {
	t0 := time.Now()
	est, err := ambient.Identify(ctx, j.ambient.corr, j.ambient.dt, ambient.Options{Thresholds: th})
	c.work.add(stageFit, t0)
	if err != nil {
		if ctx.Err() != nil {
			return outcome{}, false
		}
		return outcome{job: j, err: err}, true
	}
	var amp *flow.Amplitude
	if px := c.sourcePx(j); px > 0 {
		amp = &flow.Amplitude{Px: math.Sqrt2 * est.RMS * px, NoisePx: j.ambient.noise * px, Readout: "flow"}
	}
	// No encoder is trained or used: the line's stays as it was.
	info := wire.EncoderInfo{Version: learner.Version(), TotalSteps: learner.TotalSteps()}
	var ms *analysis.Modes
	if len(est.Modes) > 0 {
		// A signature term's amplitude is a variance, not a swing: no
		// amplitude in pixels.
		ms = &analysis.Modes{Readout: "signature", Modes: est.Modes}
	}
	return outcome{job: j, res: est.Result, verdict: est.Verdict, info: info, amp: amp, modes: ms,
		ambient: wire.NewAmbient(est.Record, est.Frames, est.Lags, est.LagSpan, est.Groups, est.Kurtosis, est.Bend, est.BendSigma).WithResolves(est.ResolvesHz).WithPeak(est.Peak, est.PeakSigma)}, true
}
