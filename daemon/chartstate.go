package daemon

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/physd/physd/health"
)

// chartState is a line's alert charts as a restart keeps them
// (charts.json beside the baseline): a chart's baseline takes a week to
// learn.
type chartState struct {
	Fn   health.Snapshot `json:"fn_hz"`
	Zeta health.Snapshot `json:"zeta"`
}

func chartsPath(dir string) string { return filepath.Join(dir, "charts.json") }

// loadCharts reads a line's charts (nil: none); an unreadable file is set
// aside and the charts learn again.
func loadCharts(dir string, log *slog.Logger) *chartState {
	path := chartsPath(dir)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var st chartState
	if err := json.Unmarshal(b, &st); err != nil {
		to, _ := setAside(path)
		log.Warn("alert charts unreadable; set aside, they learn again", "moved_to", to, "err", err)
		return nil
	}
	return &st
}

// restoreCharts gives the reporter's alerter its charts back; charts
// learned on other terms (the config changed) learn again.
func (c *reporter) restoreCharts(st *chartState) {
	a := c.alerts
	if st == nil || a == nil || a.fn == nil {
		return
	}
	if err := restoreChartPair(a, *st); err != nil {
		c.log.Warn("alert charts not restored; they learn again", "err", err)
		return
	}
	c.charted = a.chartPoints()
	fs := a.fn.Status()
	c.log.Info("alert charts restored", "state", fs.State, "baseline_points", fs.BaselinePoints, "points", fs.Points)
}

// restoreChartPair sets a's f_n and ζ charts to st's, or leaves both
// learning afresh when either does not take.
func restoreChartPair(a *alerter, st chartState) error {
	err := a.fn.Restore(st.Fn)
	if err == nil {
		err = a.zeta.Restore(st.Zeta)
	}
	if err != nil {
		a.fn, _ = health.New(chartOptions(a.cfg.Chart))
		a.zeta, _ = health.New(chartOptions(a.cfg.Chart))
		return err
	}
	a.raised = a.fn.Status().State == health.Alarm || a.zeta.Status().State == health.Alarm
	return nil
}

// saveCharts writes the charts when one closed a point since the last
// save (an interval's worth: an hour by default), not every window.
func (c *reporter) saveCharts() {
	a := c.alerts
	if a == nil || a.fn == nil || c.dir == "" {
		return
	}
	n := a.chartPoints()
	if n == c.charted {
		return
	}
	c.charted = n
	b, err := json.Marshal(chartState{Fn: a.fn.Snapshot(), Zeta: a.zeta.Snapshot()})
	if err == nil {
		err = writeAtomic(chartsPath(c.dir), func(f *os.File) error { _, err := f.Write(b); return err })
	}
	if err != nil {
		c.log.Error("alert charts not saved", "err", err)
	}
}

// chartPoints counts the points the charts have closed.
func (a *alerter) chartPoints() int {
	if a.fn == nil {
		return 0
	}
	n := 0
	for _, ch := range []*health.Chart{a.fn, a.zeta} {
		st := ch.Status()
		n += st.BaselinePoints + st.Points + st.Skipped
	}
	return n
}

// envOrNil is e as the alerter's reader, nil when e is (an interface
// holding a nil pointer is not nil).
func envOrNil(e *environment) interface {
	At(time.Time) map[string]float64
} {
	if e == nil {
		return nil
	}
	return e
}
