package daemon

import (
	"fmt"
	"math"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/health"
	"github.com/physd/physd/wire"
)

// alerter raises and clears a camera's (or a mode's) structural-health
// alerts from its certified estimates, by one of two methods
// (config.Alerts.Method; docs/alerts.md):
//
//   - chart: a control chart on f_n and one on ζ (package health), each
//     learning a baseline regressed on the environment's covariates and
//     judging the moving average of the residuals against limits from
//     the baseline's own scatter; the alert is raised when either chart
//     alarms and cleared when both are back.
//   - fixed: the mean of the first certified estimates is the baseline,
//     and an alert is raised when later estimates drift beyond fixed
//     relative limits for Consecutive certified windows in a row, cleared
//     after as many back within.
type alerter struct {
	cfg    config.Alerts
	camera string
	// base is the fixed rule's baseline, or the charts' means once
	// established.
	base    *wire.Baseline
	fns, zs []float64
	run     int // consecutive drifting (or, while raised, normal) windows
	raised  bool
	// env reads the covariates at an estimate's time (nil: none).
	env interface {
		At(time.Time) map[string]float64
	}
	fn, zeta *health.Chart
}

func newAlerter(camera string, cfg config.Alerts, base *wire.Baseline) *alerter {
	a := &alerter{cfg: cfg, camera: camera, base: base}
	if cfg.IsChart() {
		opt := chartOptions(cfg.Chart)
		// Validated with the config: New fails only on options out of range.
		a.fn, _ = health.New(opt)
		a.zeta, _ = health.New(opt)
		if a.fn == nil || a.zeta == nil {
			a.fn, _ = health.New(health.Options{})
			a.zeta, _ = health.New(health.Options{})
		}
	}
	return a
}

// chartOptions are the health options of the alerts' chart section.
func chartOptions(c config.Chart) health.Options {
	opt := health.Options{Baseline: c.Baseline, Interval: c.Interval, Lambda: c.Lambda, Limit: c.Limit, Clear: c.Clear, Consecutive: c.Consecutive}
	for _, t := range c.Terms {
		opt.Terms = append(opt.Terms, health.Term(t))
	}
	return opt
}

// observe takes a certified estimate. It returns an alert when one is
// raised or cleared, and whether the baseline was just established.
func (a *alerter) observe(e *wire.Estimate) (*wire.Alert, bool) {
	if a.fn != nil {
		return a.observeChart(e)
	}
	if a.base == nil {
		a.fns, a.zs = append(a.fns, e.Fn), append(a.zs, e.Zeta)
		if len(a.fns) < max(1, a.cfg.BaselineWindows) {
			return nil, false
		}
		a.base = &wire.Baseline{Fn: mean(a.fns), Zeta: mean(a.zs), Windows: len(a.fns), Since: e.WindowEnd}
		a.fns, a.zs = nil, nil
		return nil, true
	}
	fd := math.Abs(e.Fn-a.base.Fn) / a.base.Fn
	zd := math.Abs(e.Zeta-a.base.Zeta) / math.Max(a.base.Zeta, 1e-9)
	var reasons []string
	if a.cfg.FnDrift > 0 && fd > a.cfg.FnDrift {
		reasons = append(reasons, fmt.Sprintf("natural frequency %.4g Hz is %.1f%% from the baseline %.4g Hz (limit %.1f%%)", e.Fn, 100*fd, a.base.Fn, 100*a.cfg.FnDrift))
	}
	if a.cfg.ZetaDrift > 0 && zd > a.cfg.ZetaDrift {
		reasons = append(reasons, fmt.Sprintf("damping ratio %.4g is %.1f%% from the baseline %.4g (limit %.1f%%)", e.Zeta, 100*zd, a.base.Zeta, 100*a.cfg.ZetaDrift))
	}
	drifting := len(reasons) > 0
	if drifting != a.raised {
		a.run++
	} else {
		a.run = 0
	}
	if a.run < max(1, a.cfg.Consecutive) {
		return nil, false
	}
	a.run = 0
	a.raised = drifting
	state := wire.AlertRaised
	if !drifting {
		state = wire.AlertCleared
		reasons = []string{fmt.Sprintf("f_n and ζ back within the limits for %d windows", max(1, a.cfg.Consecutive))}
	}
	return &wire.Alert{Schema: wire.SchemaAlert, Camera: a.camera, Time: time.Now().UTC(), State: state, Reasons: reasons,
		Baseline: *a.base, Fn: e.Fn, Zeta: e.Zeta, FnDrift: fd, ZetaDrift: zd, Windows: max(1, a.cfg.Consecutive),
		WindowStart: e.WindowStart, WindowEnd: e.WindowEnd}, false
}

// observeChart charts the estimate's f_n and ζ with the covariates at its
// window's end.
func (a *alerter) observeChart(e *wire.Estimate) (*wire.Alert, bool) {
	var cov map[string]float64
	if a.env != nil {
		cov = a.env.At(e.WindowEnd)
	}
	evF := a.fn.Observe(health.Sample{At: e.WindowEnd, Y: e.Fn, Sigma: e.FnSigma, Cov: cov})
	evZ := a.zeta.Observe(health.Sample{At: e.WindowEnd, Y: e.Zeta, Sigma: e.ZetaSigma, Cov: cov})
	based := false
	if evF == health.Established || evZ == health.Established {
		fs, zs := a.fn.Status(), a.zeta.Status()
		a.base = &wire.Baseline{Fn: fs.Mean, Zeta: zs.Mean, Windows: fs.BaselinePoints, Since: fs.BaselineTo}
		based = true
	}
	alarm := a.fn.Status().State == health.Alarm || a.zeta.Status().State == health.Alarm
	if alarm == a.raised {
		return nil, based
	}
	a.raised = alarm
	charts := a.readings()
	state, reasons := wire.AlertRaised, []string{}
	if alarm {
		for _, c := range charts {
			if c.State == string(health.Alarm) {
				reasons = append(reasons, fmt.Sprintf("%s: the moving average of its residual from the baseline (expected %.5g, last %.5g) is %.1f spreads out, beyond the limit %.3g for %d points",
					quantityName(c.Quantity), c.Expected, c.Last, c.Statistic, c.Limit, max(1, a.cfg.Chart.Consecutive)))
			}
		}
	} else {
		state = wire.AlertCleared
		reasons = append(reasons, "f_n and ζ back within the charts' clear level")
	}
	al := &wire.Alert{Schema: wire.SchemaAlert, Camera: a.camera, Time: time.Now().UTC(), State: state, Reasons: reasons,
		Fn: e.Fn, Zeta: e.Zeta, Windows: max(1, a.cfg.Chart.Consecutive), WindowStart: e.WindowStart, WindowEnd: e.WindowEnd, Charts: charts}
	if a.base != nil {
		al.Baseline = *a.base
	}
	if c := charts[0]; c.Expected != 0 {
		al.FnDrift = math.Abs(c.Last-c.Expected) / math.Abs(c.Expected)
	}
	if c := charts[1]; c.Expected != 0 {
		al.ZetaDrift = math.Abs(c.Last-c.Expected) / math.Abs(c.Expected)
	}
	return al, based
}

// readings are the charts' states as wire carries them (nil for the
// fixed rule).
func (a *alerter) readings() []wire.ChartReading {
	if a == nil || a.fn == nil {
		return nil
	}
	return []wire.ChartReading{chartReading("fn_hz", a.fn.Status()), chartReading("zeta", a.zeta.Status())}
}

func chartReading(q string, s health.Status) wire.ChartReading {
	return wire.ChartReading{Quantity: q, State: string(s.State), Statistic: s.Statistic, Z: s.Z, Limit: s.Limit, Clear: s.Clear, Lambda: s.Lambda,
		Expected: s.Expected, Last: s.Last, ResidualSD: s.ResidualSD, SpreadZ: s.SpreadZ, Mean: s.Mean, Coefficients: s.Coefficients,
		BaselinePoints: s.BaselinePoints, BaselineFrom: s.BaselineFrom, BaselineTo: s.BaselineTo, Points: s.Points, Skipped: s.Skipped}
}

func quantityName(q string) string {
	if q == "zeta" {
		return "damping ratio ζ"
	}
	return "natural frequency f_n"
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
