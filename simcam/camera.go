package simcam

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/physd/physd/sim"
	"github.com/physd/physd/stream"
)

// Compile-time check that a Camera is a stream.Source.
var _ stream.Source = (*Camera)(nil)

// Defaults of Options.
const (
	// DefaultEventEvery is the event length used when Options.EventEvery
	// is 0.
	DefaultEventEvery = 5 * time.Second
)

// DefaultV0 returns the initial velocities the camera cycles through when
// Options.V0 is empty: −200, 200 and −100 (degrees per second for the
// pendulum, raw state units per second otherwise, as in the paper's
// tables).
func DefaultV0() []float64 { return []float64{-200, 200, -100} }

// Options configures the synthetic camera (see New).
type Options struct {
	// System is the simulated object; empty means sim.SystemPendulum.
	System sim.System
	// Regime selects the paper's ground truth (sim.GroundTruth); empty
	// means sim.RegimeUnderdamped. It is ignored when Gamma1 and Gamma0
	// give the coefficients explicitly.
	Regime sim.Regime
	// Gamma1 and Gamma0 override Regime when both are ≥ 0 and not both 0
	// (the zero value of the options therefore means "use Regime"; z″ = 0
	// is not an oscillator). Set either negative to use Regime.
	Gamma1, Gamma0 float64
	// Z0 is the state at the release of every event (degrees for the
	// pendulum).
	Z0 float64
	// V0 lists the initial velocities; event i starts with V0[i mod
	// len(V0)], so cyclically neighbouring entries must differ (a single
	// entry repeats the same trajectory every event). Empty means
	// DefaultV0().
	V0 []float64
	// EventEvery is the length of one event: every EventEvery the object
	// is released again from (Z0, next V0). 0 means DefaultEventEvery.
	EventEvery time.Duration
	// FPS is the frame rate; 0 means sim.DefaultFPS(System).
	FPS float64
	// Size is the side of the rendered square frames; 0 means
	// sim.DefaultSize. The stream.Preprocess given to New applies
	// afterwards.
	Size int
	// Seed drives the rendering; event i uses Seed+i for its nuisance. The
	// same options give identical frames.
	Seed int64
	// Realtime paces the frames by the wall clock at FPS; otherwise they
	// are produced as fast as the consumer takes them (for tests).
	Realtime bool
	// MaxFrames ends the stream with io.EOF after that many frames; 0
	// means unlimited.
	MaxFrames int
	// Nuisance is the optional disturbance of every event.
	Nuisance sim.Nuisance
}

// Camera is the built-in synthetic camera, a stream.Source for demos and
// tests: an endless stream of events rendered by package sim, each a
// release of the simulated system from (Z0, V0[i]) lasting EventEvery,
// played one after another as one continuous stream. Seq and Time continue across events;
// at an event boundary the state jumps (a new release).
//
// All events are drawn through one observation map: for the intensity and
// scale systems the normalisation of z is computed jointly over the
// trajectories of all V0 (the only trajectories the stream ever shows), and
// the intensity polygon comes from Seed, so a given z looks the same in
// every event. Events are rendered lazily, one frame at a time, so memory
// stays bounded however long the stream runs.
//
// A Camera is immutable after construction; Run may be called again
// (each call starts from event 0).
type Camera struct {
	opt            Options // defaults applied
	pre            stream.Preprocess
	gamma1, gamma0 float64
	obs            sim.Observation
	perEvent       int // frames per event
	name           string
}

// New validates the options and prepares the synthetic camera; pre is
// applied to every rendered frame. Errors wrap stream.ErrInvalidOption (or
// sim.ErrInvalidScene for a scene sim rejects, e.g. an event shorter than
// sim.MinFrames frames).
func New(cfg Options, pre stream.Preprocess) (*Camera, error) {
	fail := func(err error) (*Camera, error) {
		return nil, fmt.Errorf("simcam: synthetic camera: %w", err)
	}
	if cfg.System == "" {
		cfg.System = sim.SystemPendulum
	}
	if !cfg.System.Valid() {
		return fail(fmt.Errorf("option System = %q: want %q, %q or %q: %w", cfg.System, sim.SystemPendulum, sim.SystemIntensity, sim.SystemScale, stream.ErrInvalidOption))
	}
	g1, g0 := cfg.Gamma1, cfg.Gamma0
	explicit := g1 >= 0 && g0 >= 0 && (g1 != 0 || g0 != 0)
	regime := cfg.Regime
	if !explicit {
		if regime == "" {
			regime = sim.RegimeUnderdamped
		}
		if !regime.Valid() {
			return fail(fmt.Errorf("option Regime = %q: want underdamped, undamped, critical or overdamped: %w", regime, stream.ErrInvalidOption))
		}
		g1, g0 = sim.GroundTruth(regime)
	}
	if len(cfg.V0) == 0 {
		cfg.V0 = DefaultV0()
	}
	cfg.V0 = append([]float64(nil), cfg.V0...)
	if n := len(cfg.V0); n > 1 {
		for i, v := range cfg.V0 {
			if next := cfg.V0[(i+1)%n]; v == next {
				return fail(fmt.Errorf("V0 = %v: entries %d and %d are equal, so two consecutive events would repeat one trajectory: %w", cfg.V0, i, (i+1)%n, stream.ErrInvalidOption))
			}
		}
	}
	if cfg.EventEvery == 0 {
		cfg.EventEvery = DefaultEventEvery
	}
	if cfg.EventEvery < 0 {
		return fail(fmt.Errorf("EventEvery = %v: must be > 0 (0 = %v): %w", cfg.EventEvery, DefaultEventEvery, stream.ErrInvalidOption))
	}
	if cfg.FPS == 0 {
		cfg.FPS = sim.DefaultFPS(cfg.System)
	}
	if !(cfg.FPS >= stream.MinFPS && cfg.FPS <= 1e4) { // also NaN
		return fail(fmt.Errorf("FPS = %v: must be in [%g, 1e4] (0 = the system's default): %w", cfg.FPS, stream.MinFPS, stream.ErrInvalidOption))
	}
	if cfg.Size == 0 {
		cfg.Size = sim.DefaultSize
	}
	if cfg.MaxFrames < 0 {
		return fail(fmt.Errorf("MaxFrames = %d: must be >= 0 (0 = unlimited): %w", cfg.MaxFrames, stream.ErrInvalidOption))
	}
	if err := pre.CheckFrame(cfg.Size, cfg.Size); err != nil {
		return fail(err)
	}
	s := &Camera{opt: cfg, pre: pre, gamma1: g1, gamma0: g0}
	// The trajectories of events i and i+len(V0) are the same, so the
	// first len(V0) events span every state the stream will show.
	scenes := make([]sim.Scene, len(cfg.V0))
	for i := range scenes {
		scenes[i] = s.scene(i)
	}
	obs, err := sim.ObservationFor(scenes)
	if err != nil {
		return fail(err)
	}
	s.obs = obs
	s.perEvent = scenes[0].Frames()

	var b strings.Builder
	fmt.Fprintf(&b, "synthetic:%s", cfg.System)
	if explicit {
		fmt.Fprintf(&b, "/gamma1=%s,gamma0=%s", strconv.FormatFloat(g1, 'g', -1, 64), strconv.FormatFloat(g0, 'g', -1, 64))
	} else {
		fmt.Fprintf(&b, "/%s", regime)
	}
	if cfg.Nuisance.Kind != sim.NuisanceNone {
		fmt.Fprintf(&b, "/%s:%d", cfg.Nuisance.Kind, cfg.Nuisance.Level)
	}
	fmt.Fprintf(&b, "/seed=%d", cfg.Seed)
	s.name = b.String()
	return s, nil
}

// scene returns the sim scene of event i.
func (s *Camera) scene(i int) sim.Scene {
	o := s.opt
	return sim.Scene{
		System: o.System, Gamma1: s.gamma1, Gamma0: s.gamma0,
		Z0: o.Z0, V0: o.V0[i%len(o.V0)],
		Duration: o.EventEvery.Seconds(), FPS: o.FPS, Size: o.Size,
		Seed: o.Seed + int64(i), Nuisance: o.Nuisance,
	}
}

// Name identifies the source, e.g. "synthetic:pendulum/underdamped/seed=1".
func (s *Camera) Name() string { return s.name }

// Truth returns the coefficients (γ1, γ0) every event is rendered with.
func (s *Camera) Truth() (gamma1, gamma0 float64) { return s.gamma1, s.gamma0 }

// FPS returns the frame rate of the stream.
func (s *Camera) FPS() float64 { return s.opt.FPS }

// FramesPerEvent returns the number of frames of one event,
// round(EventEvery·FPS); event i covers Seq i·FramesPerEvent() up to
// (i+1)·FramesPerEvent() − 1.
func (s *Camera) FramesPerEvent() int { return s.perEvent }

// Run renders and emits frames until ctx is done (returns ctx.Err()),
// MaxFrames frames have been emitted (returns io.EOF) or emit fails
// (returns its error). Frame k has Time = k/FPS and Wall = the start of
// Run + Time; with Realtime, it is emitted no earlier than its Wall.
func (s *Camera) Run(ctx context.Context, emit func(stream.Frame) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	start := time.Now()
	seq := 0
	for ev := 0; ; ev++ {
		r, err := sim.NewClipRenderer(s.scene(ev), s.obs)
		if err != nil {
			return fmt.Errorf("simcam: %s: event %d: %w", s.name, ev, err)
		}
		for k := range r.Len() {
			if s.opt.MaxFrames > 0 && seq >= s.opt.MaxFrames {
				return io.EOF
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			f, err := s.pre.ApplyGray(r.Frame(k))
			if err != nil {
				return fmt.Errorf("simcam: %s: frame %d: %w", s.name, seq, err)
			}
			f.Seq, f.Time = seq, stream.IndexTime(seq, s.opt.FPS)
			f.Wall = start.Add(f.Time)
			if s.opt.Realtime {
				if err := stream.SleepUntil(ctx, f.Wall); err != nil {
					return err
				}
			}
			if err := emit(f); err != nil {
				return err
			}
			seq++
		}
	}
}
