package daemon

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/motion"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/tracker"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
)

// job is one unit of estimation: a sliding window (one clip) or a set of
// excitation events (several clips), or a single event fitted alone for
// its diagnostic, or an ambient record (no clips: its correlation sums).
type job struct {
	clips []estimator.Clip
	// ambient is an ambient line's record (ambient.go); nil otherwise.
	ambient *ambientJob
	// refs are the reference region's patches (refW×refH), per clip and
	// frame, when the camera has one; srcW×srcH is the source frame (for
	// a zone, its camera's).
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
	// bin is how many camera frames each of the job's frames stands for
	// (windows.bin; 0 or 1: one).
	bin int
}

// binOrZero is the job's bin as its messages carry it: 0 (absent) when
// each frame is one camera frame.
func (j job) binOrZero() int {
	if j.bin > 1 {
		return j.bin
	}
	return 0
}

// publisher is what a line needs of the message bus (the NATS bus
// implements it): publish a message, on its subject and with its id.
type publisher interface {
	publish(ctx context.Context, m wire.Message) error
}

// counters are a line's frame and window counts, for its status.
type counters struct {
	frames, dropped, breaks, skipped, events atomic.Int64
}

// lineSpec is what one line — a camera's, or one zone's of a camera — is
// built from: resolved values, not the daemon's configuration.
type lineSpec struct {
	// cam is the line's camera (for a zone, its ZoneCamera): its name,
	// mode, rate, region and reference region.
	cam  config.Camera
	zone string // "" for a camera's own line
	src  stream.Source
	log  *slog.Logger
	// window is the camera's effective window and events its event
	// cutting.
	window config.Windows
	events config.Events
	// thresholds are the certificate's; learn the learner's budget,
	// replay, seed, workers and checkpoint period; preset its recipe.
	thresholds window.Thresholds
	learn      config.Estimator
	preset     estimator.Preset
	alerts     config.Alerts
	heartbeat  time.Duration
	// dir is the line's state directory; dash its dashboard record.
	dir  string
	dash *camDash
	// cut is a zone's cut of its camera's whole gray frames.
	cut *stream.Preprocess
	// sourceOnly is a camera with zones: its entry reports its source
	// (state, frames, reconnects) and runs no stages.
	sourceOnly bool
	// evidence keeps its raised alerts' evidence (nil: none).
	evidence *cameraEvidence
}

// line is one camera's or zone's line of stages — framing (framing.go:
// windows or events; ambient.go: an ambient record) → learning
// (learning.go: the window analysis, one outcome and its verdict) →
// reporting (reporting.go: diagnostics, estimates, alerts) — joined by
// channels, and its heartbeat. The frames come from its camera
// (camera.go) through feed. Its status has locks of its own (record.go).
type line struct {
	spec lineSpec
	// cfg, zone and log are the spec's, for the daemon's table and its
	// HTTP endpoints.
	cfg  config.Camera
	zone string
	log  *slog.Logger
	src  stream.Source
	// up is the state of the camera's source; source the line's own (a
	// camera's line: the same; a zone: whether its region can be cut).
	up, source *sourceState
	// reconnects counts the camera's source reopenings.
	reconnects *atomic.Int64

	bus   publisher
	node  string
	onEst func(wire.Estimate)
	// trainTime observes each window's training and fitting time.
	trainTime interface{ Observe(float64) }
	// gate is the daemon's bound on windows estimated at once, shared by
	// its lines; the caches are the line's own.
	gate                  gate
	motionCache           *motion.Cache
	trackCache            *tracker.Cache
	rec                   *record
	dash                  *camDash
	count                 counters
	work                  stageWork
	feed                  chan sourceItem
	g                     goroutines
	alertsBase            *wire.Baseline // restored when built, for the reporting stage
	env                   *environment   // the covariates (nil: none)
	ownSource, noUpstream sourceState
	// scale is the line's millimetres per source pixel: its camera's (or
	// zone's) scale when built, and a reload's since (applyScales).
	scale lineScale
	// bins is windows.bin: auto's choice, from reporting to framing (nil:
	// a fixed decimation).
	bins *binChoice
}

// shared is what the lines of a daemon share: its bus and board name, its
// gate on windows estimated at once, its estimate hook; trainTime
// observes one line's training time.
type shared struct {
	env       *environment
	bus       publisher
	node      string
	onEst     func(wire.Estimate)
	gate      gate
	trainTime interface{ Observe(float64) }
}

// shared is the daemon's for the line key.
func (d *Daemon) shared(key string) shared {
	return shared{env: d.env, bus: d.bus, node: d.bus.node, onEst: d.opt.OnEstimate, gate: d.gate, trainTime: d.metrics.training.WithLabelValues(key)}
}

// newLine builds a line from its resolved spec and what the daemon's
// lines share; it has caches of its own for the camera-motion test and
// the tracker (a zone's frames are not its camera's). Zones and cameras
// are built here alike, so that neither runs without what the other has.
// cam is the camera whose source feeds it (nil: attached later).
func newLine(s lineSpec, sh shared, cam *camera) *line {
	l := &line{spec: s, cfg: s.cam, zone: s.zone, log: s.log, src: s.src, bus: sh.bus, node: sh.node, onEst: sh.onEst, env: sh.env,
		gate: sh.gate, trainTime: sh.trainTime, motionCache: motion.NewCache(), trackCache: tracker.NewCache(), rec: newRecord(), dash: s.dash}
	l.attachTo(cam)
	if s.window.Bin == config.BinAuto && s.cam.Mode == config.ModeSingle {
		l.bins = &binChoice{}
	}
	l.scale.set(s.cam.Scale.MMPerPx())
	l.source.set(wire.StateStarting, "")
	l.alertsBase = loadBaseline(s.dir, s.log)
	l.rec.setBaseline(l.alertsBase)
	return l
}

// attachTo sets where the line's frames and its source's state come from:
// a camera's own line shares its camera's state; a zone keeps its own,
// and reads its camera's.
func (l *line) attachTo(cam *camera) {
	l.up, l.source = &l.noUpstream, &l.ownSource
	if cam == nil {
		return
	}
	l.up, l.reconnects = &cam.source, &cam.reconnects
	if l.spec.cut == nil {
		l.source = &cam.source
	}
}

// key names the line in subjects, message IDs, metrics and the daemon's
// table: the camera's name, or "<camera>.<zone>" for a zone.
func (l *line) key() string { return wire.Key(l.cfg.Name, l.zone) }

// start launches the line's stages, one goroutine each, and its
// heartbeat. Each stage ends when its input closes (the feed, when the
// camera's source ends or the line is detached); cancelling the line
// stops it at once, and what is already in it is still reported.
func (l *line) start(parent context.Context) {
	ctx := l.g.begin(parent)
	l.g.run(func() { l.heartbeat(ctx) })
	if !l.spec.sourceOnly {
		jobs := make(chan batch, 1)
		outs := make(chan outcome, outcomeQueue)
		fr, ln, rp := l.framer(), l.learning(), l.reporter()
		l.g.run(func() { defer close(jobs); fr.run(ctx, l.feed, jobs) })
		l.g.run(func() { defer close(outs); ln.run(ctx, jobs, outs) })
		l.g.run(func() { rp.run(ctx, outs) })
	}
	l.g.started()
}

// stop cancels the line and waits for it, at most until ctx ends.
func (l *line) stop(ctx context.Context) { l.g.stop(ctx, l.log, "camera") }

// framer, learning and reporter build the line's stages from its spec.
func (l *line) framer() *framer {
	s := l.spec
	f := &framer{log: s.log, window: s.window, fps: s.cam.FPS, mode: s.cam.Mode, events: s.events, ambient: s.cam.Ambient,
		count: &l.count, source: l.source, dash: l.dash}
	if s.cut != nil {
		f.cut = stream.NewGrayReader(*s.cut)
	}
	if l.bins != nil {
		f.auto = &autoBin{choice: l.bins, probe: autoBinProbe}
	}
	return f
}

func (l *line) learning() *learning {
	s := l.spec
	return &learning{log: s.log, preset: s.preset, th: s.thresholds, est: s.learn, dir: s.dir, roi: s.cam.ROI, reference: s.cam.Reference,
		gate: l.gate, motionCache: l.motionCache, trackCache: l.trackCache, work: &l.work, dash: l.dash, rec: l.rec}
}

func (l *line) reporter() *reporter {
	s := l.spec
	r := &reporter{log: s.log, node: l.node, camera: s.cam.Name, zone: s.zone, dir: s.dir, bus: l.bus, onEst: l.onEst,
		trainTime: l.trainTime, alerts: newAlerter(s.cam.Name, s.alerts, l.alertsBase), rec: l.rec, dash: l.dash, work: &l.work,
		scale: &l.scale, window: l.recordWindow, bins: l.bins, evidence: s.evidence}
	r.alerts.env = envOrNil(l.env)
	r.restoreCharts(loadCharts(s.dir, s.log))
	if r.rec != nil {
		r.rec.setCharts(r.alerts.readings())
	}
	r.restoreModes(loadModeState(s.dir, s.log), time.Now())
	return r
}
