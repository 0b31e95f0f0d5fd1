package daemon

import (
	"context"
	"log/slog"
	"math"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/physd/physd/analysis"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/flow"
	"github.com/physd/physd/modes"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
)

// reporter is a line's reporting stage: it publishes each outcome — a
// diagnostic for every window, the estimate and any alert for a
// certified one — and keeps the line's record and alert baseline.
type reporter struct {
	log          *slog.Logger
	node, camera string
	zone         string
	dir          string // where the alert baseline is kept
	bus          publisher
	onEst        func(wire.Estimate)
	trainTime    interface{ Observe(float64) }
	alerts       *alerter
	rec          *record
	dash         *camDash
	work         *stageWork
	// scale is the line's millimetres per source pixel, for the
	// amplitudes (nil: none).
	scale *lineScale
	// window tells the line's dashboard of a finished window.
	window func(*wire.Diagnostic, *estimator.Result, *wire.EncoderInfo)
	// bins learns windows.bin: auto's decimation from certified windows
	// (nil: a fixed one).
	bins *binChoice
	// evidence keeps the evidence of the line's raised alerts (nil: none).
	evidence *cameraEvidence
	// modes labels the modes of windows that ring in several, from
	// window to window; modeAlerts are the alerts of labels beyond the
	// first (label 1's are alerts').
	modes      modes.Tracker
	modeAlerts map[int]*alerter
	// charted is how many points the alert charts had closed when last
	// saved (saveCharts), modeCharted the same of each later label's
	// (saveModes).
	charted     int
	modeCharted map[int]int
}

// lineScale is a line's millimetres per source pixel (0: no scale), read
// by its reporting stage at each window and set again by a reload
// (Daemon.applyScales): a scale change needs no restart.
type lineScale struct{ bits atomic.Uint64 }

// set stores the scale.
func (s *lineScale) set(mmPerPx float64) { s.bits.Store(math.Float64bits(mmPerPx)) }

// get returns the scale; 0 for a nil *lineScale.
func (s *lineScale) get() float64 {
	if s == nil {
		return 0
	}
	return math.Float64frombits(s.bits.Load())
}

// amplitudeOf is a window's amplitude as its messages carry it: a's
// pixels, and millimetres at mmPerPx when that is above 0; nil when a is
// nil (not measured) or not a finite amplitude (wire.NewAmplitude).
func amplitudeOf(a *flow.Amplitude, mmPerPx float64) *wire.Amplitude {
	if a == nil {
		return nil
	}
	w := wire.NewAmplitude(a.Px, a.NoisePx, a.Readout, mmPerPx)
	if w != nil {
		w.HeldShare = a.HeldShare
	}
	return w
}

// run publishes each outcome of in until the learning stage closes it.
func (c *reporter) run(ctx context.Context, in <-chan outcome) {
	for o := range in {
		j := o.job
		t0 := time.Now()
		switch {
		case o.skipped:
			c.publishDiag(ctx, j, "skipped", []string{"estimation fell behind the stream; a newer window replaced this one (raise estimator.max_window_time or the hop)"}, nil, nil, nil, nil, nil)
		case o.err != nil:
			c.log.Warn("window not estimated", "window_start", j.start, "window_end", j.end, "err", o.err)
			c.publishDiag(ctx, j, "error", []string{o.err.Error()}, nil, nil, nil, nil, nil)
		default:
			v := o.verdict
			c.trainTime.Observe(o.train.Seconds())
			c.rec.judged(string(v.Status), o.info)
			// One scale for the window's diagnostic and estimate, should
			// a reload change it meanwhile.
			amp := amplitudeOf(o.amp, c.scale.get())
			ms := c.labelModes(j, o.modes)
			c.publishDiag(ctx, j, string(v.Status), v.Reasons, o.res, &o.info, amp, o.ambient, ms.summaries(), v)
			// A window of several modes publishes each certified mode,
			// label 1 where the window's estimate went; without one, the
			// window's own estimate as before.
			published := false
			for _, m := range ms {
				if m.Verdict.Certified {
					mode := m.wire
					c.publishEstimate(ctx, j, m.Result, o.info, amp, o.ambient, m.Verdict, &mode)
					published = true
				}
			}
			if !published && v.Certified && !j.single {
				c.publishEstimate(ctx, j, o.res, o.info, amp, o.ambient, v, c.labelOne(j, o.res))
			}
			if c.bins != nil {
				c.log.Debug("window's readouts", "bin", j.binOrZero(), "top_line_hz", o.peak, "certified", v.Certified)
			}
			c.bins.learn(j, o)
		}
		c.work.add(stagePublish, t0)
	}
}

func ptr(v float64) *float64 { return &v }

// publishDiag publishes a window's diagnostic: its verdict and reasons,
// the estimate r and encoder info when one was made, its amplitude amp
// (nil: not measured), an ambient record's facts amb (nil for the other
// modes), its modes ms (nil: one) and its certificate v (when judged).
func (c *reporter) publishDiag(ctx context.Context, j job, verdict string, reasons []string, r *estimator.Result, info *wire.EncoderInfo, amp *wire.Amplitude,
	amb *wire.Ambient, ms []wire.ModeSummary, v ...window.Verdict) {
	d := wire.Diagnostic{Schema: wire.SchemaDiagnostic, Node: c.node, Camera: c.camera, Zone: c.zone, WindowStart: j.start.UTC(), WindowEnd: j.end.UTC(),
		Frames: j.frames, Events: j.events(), Bin: j.binOrZero(), Verdict: verdict, Certified: verdict == string(window.Certified) && !j.single,
		Reasons: reasons, LoneEvent: j.single, Amplitude: amp, Ambient: amb, Modes: ms}
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
	c.rec.setDiag(&d)
	if c.window != nil {
		c.window(&d, r, info)
	}
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

// publishEstimate publishes a certified window's estimate, with its
// amplitude amp (nil: not measured), an ambient record's facts amb
// (nil for the other modes) and the mode it is about (nil: the window's
// one), and any alert it raises or clears.
func (c *reporter) publishEstimate(ctx context.Context, j job, r *estimator.Result, info wire.EncoderInfo, amp *wire.Amplitude, amb *wire.Ambient, v window.Verdict, mode *wire.Mode) {
	ph := r.Physics
	e := wire.Estimate{Schema: wire.SchemaEstimate, Node: c.node, Camera: c.camera, Zone: c.zone, WindowStart: j.start.UTC(), WindowEnd: j.end.UTC(),
		Frames: j.frames, Events: j.events(), Bin: j.binOrZero(), Ambient: amb, Gamma0: r.Gamma0, Gamma0Sigma: r.Sigma0, Gamma1: r.Gamma1, Gamma1Sigma: r.Sigma1,
		Fn: ph.FreqN, FnSigma: ph.SigmaF, Zeta: ph.Zeta, ZetaSigma: ph.SigmaZ, OmegaN: ph.OmegaN, DampedFreq: ph.FreqD,
		Regime: string(ph.Regime), Certified: true, Certificate: v, Encoder: info, Amplitude: amp, Mode: mode}
	if err := c.bus.publish(ctx, &e); err != nil {
		c.log.Error("certified estimate not published", "window_start", j.start, "window_end", j.end, "err", err)
	}
	c.rec.setEstimate(&e)
	// Printed once: as the caller's table row when it prints estimates,
	// else as this log line.
	lvl := slog.LevelInfo
	if c.onEst != nil {
		lvl = slog.LevelDebug
	}
	label := 1
	if mode != nil {
		label = mode.Label
	}
	c.log.Log(ctx, lvl, "certified estimate", "window_start", j.start, "window_end", j.end, "gamma0", r.Gamma0, "gamma1", r.Gamma1,
		"fn_hz", ph.FreqN, "zeta", ph.Zeta, "regime", ph.Regime, "mode", label)
	if c.onEst != nil {
		c.onEst(e)
	}
	if label >= 2 {
		// A later mode's alerts: its baseline is kept in modes.json.
		al := c.modeAlerts[label]
		if al == nil {
			al = newAlerter(c.camera, c.alerts.cfg, nil)
			al.env = c.alerts.env
			if c.modeAlerts == nil {
				c.modeAlerts = map[int]*alerter{}
			}
			c.modeAlerts[label] = al
		}
		a, based := al.observe(&e)
		if based {
			c.log.Info("alert baseline established", "window_start", j.start, "window_end", j.end, "fn_hz", al.base.Fn, "zeta", al.base.Zeta, "mode", label)
		}
		if n := al.chartPoints(); based || (al.fn != nil && n != c.modeCharted[label]) {
			if c.modeCharted == nil {
				c.modeCharted = map[int]int{}
			}
			c.modeCharted[label] = n
			c.saveModes()
		}
		if a != nil {
			a.Zone, a.Node, a.Mode = c.zone, c.node, mode
			c.evidence.capture(a, r, v, nil)
			c.log.Warn("structural-health alert", "window_start", j.start, "window_end", j.end, "state", a.State, "reasons", a.Reasons, "mode", label)
			if err := c.bus.publish(ctx, a); err != nil {
				c.log.Error("alert not published", "window_start", j.start, "window_end", j.end, "err", err)
			}
		}
		return
	}
	a, based := c.alerts.observe(&e)
	c.saveCharts()
	c.rec.setCharts(c.alerts.readings())
	if based {
		c.rec.setBaseline(c.alerts.base)
		c.saveBaseline()
		c.log.Info("alert baseline established", "window_start", j.start, "window_end", j.end, "fn_hz", c.alerts.base.Fn, "zeta", c.alerts.base.Zeta)
	}
	if a != nil {
		a.Zone, a.Node, a.Mode = c.zone, c.node, mode
		c.dash.setAlerting(a.State == wire.AlertRaised)
		c.evidence.capture(a, r, v, c.dash.setEvidence)
		c.log.Warn("structural-health alert", "window_start", j.start, "window_end", j.end, "state", a.State, "reasons", a.Reasons)
		if err := c.bus.publish(ctx, a); err != nil {
			c.log.Error("alert not published", "window_start", j.start, "window_end", j.end, "err", err)
		}
	}
}

func (c *reporter) baselinePath() string { return filepath.Join(c.dir, "baseline.json") }

// labelledMode is one of a window's modes with its label.
type labelledMode struct {
	modes.Mode
	wire wire.Mode
}

type labelledModes []labelledMode

// labelModes labels the window's modes (nil: none) from window to window
// (modes.Tracker), in source pixels.
func (c *reporter) labelModes(j job, m *analysis.Modes) labelledModes {
	if m == nil || len(m.Modes) == 0 {
		return nil
	}
	seen := make([]modes.Sighting, len(m.Modes))
	for i, md := range m.Modes {
		seen[i] = modes.Sighting{Hz: md.Term.Hz(), Certified: md.Verdict.Certified}
	}
	out := make(labelledModes, len(m.Modes))
	for i, md := range m.Modes {
		out[i].Mode = md
		out[i].wire = wire.Mode{Index: md.Index, Of: len(m.Modes), AmplitudePx: md.Term.Amplitude() * m.PxPerUnit}
	}
	changed := false
	for _, l := range c.modes.Observe(j.end, seen) {
		if l.Index < 0 {
			c.log.Info("mode lost", "mode", l.Label, "fn_hz", l.Hz)
			delete(c.modeAlerts, l.Label)
			changed = true
			continue
		}
		out[l.Index].wire.Label, out[l.Index].wire.Event = l.Label, string(l.Event)
		if l.Event == modes.Appeared {
			c.log.Info("mode appeared", "mode", l.Label, "fn_hz", l.Hz)
			changed = true
		}
	}
	if changed {
		c.saveModes()
	}
	return out
}

// labelOne labels a window's one-mode estimate r on a line whose windows
// have rung in several modes (its tracker holds labels): a window in
// which one mode has died down reads the other, and its estimate belongs
// to that mode's label — its subject, its alerts — not to label 1's. nil
// on a line that has never read two modes.
func (c *reporter) labelOne(j job, r *estimator.Result) *wire.Mode {
	if c.modes.Live() == 0 || !(r.FreqN > 0) {
		return nil
	}
	var mode *wire.Mode
	changed := false
	for _, l := range c.modes.Observe(j.end, []modes.Sighting{{Hz: r.FreqN, Certified: true}}) {
		switch {
		case l.Index < 0:
			c.log.Info("mode lost", "mode", l.Label, "fn_hz", l.Hz)
			delete(c.modeAlerts, l.Label)
			changed = true
		case l.Index == 0:
			mode = &wire.Mode{Label: l.Label, Index: 1, Of: 1, Event: string(l.Event)}
			changed = changed || l.Event == modes.Appeared
		}
	}
	if changed {
		c.saveModes()
	}
	return mode
}

// summaries are the modes as a diagnostic lists them.
func (ms labelledModes) summaries() []wire.ModeSummary {
	if len(ms) == 0 {
		return nil
	}
	out := make([]wire.ModeSummary, len(ms))
	for i, m := range ms {
		r := m.Result
		out[i] = wire.ModeSummary{Mode: m.wire, Fn: finiteOr0(r.FreqN), FnSigma: finiteOr0(r.SigmaF), Zeta: finiteOr0(r.Zeta),
			ZetaSigma: finiteOr0(r.SigmaZ), Certified: m.Verdict.Certified, Reasons: m.Verdict.Reasons}
	}
	return out
}

// finiteOr0 is v, or 0 where JSON cannot carry it.
func finiteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
