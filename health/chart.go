package health

import (
	"fmt"
	"math"
	"time"
)

// Defaults of Options.
const (
	DefaultBaseline    = 7 * 24 * time.Hour
	DefaultInterval    = time.Hour
	DefaultMinPoints   = 24
	DefaultLambda      = 0.3
	DefaultLimit       = 4.0
	DefaultClear       = 2.5
	DefaultClip        = 2.0
	DefaultConsecutive = 2
)

// Options tune a Chart; zero values take the defaults.
type Options struct {
	// Baseline is how long the chart learns before it judges: long
	// enough to see the environment's swings (a week sees every hour of
	// the day seven times, and several weathers).
	Baseline time.Duration
	// Interval is the chart's step: the estimates of each interval are
	// averaged into one point (successive windows overlap and are not
	// independent; an hour's mean is).
	Interval time.Duration
	// MinPoints is the fewest points a baseline is fitted to.
	MinPoints int
	// Lambda is the moving average's weight λ ∈ (0, 1]: smaller
	// remembers longer, catching smaller shifts later.
	Lambda float64
	// Limit is how many of Z's baseline spreads away it alarms (L), and
	// Clear how close it must come back to clear.
	Limit, Clear float64
	// Clip bounds each standardised residual before it enters the
	// average, at Clip times the alarm level (Limit times Z's baseline
	// spread): a change of ten spreads and one of three alarm alike, and
	// the average does not wind up through a long alarm — it clears
	// within hours of the structure's return (unclipped, a 1 % drop at
	// 0.1 % noise took 18–25 h to clear). Relative to the alarm level, not
	// to the residual's spread: where Z's spread is wide (a daily cycle no
	// covariate explains) a fixed clip would cap Z below its limit.
	Clip float64
	// Consecutive is how many points in a row beyond the limit raise the
	// alarm, and within Clear clear it.
	Consecutive int
	// Terms are the regressors on the environment (none: the baseline
	// is the mean, its spread the whole scatter the chart saw).
	Terms []Term
}

func (o Options) withDefaults() Options {
	if o.Baseline <= 0 {
		o.Baseline = DefaultBaseline
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.MinPoints <= 0 {
		o.MinPoints = DefaultMinPoints
	}
	if !(o.Lambda > 0 && o.Lambda <= 1) {
		o.Lambda = DefaultLambda
	}
	if !(o.Limit > 0) {
		o.Limit = DefaultLimit
	}
	if !(o.Clear > 0) || o.Clear >= o.Limit {
		o.Clear = math.Min(DefaultClear, o.Limit/2)
	}
	if !(o.Clip > 0) {
		o.Clip = DefaultClip
	}
	if o.Consecutive <= 0 {
		o.Consecutive = DefaultConsecutive
	}
	return o
}

// Validate reports the first option out of range, naming it.
func (o Options) Validate() error {
	if o.Lambda < 0 || o.Lambda > 1 {
		return fmt.Errorf("health: lambda %g: want 0 < λ ≤ 1", o.Lambda)
	}
	if o.Limit < 0 || o.Clear < 0 || (o.Limit > 0 && o.Clear >= o.Limit) {
		return fmt.Errorf("health: limit %g, clear %g: want 0 < clear < limit", o.Limit, o.Clear)
	}
	if o.Clip < 0 || o.Consecutive < 0 || o.MinPoints < 0 || o.Baseline < 0 || o.Interval < 0 {
		return fmt.Errorf("health: clip %g, consecutive %d, min points %d, baseline %v, interval %v: none may be negative",
			o.Clip, o.Consecutive, o.MinPoints, o.Baseline, o.Interval)
	}
	_, err := Covariates(o.Terms)
	return err
}

// Sample is one certified estimate of the charted quantity.
type Sample struct {
	At time.Time
	// Y is the estimate and Sigma its standard error.
	Y, Sigma float64
	// Cov holds the covariates' values at At (those known).
	Cov map[string]float64
}

// State is the chart's.
type State string

// The chart's states.
const (
	Learning State = "learning"
	Normal   State = "normal"
	Alarm    State = "alarm"
)

// Event is what a point did to the chart.
type Event string

// Events of Observe.
const (
	None        Event = ""
	Established Event = "established"
	Raised      Event = "raised"
	Cleared     Event = "cleared"
)

// point is an interval's mean.
type point struct {
	at  time.Time // the interval's start
	y   float64
	v   float64 // the mean's variance from the estimates' σ: Σσ²/n²
	cov map[string]float64
}

// Chart is one quantity's control chart. Not safe for concurrent use.
type Chart struct {
	opt   Options
	names []string // the covariates the terms read
	// The interval being filled.
	cur      time.Time
	n        int
	sy, sv   float64
	covSum   map[string]float64
	covN     map[string]int
	learning []point
	// The baseline, once established.
	model          *Model
	s, sdZ, meanV  float64
	mean           float64 // of the baseline's points
	clip           float64 // in residual spreads
	baseN          int
	baseFrom, upTo time.Time
	// The chart.
	z        float64
	run      int
	state    State
	points   int
	skipped  int
	last     point
	expected float64
}

// New returns a chart that starts learning. It fails on options out of
// range.
func New(opt Options) (*Chart, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	names, _ := Covariates(opt.Terms)
	return &Chart{opt: opt.withDefaults(), names: names, state: Learning}, nil
}

// Observe takes a certified estimate, in time order (an earlier one
// than the interval being filled is dropped). It returns what the
// interval it closed, if any, did to the chart.
func (c *Chart) Observe(s Sample) Event {
	if !isFinite(s.Y) {
		return None
	}
	at := s.At.Truncate(c.opt.Interval)
	if c.n > 0 && at.Before(c.cur) {
		return None
	}
	ev := None
	if c.n > 0 && at.After(c.cur) {
		ev = c.close()
	}
	if c.n == 0 {
		c.cur, c.covSum, c.covN = at, map[string]float64{}, map[string]int{}
	}
	c.n++
	c.sy += s.Y
	if isFinite(s.Sigma) {
		c.sv += s.Sigma * s.Sigma
	}
	for _, name := range c.names {
		if v, ok := s.Cov[name]; ok && isFinite(v) {
			c.covSum[name] += v
			c.covN[name]++
		}
	}
	return ev
}

// Flush closes the interval being filled (at the end of a replay).
func (c *Chart) Flush() Event {
	if c.n == 0 {
		return None
	}
	return c.close()
}

// close turns the interval into a point and charts it.
func (c *Chart) close() Event {
	p := point{at: c.cur, y: c.sy / float64(c.n), v: c.sv / float64(c.n*c.n), cov: map[string]float64{}}
	complete := true
	for _, name := range c.names {
		if c.covN[name] == 0 {
			complete = false
			break
		}
		p.cov[name] = c.covSum[name] / float64(c.covN[name])
	}
	c.n, c.sy, c.sv = 0, 0, 0
	if !complete {
		// A point without its covariates cannot be judged against a
		// baseline that reads them.
		c.skipped++
		return None
	}
	if c.model == nil {
		c.learning = append(c.learning, p)
		if p.at.Sub(c.learning[0].at) >= c.opt.Baseline && len(c.learning) >= c.opt.MinPoints {
			if err := c.establish(); err == nil {
				return Established
			}
		}
		return None
	}
	return c.chart(p)
}

// establish fits the baseline to the points learned: the regression,
// its residual spread s, and the spread of Z over them.
func (c *Chart) establish() error {
	m, err := fitModel(c.opt.Terms, c.learning)
	if err != nil {
		// Keep learning: a covariate that has not yet varied may.
		return err
	}
	var ss, sv float64
	for _, p := range c.learning {
		yh, _ := m.At(p.cov)
		ss += (p.y - yh) * (p.y - yh)
		sv += p.v
	}
	n := len(c.learning)
	s := math.Sqrt(ss / float64(n-len(m.Coef)))
	if !(s > 0) {
		s = math.Max(1e-12, 1e-9*math.Abs(m.Coef[0]))
	}
	c.model, c.s, c.meanV = m, s, sv/float64(n)
	for _, p := range c.learning {
		c.mean += p.y / float64(n)
	}
	// Z over the baseline, unclipped: its spread after the average has
	// settled (1/λ points), never below white noise's √(λ/(2−λ)).
	lam := c.opt.Lambda
	burn := int(math.Ceil(1 / lam))
	var z, zz float64
	k := 0
	zs := make([]float64, n)
	for i, p := range c.learning {
		yh, _ := m.At(p.cov)
		zs[i] = (p.y - yh) / s
		z = lam*zs[i] + (1-lam)*z
		if i >= burn {
			zz += z * z
			k++
		}
	}
	white := math.Sqrt(lam / (2 - lam))
	c.sdZ = white
	if k > 0 {
		c.sdZ = math.Max(white, math.Sqrt(zz/float64(k)))
	}
	c.clip = c.opt.Clip * c.opt.Limit * c.sdZ
	// The chart goes on from the baseline's last Z, clipped as it will
	// be from now on.
	z = 0
	for _, v := range zs {
		z = lam*clip(v, c.clip) + (1-lam)*z
	}
	c.z = z
	c.baseN, c.baseFrom, c.upTo = n, c.learning[0].at, c.learning[n-1].at.Add(c.opt.Interval)
	c.learning = nil
	c.state = Normal
	return nil
}

// chart runs the moving average one point on:
//
//	z = (y − ŷ(c)) / √(s² + max(0, v − v̄)),  Z ← λ·clip(z) + (1 − λ)Z,
//
// v the point's variance from its estimates' σ and v̄ the baseline's
// mean of it (already in s): a point of fewer or less certain estimates
// weighs less.
func (c *Chart) chart(p point) Event {
	yh, _ := c.model.At(p.cov)
	sd := math.Sqrt(c.s*c.s + math.Max(0, p.v-c.meanV))
	c.z = c.opt.Lambda*clip((p.y-yh)/sd, c.clip) + (1-c.opt.Lambda)*c.z
	c.points++
	c.last, c.expected = p, yh
	stat := math.Abs(c.z) / c.sdZ
	switch c.state {
	case Normal:
		if stat > c.opt.Limit {
			c.run++
		} else {
			c.run = 0
		}
		if c.run >= c.opt.Consecutive {
			c.run, c.state = 0, Alarm
			return Raised
		}
	case Alarm:
		if stat < c.opt.Clear {
			c.run++
		} else {
			c.run = 0
		}
		if c.run >= c.opt.Consecutive {
			c.run, c.state = 0, Normal
			return Cleared
		}
	}
	return None
}

// Status is the chart as an operator (and an alert) reads it.
type Status struct {
	State State `json:"state"`
	// Statistic is |Z| over its baseline spread, the number the limits
	// are in; Z is the signed moving average of standardised residuals.
	Statistic float64 `json:"statistic"`
	Z         float64 `json:"z"`
	Limit     float64 `json:"limit"`
	Clear     float64 `json:"clear"`
	Lambda    float64 `json:"lambda"`
	// Expected is the baseline's ŷ at the last point's covariates and
	// Last the point's mean.
	Expected float64 `json:"expected,omitempty"`
	Last     float64 `json:"last,omitempty"`
	// ResidualSD is s, the baseline's residual spread; SpreadZ Z's.
	ResidualSD float64 `json:"residual_sd,omitempty"`
	SpreadZ    float64 `json:"spread_z,omitempty"`
	// Coefficients are β₀ ("const") and each term's.
	Coefficients map[string]float64 `json:"coefficients,omitempty"`
	// Mean is the baseline points' mean.
	Mean float64 `json:"mean,omitempty"`
	// BaselinePoints, BaselineFrom and BaselineTo describe the baseline
	// (while learning, the points learned so far).
	BaselinePoints int       `json:"baseline_points"`
	BaselineFrom   time.Time `json:"baseline_from,omitzero"`
	BaselineTo     time.Time `json:"baseline_to,omitzero"`
	// Points are the points charted since, Skipped those dropped for a
	// missing covariate.
	Points  int `json:"points"`
	Skipped int `json:"skipped"`
}

// Status returns the chart's state.
func (c *Chart) Status() Status {
	st := Status{State: c.state, Limit: c.opt.Limit, Clear: c.opt.Clear, Lambda: c.opt.Lambda, Points: c.points, Skipped: c.skipped}
	if c.model == nil {
		st.BaselinePoints = len(c.learning)
		if len(c.learning) > 0 {
			st.BaselineFrom = c.learning[0].at
		}
		return st
	}
	st.Statistic, st.Z, st.SpreadZ, st.ResidualSD = math.Abs(c.z)/c.sdZ, c.z, c.sdZ, c.s
	st.BaselinePoints, st.BaselineFrom, st.BaselineTo, st.Mean = c.baseN, c.baseFrom, c.upTo, c.mean
	st.Coefficients = map[string]float64{"const": c.model.Coef[0]}
	for k, t := range c.model.Terms {
		st.Coefficients[string(t)] = c.model.Coef[k+1]
	}
	if c.points > 0 {
		st.Expected, st.Last = c.expected, c.last.y
	}
	return st
}

// clip is z within ±k.
func clip(z, k float64) float64 { return math.Max(-k, math.Min(k, z)) }

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
