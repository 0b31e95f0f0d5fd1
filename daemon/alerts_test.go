package daemon

import (
	"log/slog"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/wire"
)

// TestAlerter: a baseline from the first windows, an alert raised after
// two drifting windows in a row and cleared after two back; an alert
// carries the window that raised it, for its id.
func TestAlerter(t *testing.T) {
	a := newAlerter("c", config.Alerts{BaselineWindows: 3, FnDrift: 0.05, ZetaDrift: 0.5, Consecutive: 2}, nil)
	est := func(fn, zeta float64) *wire.Estimate {
		end := time.Now()
		return &wire.Estimate{Camera: "c", Fn: fn, Zeta: zeta, WindowStart: end.Add(-time.Second), WindowEnd: end}
	}
	for i, fn := range []float64{1.0, 1.02, 0.98} {
		al, based := a.observe(est(fn, 0.02))
		if al != nil || based != (i == 2) {
			t.Fatalf("baseline window %d: alert %v based %v", i, al, based)
		}
	}
	if math.Abs(a.base.Fn-1) > 1e-12 {
		t.Fatalf("baseline f_n %g", a.base.Fn)
	}
	if al, _ := a.observe(est(0.9, 0.02)); al != nil {
		t.Fatal("alert after one drifting window; want two")
	}
	if al, _ := a.observe(est(1.0, 0.02)); al != nil {
		t.Fatal("an interrupted drift raised an alert")
	}
	a.observe(est(0.9, 0.02))
	e := est(0.91, 0.02)
	al, _ := a.observe(e)
	if al == nil || al.State != wire.AlertRaised || math.Abs(al.FnDrift-0.09) > 1e-9 {
		t.Fatalf("after two drifting windows: %+v", al)
	}
	if want := wire.MsgID("", "c", "alert-raised", e.WindowStart, e.WindowEnd); al.ID() != want {
		t.Errorf("alert id %s, want %s (its window's)", al.ID(), want)
	}
	if al, _ := a.observe(est(0.9, 0.02)); al != nil {
		t.Fatal("raised twice")
	}
	a.observe(est(1.0, 0.021))
	if al, _ := a.observe(est(1.0, 0.02)); al == nil || al.State != "cleared" {
		t.Fatalf("not cleared: %+v", al)
	}
	if al, _ := a.observe(est(1.0, 0.05)); al != nil {
		t.Fatal("ζ drift alerted after one window")
	}
	if al, _ := a.observe(est(1.0, 0.05)); al == nil || al.State != "raised" {
		t.Fatalf("ζ drift of 150 %% not raised: %+v", al)
	}
}

// The month through a line's reporter: certified estimates every
// 10 min of a structure whose frequency follows the temperature
// (f = 1.000·(1 − 0.002·(T − 15 °C)), T ±10 °C a day, σ 0.1 %), the
// temperature from the environment, a −1 % step on day 20 undone on
// day 26, and the process restarted on day 12 (the charts come back from
// charts.json). No alert before the step, one raised within 6 h of it,
// cleared once it is undone; the alerts carry the charts' statistic and
// limits.
func TestChartAlertsMonthAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	cfg := config.Default().Alerts
	cfg.Chart.Terms = []string{"temperature"}
	env := newEnvironment(cfg.Covariates, log)
	reporterFor := func() *reporter {
		c := &reporter{log: log, dir: dir, camera: "bridge", alerts: newAlerter("bridge", cfg, nil)}
		c.alerts.env = env
		c.restoreCharts(loadCharts(dir, log))
		return c
	}
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	step, undo := t0.Add(19*24*time.Hour), t0.Add(25*24*time.Hour)
	c := reporterFor()
	var raised, cleared []*wire.Alert
	for k := 0; k < 30*24*6; k++ {
		at := t0.Add(time.Duration(k) * 10 * time.Minute)
		if at.Equal(t0.Add(11 * 24 * time.Hour)) {
			c = reporterFor() // a restart: a new reporter from the state directory
			if st := c.alerts.fn.Status(); st.State != "normal" || st.BaselinePoints == 0 {
				t.Fatalf("after the restart the f_n chart is %+v, want its baseline back", st)
			}
		}
		T := 15 + 10*math.Sin(2*math.Pi*(at.Sub(t0).Hours()-10)/24)
		if err := env.set("temperature", T, at); err != nil {
			t.Fatal(err)
		}
		f := 1 - 0.002*(T-15)
		if !at.Before(step) && at.Before(undo) {
			f *= 0.99
		}
		f *= 1 + 0.001*rng.NormFloat64()
		e := &wire.Estimate{Camera: "bridge", WindowStart: at.Add(-time.Minute), WindowEnd: at, Fn: f, FnSigma: 0.001 * f,
			Zeta: 0.01 * (1 + 0.05*rng.NormFloat64()), ZetaSigma: 0.0005}
		al, _ := c.alerts.observe(e)
		c.saveCharts()
		switch {
		case al == nil:
		case al.State == wire.AlertRaised:
			raised = append(raised, al)
		default:
			cleared = append(cleared, al)
		}
	}
	for _, a := range append(raised, cleared...) {
		t.Logf("%s at %v: %q; f_n chart %+v", a.State, a.WindowEnd, a.Reasons, a.Charts[0])
	}
	if len(raised) != 1 || raised[0].WindowEnd.Before(step) || raised[0].WindowEnd.Sub(step) > 6*time.Hour {
		t.Fatalf("raised %d alerts, want one within 6 h of the step at %v", len(raised), step)
	}
	if len(cleared) != 1 || cleared[0].WindowEnd.Before(undo) || cleared[0].WindowEnd.Sub(undo) > 12*time.Hour {
		t.Errorf("cleared %d alerts, want one within 12 h of the undo at %v", len(cleared), undo)
	}
	ch := raised[0].Charts[0]
	if ch.Quantity != "fn_hz" || ch.State != "alarm" || !(ch.Statistic > ch.Limit) || ch.BaselinePoints < 24 || ch.Coefficients["temperature"] > -0.0015 {
		t.Errorf("the raised alert's f_n chart: %+v", ch)
	}
}
