package daemon

import (
	"fmt"
	"math"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/wire"
)

// alerter keeps a camera's baseline of f_n and ζ (the mean of its first
// certified estimates) and raises an alert when later estimates drift
// beyond the limits for Consecutive certified windows in a row; it clears
// the alert after as many windows back within the limits.
type alerter struct {
	cfg     config.Alerts
	camera  string
	base    *wire.Baseline
	fns, zs []float64
	run     int // consecutive drifting (or, while raised, normal) windows
	raised  bool
}

func newAlerter(camera string, cfg config.Alerts, base *wire.Baseline) *alerter {
	return &alerter{cfg: cfg, camera: camera, base: base}
}

// observe takes a certified estimate. It returns an alert when one is
// raised or cleared, and whether the baseline was just established.
func (a *alerter) observe(e *wire.Estimate) (*wire.Alert, bool) {
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

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
