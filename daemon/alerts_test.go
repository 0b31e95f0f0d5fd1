package daemon

import (
	"math"
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
