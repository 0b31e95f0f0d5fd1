package health

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// replay is the month: a structure whose frequency follows the
// temperature, f = 1.000·(1 − 0.002·(T − 15 °C)), T swinging ±10 °C a
// day (coldest at 04:00) with a little weather on top, estimated every
// 10 min with σ 0.1 %; from day step to day undo (days counted from 1)
// the frequency is 1 % lower, stepping by drop.
type replay struct {
	days       int
	step, undo float64 // days
	drop       float64
	seed       uint64
}

type reading struct {
	at   time.Time
	f, T float64
}

func (r replay) readings() []reading {
	rng := rand.New(rand.NewPCG(r.seed, 3))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var out []reading
	weather := 0.0
	for k := 0; k < r.days*24*6; k++ {
		at := t0.Add(time.Duration(k) * 10 * time.Minute)
		day := at.Sub(t0).Hours() / 24
		// A slow random walk of the day's mean temperature (±2 °C).
		weather = 0.999*weather + 0.05*rng.NormFloat64()
		T := 15 + weather + 10*math.Sin(2*math.Pi*(day-10.0/24))
		f := 1.000 * (1 - 0.002*(T-15))
		if day >= r.step-1 && day < r.undo-1 {
			f *= 1 - r.drop
		}
		f *= 1 + 0.001*rng.NormFloat64()
		out = append(out, reading{at: at, f: f, T: T})
	}
	return out
}

// run charts the readings (with the temperature or without) and returns
// the times of the alarms raised and cleared.
func (r replay) run(t *testing.T, withT bool) (raised, cleared []time.Time, c *Chart) {
	t.Helper()
	opt := Options{}
	if withT {
		opt.Terms = []Term{"temperature"}
	}
	c, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, rd := range r.readings() {
		s := Sample{At: rd.at, Y: rd.f, Sigma: 0.001 * rd.f}
		if withT {
			s.Cov = map[string]float64{"temperature": rd.T}
		}
		switch c.Observe(s) {
		case Raised:
			raised = append(raised, rd.at)
		case Cleared:
			cleared = append(cleared, rd.at)
		}
	}
	return raised, cleared, c
}

// fixedRule is the old alert: the mean of the first five estimates is the
// baseline, and three estimates in a row further than limit from it
// alarm. It returns on how many days it raised.
func fixedRule(rds []reading, limit float64) (days map[int]bool) {
	days = map[int]bool{}
	var base float64
	for _, rd := range rds[:5] {
		base += rd.f / 5
	}
	run := 0
	t0 := rds[0].at
	for _, rd := range rds[5:] {
		if math.Abs(rd.f-base)/base > limit {
			run++
		} else {
			run = 0
		}
		if run >= 3 {
			days[int(rd.at.Sub(t0).Hours()/24)+1] = true
		}
	}
	return days
}

// The 30-day replay. With the temperature given, the chart is
// quiet for the 19 days before a −1 % step (its first week learning the
// baseline), alarms within 6 h of the step (measured 3–4 h: two hourly
// points beyond the limit) and clears once the step is undone, within
// 12 h (measured 4–8 h: the average's memory, 1/λ points); the old 5 %
// rule never sees the step, a fixed 1 % rule alarms every day.
func TestReplayMonthWithTemperature(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	stepAt := t0.Add(19 * 24 * time.Hour) // day 20, 00:00
	undoAt := t0.Add(25 * 24 * time.Hour) // day 26
	for seed := uint64(1); seed <= 5; seed++ {
		r := replay{days: 30, step: 20, undo: 26, drop: 0.01, seed: seed}
		raised, cleared, c := r.run(t, true)
		st := c.Status()
		t.Logf("seed %d: raised %v, cleared %v; baseline %d points, f = %.5f %+.6f·T, s %.3g, Z spread %.3g",
			seed, raised, cleared, st.BaselinePoints, st.Coefficients["const"], st.Coefficients["temperature"], st.ResidualSD, st.SpreadZ)
		if len(raised) != 1 {
			t.Errorf("seed %d: %d alarms raised, want 1", seed, len(raised))
			continue
		}
		if d := raised[0].Sub(stepAt); d < 0 || d > 6*time.Hour {
			t.Errorf("seed %d: raised %v after the step, want within 6 h", seed, d)
		}
		if len(cleared) != 1 || cleared[0].Before(undoAt) || cleared[0].Sub(undoAt) > 12*time.Hour {
			t.Errorf("seed %d: cleared %v, want once within 12 h of the undo at %v", seed, cleared, undoAt)
		}
		if b := st.Coefficients["temperature"]; math.Abs(b/-0.002-1) > 0.1 {
			t.Errorf("seed %d: temperature coefficient %.5f, want −0.002 within 10 %%", seed, b)
		}
		if seed == 1 {
			rds := r.readings()
			five, one := fixedRule(rds, 0.05), fixedRule(rds, 0.01)
			t.Logf("the old rule at 5 %%: alarms on %d days; at 1 %%: on %d of 30 days", len(five), len(one))
			if len(five) != 0 {
				t.Errorf("the 5 %% rule alarmed on days %v: the step is 1 %%", five)
			}
			if len(one) < 20 {
				t.Errorf("the 1 %% rule alarmed on %d days, expected nearly every day of a ±2 %% daily swing", len(one))
			}
		}
	}
}

// Without the temperature the baseline is the mean and its spread the
// daily swing (±2 % here): the chart stays quiet through the month, and
// its limits, widened by that swing, let a 1 % step pass — but not a
// 4 % one, caught within a day (measured: 1–2 % never alarm; 3 %
// alarms and clears with the daily cycle; 4 % within 15–16 h, 8 % 5 h).
func TestReplayMonthWithoutTemperature(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	stepAt := t0.Add(19 * 24 * time.Hour)
	for seed := uint64(1); seed <= 5; seed++ {
		quiet := replay{days: 30, step: 20, undo: 26, drop: 0.01, seed: seed}
		raised, _, c := quiet.run(t, false)
		st := c.Status()
		t.Logf("seed %d, 1 %% step: raised %v; s %.3g (the daily swing), Z spread %.3g", seed, raised, st.ResidualSD, st.SpreadZ)
		if len(raised) != 0 {
			t.Errorf("seed %d: without the temperature a 1 %% step alarmed at %v; its limits are wider than that", seed, raised)
		}
		big := replay{days: 30, step: 20, undo: 26, drop: 0.04, seed: seed}
		raised, _, _ = big.run(t, false)
		t.Logf("seed %d, 4 %% step: raised %v", seed, raised)
		if len(raised) == 0 || raised[0].Before(stepAt) || raised[0].Sub(stepAt) > 24*time.Hour {
			t.Errorf("seed %d: a 4 %% step raised %v, want within a day of %v", seed, raised, stepAt)
		}
	}
}

// Options out of range are refused by name; a covariate missing from an
// interval's estimates keeps that point off the chart.
func TestChartOptionsAndMissingCovariates(t *testing.T) {
	for _, o := range []Options{{Lambda: 1.5}, {Limit: 2, Clear: 3}, {Terms: []Term{"a*"}}} {
		if _, err := New(o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	c, err := New(Options{Terms: []Term{"temperature", "temperature^2"}, Baseline: time.Hour, MinPoints: 4, Interval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for k := range 120 {
		s := Sample{At: t0.Add(time.Duration(k) * time.Minute), Y: 1, Sigma: 0.001}
		if k%2 == 0 {
			T := float64(k % 7)
			s.Cov = map[string]float64{"temperature": T}
			s.Y = 1 - 0.002*T + 0.0001*T*T
		}
		c.Observe(s)
	}
	st := c.Status()
	if st.Skipped < 55 || st.State != Normal {
		t.Errorf("status %+v: want the 60 points without a temperature skipped and the baseline established", st)
	}
	if b := st.Coefficients["temperature^2"]; math.Abs(b-0.0001) > 1e-6 {
		t.Errorf("quadratic coefficient %g, want 0.0001", b)
	}
}

// A chart restored from its snapshot goes on exactly as the one that
// made it: halfway through the month's replay, and through the JSON a
// restart reads it from.
func TestSnapshotRestore(t *testing.T) {
	r := replay{days: 30, step: 20, undo: 26, drop: 0.01, seed: 1}
	rds := r.readings()
	opt := Options{Terms: []Term{"temperature"}}
	whole, _ := New(opt)
	var want []Event
	for _, rd := range rds {
		want = append(want, whole.Observe(Sample{At: rd.at, Y: rd.f, Sigma: 0.001, Cov: map[string]float64{"temperature": rd.T}}))
	}
	for _, cut := range []int{3 * 24 * 6, 15 * 24 * 6} { // learning, charting
		first, _ := New(opt)
		var got []Event
		for _, rd := range rds[:cut] {
			got = append(got, first.Observe(Sample{At: rd.at, Y: rd.f, Sigma: 0.001, Cov: map[string]float64{"temperature": rd.T}}))
		}
		b, err := json.Marshal(first.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		var snap Snapshot
		if err := json.Unmarshal(b, &snap); err != nil {
			t.Fatal(err)
		}
		again, _ := New(opt)
		if err := again.Restore(snap); err != nil {
			t.Fatal(err)
		}
		for _, rd := range rds[cut:] {
			got = append(got, again.Observe(Sample{At: rd.at, Y: rd.f, Sigma: 0.001, Cov: map[string]float64{"temperature": rd.T}}))
		}
		if !slices.Equal(got, want) {
			t.Errorf("restored at reading %d: events differ from the unbroken chart's", cut)
		}
		if a, b := again.Status(), whole.Status(); a.Statistic != b.Statistic || a.State != b.State {
			t.Errorf("restored at reading %d: status %+v, want %+v", cut, a, b)
		}
	}
	other, _ := New(Options{})
	if err := other.Restore(whole.Snapshot()); err == nil {
		t.Error("a chart without terms took a snapshot regressed on the temperature")
	}
}
