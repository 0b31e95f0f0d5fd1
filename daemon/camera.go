package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/internal/par"
	"github.com/physd/physd/motion"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/tracker"
	"github.com/physd/physd/window"
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

// camera runs one configured camera as a line of stages (start): source,
// framing, learning and certification, reporting. Its goroutines stop
// with its context.
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

	jobs chan job // capacity 1: a newer window replaces one not yet started
	// gate is the daemon's bound on windows estimated at once, shared
	// by its cameras (nil: none).
	gate gate

	mu      sync.Mutex
	state   wire.State
	lastErr string
	lastEst *time.Time
	est     *wire.Estimate   // latest certified estimate
	diag    *wire.Diagnostic // latest diagnostic
	verdict map[string]int
	encoder wire.EncoderInfo
	alerts  *alerter
	dash    *camDash // the dashboard's record; nil records nothing
	// pendingSkipped are skipped windows for the learning goroutine to
	// report (noteSkipped).
	pendingSkipped []job

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

func (c *camera) setState(s wire.State, errText string) {
	c.mu.Lock()
	c.state, c.lastErr = s, errText
	c.mu.Unlock()
}

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
	c.jobs = make(chan job, 1)
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

// offer queues a job; if the learner is still busy with an older one that
// has not started, the older one is dropped and counted as skipped, so a
// slow board coarsens its windows instead of falling behind.
func (c *camera) offer(ctx context.Context, j job) {
	for {
		select {
		case c.jobs <- j:
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
				c.log.Warn("windows skipped: estimation is behind the stream", "window_start", old.start, "window_end", old.end, "skipped_total", n)
			}
			c.noteSkipped(old)
		default:
		}
	}
}

// maxPendingSkipped bounds the skipped windows waiting for the learning
// goroutine to report them; beyond it they are only counted.
const maxPendingSkipped = 64

// noteSkipped keeps a skipped window, without its frames, for the learning
// stage to pass on (takeSkipped): publishing it here would put NATS, or
// during an outage the outbox's fsyncs, on the frame path.
func (c *camera) noteSkipped(j job) {
	light := job{clips: make([]estimator.Clip, len(j.clips)), start: j.start, end: j.end, frames: j.frames, single: j.single}
	c.mu.Lock()
	if len(c.pendingSkipped) < maxPendingSkipped {
		c.pendingSkipped = append(c.pendingSkipped, light)
	}
	c.mu.Unlock()
}

// takeSkipped returns the windows skipped since the last call.
func (c *camera) takeSkipped() []job {
	c.mu.Lock()
	defer c.mu.Unlock()
	js := c.pendingSkipped
	c.pendingSkipped = nil
	return js
}

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
	for attempt := 0; ; attempt++ {
		whip := c.cfg.Source.Kind == config.KindWHIP
		if attempt > 0 {
			c.reconnects.Add(1)
			if send(sourceItem{restart: true}) != nil {
				return
			}
		}
		switch {
		case !whip:
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
		// A file (or a finite synthetic stream) ends; a live camera that
		// ends its stream is reopened like one that failed.
		if errors.Is(err, io.EOF) && c.cfg.Source.Kind != config.KindRTSP && c.cfg.Source.Kind != config.KindV4L2 {
			c.setState(wire.StateEnded, "")
			c.log.Info("camera source ended", "source", c.src.Name())
			return
		}
		c.setState(wire.StateOffline, err.Error())
		if whip {
			// A publisher leaving is not a failure: wait for the next one
			// at once (Run blocks until a publisher connects).
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

// jitter spreads reconnects of many cameras: ±20 %.
func jitter(d time.Duration) time.Duration {
	f := 0.8 + 0.4*float64(time.Now().UnixNano()%1000)/1000
	return time.Duration(float64(d) * f)
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

// learn estimates each job and certifies it, and hands the outcome to the
// reporting stage, with the windows skipped since the last job.
func (c *camera) learn(ctx context.Context, out chan<- outcome) {
	est := c.all.Estimator
	th := thresholds(c.all.Certify)
	learner, err := estimator.NewLearner(estimator.LearnerOptions{Preset: c.preset, Steps: est.StepsPerWindow,
		Budget: est.MaxWindowTime, Replay: est.Replay, Seed: uint64(est.Seed), Lazy: true,
		Screen: func(r *estimator.Result) bool { return window.Screen(r, th, nil) }})
	if err != nil {
		c.log.Error("camera learner", "err", err)
		return
	}
	c.restore(learner)
	// A window's loops run on as many goroutines as estimator.workers
	// says (0: one per core); see config.Estimator.Workers.
	wctx := ctx
	if est.Workers > 0 {
		wctx = par.WithWorkers(ctx, est.Workers)
	}
	lastSave := time.Now()
	defer c.save(learner)
	skipped := func() {
		for _, j := range c.takeSkipped() {
			out <- outcome{job: j, skipped: true}
		}
	}
	defer func() {
		if ctx.Err() == nil { // the source ended: its last skipped windows
			skipped()
		}
	}()
	for j := range c.jobs {
		if ctx.Err() != nil {
			return
		}
		skipped()
		if !c.gate.acquire(ctx) {
			return
		}
		o, ok := c.estimate(wctx, learner, th, j)
		c.gate.release()
		if !ok {
			return
		}
		out <- o
		if time.Since(lastSave) >= est.CheckpointEvery && learner.Ready() {
			c.save(learner)
			lastSave = time.Now()
		}
	}
}

// estimate fits one job with the camera's learner and certifies it; ok is
// false when the camera was stopped meanwhile.
func (c *camera) estimate(ctx context.Context, learner *estimator.Learner, th window.Thresholds, j job) (outcome, bool) {
	// The camera's own motion: removed from the frames when measured, and
	// a latent that follows it is refused (window.CertifyCamera).
	t0 := time.Now()
	track, err := c.cameraMotion(ctx, j)
	c.work.add(stageMotion, t0)
	if err != nil {
		if ctx.Err() != nil {
			return outcome{}, false
		}
		c.log.Warn("camera motion not measured", "window_start", j.start, "window_end", j.end, "err", err)
		track = nil
	}
	// The learner certifies each estimate it considers; each is judged
	// once, and the one it returns is usually the last of them.
	judged := map[*estimator.Result]window.Verdict{}
	var certifyTime time.Duration
	certify := func(r *estimator.Result) window.Verdict {
		v, ok := judged[r]
		if !ok {
			t0 := time.Now()
			v = window.CertifyCamera(r, th, track)
			certifyTime += time.Since(t0)
			judged[r] = v
		}
		return v
	}
	var o *estimator.Outcome
	c.dash.setTraining(true)
	t0 = time.Now()
	if j.single {
		// A lone event never certifies by itself (Thm. 4.5 needs three);
		// it is fitted with the camera's encoder for its diagnostic only.
		o, err = c.fitAlone(ctx, j)
	} else {
		o, err = learner.Window(ctx, j.clips, func(r *estimator.Result) bool { return certify(r).Certified })
	}
	c.dash.setTraining(false)
	// The learner's time is split: its estimate fits, the certificates
	// judged meanwhile, and the rest (training).
	spent := time.Since(t0)
	if err == nil {
		c.work.addDuration(stageFit, o.FitTime)
		spent -= o.FitTime
	}
	c.work.addDuration(stageCertify, certifyTime)
	c.work.addDuration(stageTrain, max(spent-certifyTime, 0))
	if err != nil {
		if ctx.Err() != nil {
			return outcome{}, false
		}
		return outcome{job: j, err: err}, true
	}
	if o.ColdTried {
		c.work.coldStarts.Add(1)
	}
	if o.ColdHeld {
		c.work.coldHeld.Add(1)
	}
	if o.FitOnly || o.TrainHeld {
		c.work.untrained.Add(1)
	}
	if o.Diverged {
		c.log.Warn("training diverged; encoder rolled back to the last accepted window", "window_start", j.start, "window_end", j.end)
	}
	info := wire.EncoderInfo{Version: learner.Version(), TotalSteps: learner.TotalSteps(), Steps: o.TrainSteps, Cold: o.Cold,
		TrainMS: float64(o.TrainTime.Microseconds()) / 1000}
	if j.single {
		return outcome{job: j, res: o.Result, verdict: certify(o.Result), info: info, train: o.TrainTime}, true
	}
	// The encoder's own verdict decided whether its training was kept; the
	// report weighs it against the objects tracked through the same frames.
	t0 = time.Now()
	res, v := tracker.Weigh(ctx, j.clips, o.Result, c.preset, th, track, tracker.Stream{Cache: c.trackCache, First: j.first, Hop: j.hop}, c.log)
	c.work.add(stageWeigh, t0)
	return outcome{job: j, res: res, verdict: v, info: info, train: o.TrainTime}, true
}

// report publishes each outcome — a diagnostic for every window, the
// estimate and any alert for a certified one — until the learning stage
// closes its output.
func (c *camera) report(ctx context.Context, in <-chan outcome) {
	for o := range in {
		j := o.job
		t0 := time.Now()
		switch {
		case o.skipped:
			c.publishDiag(ctx, j, "skipped", []string{"estimation fell behind the stream; a newer window replaced this one (raise estimator.max_window_time or the hop)"}, nil, nil)
		case o.err != nil:
			c.log.Warn("window not estimated", "window_start", j.start, "window_end", j.end, "err", o.err)
			c.publishDiag(ctx, j, "error", []string{o.err.Error()}, nil, nil)
		default:
			v := o.verdict
			c.trainTime.Observe(o.train.Seconds())
			c.mu.Lock()
			c.verdict[string(v.Status)]++
			c.encoder = o.info
			c.mu.Unlock()
			c.publishDiag(ctx, j, string(v.Status), v.Reasons, o.res, &o.info, v)
			if v.Certified && !j.single {
				c.publishEstimate(ctx, j, o.res, o.info, v)
			}
		}
		c.work.add(stagePublish, t0)
	}
}

// cameraMotion measures the camera's own motion over the job's clips — on
// the camera's reference region when it has one, else from the frames
// themselves — and removes it from them.
func (c *camera) cameraMotion(ctx context.Context, j job) (*motion.Track, error) {
	ref := c.cfg.Reference
	if ref.IsZero() || len(j.refs) != len(j.clips) || len(j.clips) == 0 {
		return motion.MeasureClips(ctx, j.clips, motion.Options{Cache: c.motionCache})
	}
	roiW, roiH := c.cfg.ROI.W, c.cfg.ROI.H
	if c.cfg.ROI.IsZero() {
		roiW, roiH = j.srcW, j.srcH
	}
	scale := motion.ReferenceScale(ref.W, ref.H, j.refW, j.refH, roiW, roiH, j.clips[0].W, j.clips[0].H)
	t, err := motion.MeasureReference(ctx, j.refs, j.refW, j.refH, scale)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		// Something stands in front of the reference, or it is plain:
		// measure the motion from the frames instead.
		c.log.Warn("camera reference unusable for this window; measuring the camera's motion from the frames", "reference", fmt.Sprintf("%d,%d,%d,%d", ref.X, ref.Y, ref.W, ref.H), "window_start", j.start, "window_end", j.end, "err", err)
		return motion.MeasureClips(ctx, j.clips, motion.Options{Cache: c.motionCache})
	}
	return t, t.StabilizeClips(j.clips)
}

// fitAlone estimates one event on its own with a cold encoder, without
// touching the camera's learner.
func (c *camera) fitAlone(ctx context.Context, j job) (*estimator.Outcome, error) {
	start := time.Now()
	r, err := estimator.Fit(ctx, j.clips, estimator.Options{Preset: c.preset, Seed: 1, Budget: c.all.Estimator.MaxWindowTime})
	if err != nil {
		return nil, err
	}
	return &estimator.Outcome{Result: r, Cold: true, TrainSteps: r.Steps, TrainTime: time.Since(start)}, nil
}

func thresholds(c config.Certify) window.Thresholds {
	return window.Thresholds{MinPsi: c.MinPsi, MaxRelResidual: c.MaxRelResidual, MaxRevisit: c.MaxRevisit,
		Coverage:      window.CoverageOptions{MinWidth: c.MinWidth},
		MaxRelSigmaFn: c.MaxRelSigmaFn, MaxRelSigmaZeta: c.MaxRelSigmaZeta, SigmaZetaFloor: c.SigmaZetaFloor}
}

func ptr(v float64) *float64 { return &v }

func (c *camera) publishDiag(ctx context.Context, j job, verdict string, reasons []string, r *estimator.Result, info *wire.EncoderInfo, v ...window.Verdict) {
	d := wire.Diagnostic{Schema: wire.SchemaDiagnostic, Node: c.node, Camera: c.cfg.Name, Zone: c.zone, WindowStart: j.start.UTC(), WindowEnd: j.end.UTC(),
		Frames: j.frames, Events: len(j.clips), Verdict: verdict, Certified: verdict == string(window.Certified) && !j.single,
		Reasons: reasons, LoneEvent: j.single}
	if info != nil {
		// A copy: the diagnostic outlives the window (c.diag holds it
		// until the next one), and a pointer into the caller's outcome
		// would keep that window's Result — its exposure-normalised
		// frames, 6 MB at 209×20 — alive for a hop.
		enc := *info
		d.Encoder = &enc
	}
	if j.single && verdict == string(window.Certified) {
		d.Reasons = append(d.Reasons, "a single event is not published as an estimate: the multi-trajectory theorem needs three")
	}
	if r != nil {
		d.Gamma0, d.Gamma1 = finitePtr(r.Gamma0), finitePtr(r.Gamma1)
		d.Gamma0Sigma, d.Gamma1Sigma = finitePtr(r.Sigma0), finitePtr(r.Sigma1)
	}
	if len(v) > 0 {
		d.Certificate = &v[0]
	}
	c.mu.Lock()
	c.diag = &d
	c.mu.Unlock()
	c.recordWindow(&d, r, info)
	if err := c.bus.publish(ctx, &d); err != nil {
		c.log.Warn("diagnostic not published", "window_start", j.start, "window_end", j.end, "err", err)
	}
	c.log.Debug("window", "window_start", j.start, "window_end", j.end, "verdict", verdict, "reasons", reasons)
}

func finitePtr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return ptr(v)
}

func (c *camera) publishEstimate(ctx context.Context, j job, r *estimator.Result, info wire.EncoderInfo, v window.Verdict) {
	ph := r.Physics
	e := wire.Estimate{Schema: wire.SchemaEstimate, Node: c.node, Camera: c.cfg.Name, Zone: c.zone, WindowStart: j.start.UTC(), WindowEnd: j.end.UTC(),
		Frames: j.frames, Events: len(j.clips), Gamma0: r.Gamma0, Gamma0Sigma: r.Sigma0, Gamma1: r.Gamma1, Gamma1Sigma: r.Sigma1,
		Fn: ph.FreqN, FnSigma: ph.SigmaF, Zeta: ph.Zeta, ZetaSigma: ph.SigmaZ, OmegaN: ph.OmegaN, DampedFreq: ph.FreqD,
		Regime: string(ph.Regime), Certified: true, Certificate: v, Encoder: info}
	if err := c.bus.publish(ctx, &e); err != nil {
		c.log.Error("certified estimate not published", "window_start", j.start, "window_end", j.end, "err", err)
	}
	end := e.WindowEnd
	c.mu.Lock()
	c.lastEst, c.est = &end, &e
	c.mu.Unlock()
	// Printed once: as the caller's table row when it prints estimates,
	// else as this log line.
	lvl := slog.LevelInfo
	if c.onEst != nil {
		lvl = slog.LevelDebug
	}
	c.log.Log(ctx, lvl, "certified estimate", "window_start", j.start, "window_end", j.end, "gamma0", r.Gamma0, "gamma1", r.Gamma1,
		"fn_hz", ph.FreqN, "zeta", ph.Zeta, "regime", ph.Regime)
	if c.onEst != nil {
		c.onEst(e)
	}
	// Under the camera's lock: status() reads the baseline from the
	// heartbeat and HTTP goroutines.
	c.mu.Lock()
	a, based := c.alerts.observe(&e)
	c.mu.Unlock()
	if based {
		c.saveBaseline()
		c.log.Info("alert baseline established", "window_start", j.start, "window_end", j.end, "fn_hz", c.alerts.base.Fn, "zeta", c.alerts.base.Zeta)
	}
	if a != nil {
		a.Zone, a.Node = c.zone, c.node
		c.dash.setAlerting(a.State == wire.AlertRaised)
		c.log.Warn("structural-health alert", "window_start", j.start, "window_end", j.end, "state", a.State, "reasons", a.Reasons)
		if err := c.bus.publish(ctx, a); err != nil {
			c.log.Error("alert not published", "window_start", j.start, "window_end", j.end, "err", err)
		}
	}
}

// heartbeat publishes the camera's status periodically and once at exit.
func (c *camera) heartbeat(ctx context.Context) {
	period := c.all.NATS.Heartbeat
	if period <= 0 {
		period = 10 * time.Second
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			c.setState(wire.StateStopped, "")
			pctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			c.publishStatus(pctx)
			cancel()
			return
		case <-t.C:
			c.publishStatus(ctx)
		}
	}
}

func (c *camera) status() wire.Status {
	// A zone is only as online as its camera's source: read that first,
	// under the camera's lock alone.
	var upState wire.State
	var upErr string
	if c.up != nil {
		c.up.mu.Lock()
		upState, upErr = c.up.state, c.up.lastErr
		c.up.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := wire.Status{Schema: wire.SchemaStatus, Node: c.node, Camera: c.cfg.Name, Zone: c.zone, Time: time.Now().UTC(), State: c.state, Error: c.lastErr,
		Source: c.sourceName(), Mode: string(c.cfg.Mode), Frames: c.frames.Load(), FramesDropped: c.dropped.Load(),
		Breaks: c.breaks.Load(), Windows: map[string]int{}, WindowsSkipped: c.skipped.Load(), Events: c.events.Load(),
		Reconnects: c.reconnects.Load(), Encoder: c.encoder, LastEstimate: c.lastEst}
	if c.up != nil && upState != wire.StateOnline && upState != "" {
		s.State, s.Error = upState, "the camera's source is "+string(upState)
		if upErr != "" {
			s.Error += ": " + upErr
		}
	}
	for k, v := range c.verdict {
		s.Windows[k] = v
	}
	if c.alerts.base != nil {
		b := *c.alerts.base
		s.Baseline = &b
	}
	return s
}

func (c *camera) publishStatus(ctx context.Context) {
	s := c.status()
	if err := c.bus.publish(ctx, &s); err != nil {
		c.log.Debug("status not published", "err", err)
	}
}

func (c *camera) checkpointPath() string { return filepath.Join(c.dir, "encoder.ckpt") }
func (c *camera) baselinePath() string   { return filepath.Join(c.dir, "baseline.json") }

// restore loads the encoder checkpoint; a corrupt one is set aside with a
// warning and the camera starts clean.
func (c *camera) restore(l *estimator.Learner) {
	if tmp := removeTemps(c.dir); len(tmp) > 0 {
		c.log.Warn("removed unfinished state writes from before a crash", "dir", c.dir, "files", tmp)
	}
	path := c.checkpointPath()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err == nil {
		err = l.Load(bytes.NewReader(b))
	}
	switch {
	case err == nil:
		c.log.Info("encoder restored", "checkpoint", path, "version", l.Version(), "steps", l.TotalSteps())
		c.mu.Lock()
		c.encoder = wire.EncoderInfo{Version: l.Version(), TotalSteps: l.TotalSteps()}
		c.mu.Unlock()
	case errors.Is(err, estimator.ErrCheckpointMismatch):
		c.log.Info("encoder checkpoint is for another configuration; starting cold", "checkpoint", path, "err", err)
	case errors.Is(err, estimator.ErrCheckpointCorrupt):
		to, rerr := setAside(path)
		c.log.Warn("encoder checkpoint is corrupt; set aside, starting cold", "checkpoint", path, "moved_to", to, "err", err, "rename_err", rerr)
	default:
		c.log.Warn("encoder checkpoint unreadable; starting cold", "checkpoint", path, "err", err)
	}
}

func (c *camera) save(l *estimator.Learner) {
	if !l.Ready() {
		return
	}
	err := writeAtomic(c.checkpointPath(), func(f *os.File) error { return l.Save(f) })
	if err != nil {
		c.log.Error("encoder checkpoint not written", "err", err)
		return
	}
	c.log.Debug("encoder checkpointed", "path", c.checkpointPath(), "version", l.Version(), "steps", l.TotalSteps())
}
