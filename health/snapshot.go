package health

import (
	"fmt"
	"slices"
	"time"
)

// Snapshot is a chart's whole state, for a restart: a baseline takes a
// week to learn and must not be lost to one.
type Snapshot struct {
	// The interval being filled.
	Cur    time.Time          `json:"cur,omitzero"`
	N      int                `json:"n,omitempty"`
	SY     float64            `json:"sy,omitempty"`
	SV     float64            `json:"sv,omitempty"`
	CovSum map[string]float64 `json:"cov_sum,omitempty"`
	CovN   map[string]int     `json:"cov_n,omitempty"`
	// Learning are the points learned so far (before the baseline).
	Learning []PointSnapshot `json:"learning,omitempty"`
	// The baseline, once established.
	Terms    []Term    `json:"terms"`
	Coef     []float64 `json:"coef,omitempty"`
	S        float64   `json:"s,omitempty"`
	SpreadZ  float64   `json:"spread_z,omitempty"`
	MeanV    float64   `json:"mean_v,omitempty"`
	Mean     float64   `json:"mean,omitempty"`
	Clip     float64   `json:"clip,omitempty"`
	BaseN    int       `json:"base_n,omitempty"`
	BaseFrom time.Time `json:"base_from,omitzero"`
	UpTo     time.Time `json:"up_to,omitzero"`
	// The chart.
	Z        float64       `json:"z"`
	Run      int           `json:"run,omitempty"`
	State    State         `json:"state"`
	Points   int           `json:"points,omitempty"`
	Skipped  int           `json:"skipped,omitempty"`
	Last     PointSnapshot `json:"last"`
	Expected float64       `json:"expected,omitempty"`
}

// PointSnapshot is one point of a Snapshot.
type PointSnapshot struct {
	At  time.Time          `json:"at,omitzero"`
	Y   float64            `json:"y"`
	V   float64            `json:"v"`
	Cov map[string]float64 `json:"cov,omitempty"`
}

func snapPoint(p point) PointSnapshot { return PointSnapshot{At: p.at, Y: p.y, V: p.v, Cov: p.cov} }
func (p PointSnapshot) point() point  { return point{at: p.At, y: p.Y, v: p.V, cov: p.Cov} }

// Snapshot returns the chart's state.
func (c *Chart) Snapshot() Snapshot {
	s := Snapshot{Cur: c.cur, N: c.n, SY: c.sy, SV: c.sv, CovSum: c.covSum, CovN: c.covN, Terms: c.opt.Terms,
		S: c.s, SpreadZ: c.sdZ, MeanV: c.meanV, Mean: c.mean, Clip: c.clip, BaseN: c.baseN, BaseFrom: c.baseFrom, UpTo: c.upTo,
		Z: c.z, Run: c.run, State: c.state, Points: c.points, Skipped: c.skipped, Last: snapPoint(c.last), Expected: c.expected}
	for _, p := range c.learning {
		s.Learning = append(s.Learning, snapPoint(p))
	}
	if c.model != nil {
		s.Coef = slices.Clone(c.model.Coef)
	}
	return s
}

// Restore sets the chart to s. It fails, changing nothing, when s was
// learned on other terms than the chart's (a baseline regressed on other
// covariates reads another residual) or does not hold together.
func (c *Chart) Restore(s Snapshot) error {
	if !slices.Equal(s.Terms, c.opt.Terms) && (len(s.Terms) > 0 || len(c.opt.Terms) > 0) {
		return fmt.Errorf("health: the chart was learned on the terms %v, not %v: it learns again", s.Terms, c.opt.Terms)
	}
	switch s.State {
	case Learning:
		if s.Coef != nil {
			return fmt.Errorf("health: a learning chart with a baseline")
		}
	case Normal, Alarm:
		if len(s.Coef) != len(c.opt.Terms)+1 || !(s.S > 0) || !(s.SpreadZ > 0) || !(s.Clip > 0) {
			return fmt.Errorf("health: a baseline of %d coefficients, residual spread %v, Z spread %v, clip %v: not one the chart made", len(s.Coef), s.S, s.SpreadZ, s.Clip)
		}
	default:
		return fmt.Errorf("health: state %q", s.State)
	}
	for _, v := range append([]float64{s.SY, s.SV, s.S, s.SpreadZ, s.MeanV, s.Mean, s.Clip, s.Z, s.Expected}, s.Coef...) {
		if !isFinite(v) {
			return fmt.Errorf("health: a snapshot holding %v", v)
		}
	}
	c.cur, c.n, c.sy, c.sv, c.covSum, c.covN = s.Cur, s.N, s.SY, s.SV, s.CovSum, s.CovN
	if c.covSum == nil {
		c.covSum, c.covN = map[string]float64{}, map[string]int{}
	}
	c.learning = nil
	for _, p := range s.Learning {
		c.learning = append(c.learning, p.point())
	}
	c.model = nil
	if s.Coef != nil {
		c.model = &Model{Terms: c.opt.Terms, Coef: slices.Clone(s.Coef)}
	}
	c.s, c.sdZ, c.meanV, c.mean, c.clip = s.S, s.SpreadZ, s.MeanV, s.Mean, s.Clip
	c.baseN, c.baseFrom, c.upTo = s.BaseN, s.BaseFrom, s.UpTo
	c.z, c.run, c.state, c.points, c.skipped = s.Z, s.Run, s.State, s.Points, s.Skipped
	c.last, c.expected = s.Last.point(), s.Expected
	return nil
}
