package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
)

// Options are what the daemon needs besides its configuration.
type Options struct {
	// StateDir holds checkpoints, baselines and the embedded JetStream store.
	StateDir string
	// Logger receives everything; nil discards.
	Logger *slog.Logger
	// OnEstimate, when set, is called with every certified estimate after
	// it was published (physd run prints them).
	OnEstimate func(wire.Estimate)
	// Notifier receives service-manager notifications (READY, STATUS,
	// STOPPING, WATCHDOG); nil sends none.
	Notifier Notifier
	// ShutdownTimeout bounds how long Run waits for cameras at exit.
	ShutdownTimeout time.Duration
}

// Notifier is the service manager (systemd's sd_notify).
type Notifier interface {
	Notify(state string) error
}

// Daemon is a running physd: the NATS connection and one worker per
// configured camera.
type Daemon struct {
	opt Options
	log *slog.Logger
	bus *bus

	mu  sync.Mutex
	cfg *config.Config
	// cameras are the cameras' source runners, by name; lines every
	// line of stages, by key (line.key): a camera's own, each zone's, and
	// a camera with zones' source entry.
	cameras map[string]*camera
	lines   map[string]*line
	ctx     context.Context
	rtc     *stream.WebRTC // nil until a whip or whep camera needs it
	http    net.Addr
	metrics *metrics
	started time.Time
	// dash fans finished windows out to open dashboards.
	dash *dashHub
	// gate lets as many cameras estimate a window at once as the
	// process has cores (see gate).
	gate gate
	// env holds the covariates the alerts' charts regress on.
	env *environment
	// evidence keeps the raised alerts' evidence (set by Run).
	evidence *evidenceKeeper
}

// New validates what can be checked before starting, among it the names
// cfg uses (the preset, each synthetic source's system and regime) against
// Vocabulary.
func New(cfg *config.Config, opt Options) (*Daemon, error) {
	if cfg == nil {
		return nil, errors.New("daemon: no configuration")
	}
	if opt.StateDir == "" {
		return nil, errors.New("daemon: no state directory")
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.ShutdownTimeout <= 0 {
		opt.ShutdownTimeout = 20 * time.Second
	}
	// A Config built in code has not been through config.LoadWith: an
	// unknown preset, system or regime is refused here, before any camera
	// starts.
	if err := cfg.CheckNames(Vocabulary()); err != nil {
		return nil, fmt.Errorf("daemon: %w", err)
	}
	d := &Daemon{opt: opt, log: opt.Logger, cfg: cfg, cameras: map[string]*camera{}, lines: map[string]*line{}, started: time.Now(), dash: newDashHub(opt.Logger),
		gate: newGate(runtime.GOMAXPROCS(0))}
	d.metrics = newMetrics(d)
	return d, nil
}

// NATSURL is the URL subscribers use to reach physd's NATS server, once
// Run has started it ("" before).
func (d *Daemon) NATSURL() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bus == nil {
		return ""
	}
	return d.bus.clientURL()
}

// SubscriberOptions are the options a local subscriber connects to
// NATSURL with: the embedded server's read-only user (SubscriberSeed), or
// none when physd uses configured servers (nil before Run has started
// NATS).
func (d *Daemon) SubscriberOptions() ([]nats.Option, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bus == nil || d.bus.embedded == nil {
		return nil, nil
	}
	o, err := nats.NkeyOptionFromSeed(SubscriberSeed(d.opt.StateDir))
	if err != nil {
		return nil, fmt.Errorf("daemon: subscriber credentials: %w", err)
	}
	return []nats.Option{o}, nil
}

// Run starts NATS and the cameras and blocks until ctx is cancelled; then
// it stops the cameras (dropping windows in flight), checkpoints their
// encoders, flushes NATS and returns.
func (d *Daemon) Run(ctx context.Context, ready func()) error {
	if err := os.MkdirAll(d.opt.StateDir, 0o750); err != nil {
		return fmt.Errorf("daemon: state directory: %w", err)
	}
	var sensors []string
	for _, cv := range d.cfg.Alerts.Covariates {
		sensors = append(sensors, cv.Subject)
	}
	b, err := startBus(ctx, d.cfg.NATS, d.cfg.Node.EffectiveName(), d.opt.StateDir, d.log, sensors...)
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	d.mu.Lock()
	d.bus, d.ctx = b, ctx
	cfg := d.cfg
	d.env = newEnvironment(cfg.Alerts.Covariates, d.log.With("part", "covariates"))
	d.evidence = newEvidenceKeeper(cfg.Alerts.Evidence, d.opt.StateDir, cfg.Node.EffectiveName(), b, d.log.With("part", "evidence"))
	d.mu.Unlock()
	if err := d.env.subscribe(ctx, b.nc); err != nil {
		b.close()
		return fmt.Errorf("daemon: %w", err)
	}
	go d.env.watchFiles(ctx, filePoll)
	rtc, err := stream.NewWebRTC(iceOptions(cfg.WebRTC))
	if err != nil {
		b.close()
		return fmt.Errorf("daemon: %w", err)
	}
	defer rtc.Close()
	hctx, stopHTTP := context.WithCancel(context.Background())
	var httpDone <-chan struct{}
	if cfg.HTTP.Listen != "" {
		addr, done, err := d.serveHTTP(hctx, cfg.HTTP)
		if err != nil {
			stopHTTP()
			b.close()
			return fmt.Errorf("daemon: %w", err)
		}
		httpDone = done
		d.mu.Lock()
		d.http = addr
		d.mu.Unlock()
		d.log.Info("http listening", "addr", addr.String(), "tls", cfg.HTTP.TLSCertFile != "")
	}
	defer func() {
		stopHTTP()
		if httpDone != nil {
			<-httpDone
		}
	}()
	d.mu.Lock()
	d.rtc = rtc
	d.mu.Unlock()
	for _, cc := range cfg.Cameras {
		if err := d.startCamera(cfg, cc); err != nil {
			d.log.Error("camera not started", "camera", cc.Name, "err", err)
		}
	}
	if m := cfg.NATS.Embedded.MQTT; m.Listen != "" && m.DiscoveryPrefix != "" && b.embedded != nil {
		go d.publishDiscovery(ctx, b.nc, m.DiscoveryPrefix, cfg.NATS.SubjectPrefix)
	}
	d.notify("READY=1\nSTATUS=" + d.statusLine())
	d.log.Info("physd running", "cameras", len(cfg.Cameras), "nats", b.clientURL(), "state_dir", d.opt.StateDir)
	if ready != nil {
		ready()
	}
	<-ctx.Done()
	d.notify("STOPPING=1")
	d.log.Info("physd stopping")
	sctx, cancel := context.WithTimeout(context.Background(), d.opt.ShutdownTimeout)
	defer cancel()
	d.mu.Lock()
	cams, lines := d.cameras, d.lines
	d.cameras, d.lines = map[string]*camera{}, map[string]*line{}
	d.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range cams {
		wg.Add(1)
		go func() { defer wg.Done(); c.stop(sctx) }()
	}
	for _, l := range lines {
		wg.Add(1)
		go func() { defer wg.Done(); l.stop(sctx) }()
	}
	wg.Wait()
	// Clips still recording are written with what their cameras sent.
	d.evidenceKeeper().stop(sctx)
	b.close()
	d.log.Info("physd stopped")
	return nil
}

// evidenceKeeper is the daemon's keeper of alerts' evidence (nil before
// Run).
func (d *Daemon) evidenceKeeper() *evidenceKeeper {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.evidence
}

func (d *Daemon) notify(state string) {
	if d.opt.Notifier == nil {
		return
	}
	if err := d.opt.Notifier.Notify(state); err != nil {
		d.log.Debug("sd_notify", "err", err)
	}
}

func (d *Daemon) statusLine() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	online := 0
	for _, l := range d.lines {
		if st, _ := l.source.get(); st == wire.StateOnline {
			online++
		}
	}
	return fmt.Sprintf("%d/%d cameras online", online, len(d.lines))
}

// Ping tells the service manager the daemon is alive and what it is doing.
func (d *Daemon) Ping() {
	d.notify("WATCHDOG=1\nSTATUS=" + d.statusLine())
}

// cameraPreset is the training recipe a camera's line runs with: cfg's
// preset with cfg's τ, λ and learning rate. A zone's line passes its
// ZoneConfig, so that its overrides of those reach its learner.
func cameraPreset(cfg *config.Config) (estimator.Preset, error) {
	p, err := estimator.LookupPreset(cfg.Estimator.Preset)
	if err != nil {
		return estimator.Preset{}, err
	}
	p.Loss.Tau, p.Loss.Lambda, p.LREncoder = cfg.Estimator.Tau, cfg.Estimator.Lambda, cfg.Estimator.LREncoder
	if err := p.Validate(); err != nil {
		return estimator.Preset{}, err
	}
	return p, nil
}

// lineSpecOf resolves what a line of the camera cc needs from cfg (for a
// zone, its ZoneConfig): the effective window, events, the certificate's
// thresholds, the learner's budget, the alerts and the heartbeat.
func lineSpecOf(cfg *config.Config, cc config.Camera, p estimator.Preset, src stream.Source, dir string, dash *camDash) lineSpec {
	return lineSpec{cam: cc, src: src, window: cc.EffectiveWindow(cfg.Windows), events: cfg.Events, thresholds: thresholds(cfg.Certify),
		learn: cfg.Estimator, preset: p, alerts: cfg.Alerts, heartbeat: cfg.NATS.Heartbeat, dir: dir, dash: dash}
}

// startCamera builds and starts one camera: its source runner, and its
// own line or, with zones, a line per zone and the camera's source
// entry. The caller must not hold d.mu.
func (d *Daemon) startCamera(cfg *config.Config, cc config.Camera) error {
	p, err := cameraPreset(cfg)
	if err != nil {
		return err
	}
	log := d.log.With("camera", cc.Name)
	d.mu.Lock()
	rtc := d.rtc
	d.mu.Unlock()
	thumb := &stream.Thumbnailer{}
	pre := cameraPre(cc, p, thumb)
	if len(cc.Zones) > 0 {
		pre = zonesPre(thumb)
	}
	ce, tap := d.evidenceKeeper().forCamera(cc)
	src, err := newSource(cc, pre, rtc, tap)
	if err != nil {
		return err
	}
	s := lineSpecOf(cfg, cc, p, src, filepath.Join(d.opt.StateDir, "cameras", cc.Name), newCamDash(d.dash, thumb, cfg))
	s.log, s.sourceOnly, s.evidence = log, len(cc.Zones) > 0, ce
	check := func() error {
		_, err := window.NewSlicer(window.SlicerOptions{Length: s.window.Length, Hop: s.window.Hop, MaxGap: s.window.MaxGap, FPS: cc.FPS})
		return err
	}
	l := newLine(s, d.shared(cc.Name), nil)
	c := newCamera(cc, src, log, check, &l.count, &l.work, l.dash)
	c.evidence = ce
	l.attachTo(c)
	if !s.sourceOnly {
		l.feed = c.attach(l.key())
	}
	d.mu.Lock()
	d.cameras[cc.Name] = c
	d.lines[l.key()] = l
	ctx := d.ctx
	d.mu.Unlock()
	d.startZones(cfg, cc, c) // attached before the source's first frame
	l.start(ctx)
	c.start(ctx)
	log.Info("camera started", "source", src.Name(), "mode", cc.Mode)
	if cc.Source.TLS.InsecureSkipVerify {
		log.Warn("the camera's certificate is not checked (source.tls.insecure_skip_verify): anyone on the network path can pose as it")
	}
	return nil
}

// Reload applies a new configuration: cameras that were added start,
// removed ones stop, changed ones restart; the others are not touched but
// for their scales, which apply at once (applyScales). Changes outside
// the cameras need a restart and are only logged.
func (d *Daemon) Reload(next *config.Config) {
	d.mu.Lock()
	old := d.cfg
	d.mu.Unlock()
	if g := config.GlobalChanged(old, next); len(g) > 0 {
		d.log.Warn("configuration changes that need a restart were not applied", "sections", g)
	}
	added, removed, changed := config.Diff(old, next)
	// Take the new configuration except the sections that need a restart.
	merged := config.Reloadable(old, next)
	d.mu.Lock()
	d.cfg = merged
	d.mu.Unlock()
	sctx, cancel := context.WithTimeout(context.Background(), d.opt.ShutdownTimeout)
	defer cancel()
	for _, name := range append(append([]string(nil), removed...), changed...) {
		d.mu.Lock()
		c := d.cameras[name]
		delete(d.cameras, name)
		// Its lines end with its source; they leave the table too.
		var lines []*line
		for k, l := range d.lines {
			if l.cfg.Name == name {
				lines = append(lines, l)
				delete(d.lines, k)
			}
		}
		d.mu.Unlock()
		if c != nil {
			c.stop(sctx)
		}
		for _, l := range lines {
			l.stop(sctx)
		}
		if c != nil {
			d.log.Info("camera stopped by reload", "camera", name)
		}
	}
	for _, name := range append(append([]string(nil), added...), changed...) {
		cc, _ := next.Camera(name)
		if err := d.startCamera(merged, cc); err != nil {
			d.log.Error("camera not started", "camera", name, "err", err)
		}
	}
	// A camera whose only change is in its zones keeps its source; only
	// the zones that changed restart.
	for _, name := range config.ZonesChanged(old, next) {
		d.mu.Lock()
		c := d.cameras[name]
		own := d.lines[name]
		d.mu.Unlock()
		if c == nil || own == nil || !own.spec.sourceOnly {
			continue
		}
		za, zr, zc := config.ZoneDiff(old, next, name)
		for _, z := range append(append([]string(nil), zr...), zc...) {
			d.stopZone(sctx, c, z)
		}
		cc, _ := next.Camera(name)
		for _, z := range append(append([]string(nil), za...), zc...) {
			if zz, ok := cc.Zone(z); ok {
				if err := d.startZone(merged, cc, c, zz); err != nil {
					d.log.Error("zone not started", "camera", name, "zone", z, "err", err)
				}
			}
		}
		d.log.Info("zones reloaded", "camera", name, "added", za, "removed", zr, "changed", zc)
	}
	d.applyScales(next)
	d.log.Info("configuration reloaded", "added", added, "removed", removed, "changed", changed)
}

// applyScales sets every running line's scale from cfg (config.LineScale):
// a scale change restarts nothing (config.Diff leaves it out), and the
// line's next window is reported with it.
func (d *Daemon) applyScales(cfg *config.Config) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, l := range d.lines {
		s, ok := cfg.LineScale(l.cfg.Name, l.zone)
		if !ok || l.spec.sourceOnly { // a camera with zones reports no windows itself
			continue
		}
		if mm := s.MMPerPx(); mm != l.scale.get() {
			l.scale.set(mm)
			l.log.Info("scale applied", "mm_per_px", mm)
		}
	}
}

// HTTPAddr is the address physd's HTTP endpoint listens on, once Run has
// started it ("" before, or when http.listen is empty).
func (d *Daemon) HTTPAddr() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.http == nil {
		return ""
	}
	return d.http.String()
}

// iceOptions converts the validated webrtc section.
func iceOptions(w config.WebRTC) stream.ICEOptions {
	o := stream.ICEOptions{Interfaces: w.Interfaces, UDPPort: w.UDPPort}
	for _, a := range w.Addresses {
		if p, err := config.ParseAddress(a); err == nil {
			o.Addresses = append(o.Addresses, p)
		}
	}
	return o
}

// Statuses returns every camera's current status, by name.
func (d *Daemon) Statuses() map[string]wire.Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]wire.Status{}
	for n, l := range d.lines {
		out[n] = l.status()
	}
	return out
}

// loadBaseline reads a line's alert baseline from its state directory;
// an unreadable one is set aside, and a new one will be learned.
func loadBaseline(dir string, log *slog.Logger) *wire.Baseline {
	path := filepath.Join(dir, "baseline.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var base wire.Baseline
	if err := json.Unmarshal(b, &base); err != nil || !(base.Fn > 0) {
		to, _ := setAside(path)
		log.Warn("alert baseline unreadable; set aside, a new one will be learned", "moved_to", to)
		return nil
	}
	log.Info("alert baseline restored", "fn_hz", base.Fn, "zeta", base.Zeta, "since", base.Since)
	return &base
}

func (c *reporter) saveBaseline() {
	b, err := json.Marshal(c.alerts.base)
	if err == nil {
		err = writeAtomic(c.baselinePath(), func(f *os.File) error { _, err := f.Write(b); return err })
	}
	if err != nil {
		c.log.Error("alert baseline not saved", "err", err)
	}
}
