package daemon

import (
	"github.com/physd/physd/wire"
	"slices"
	"sync"
	"time"
)

// sourceState is a source's state as the goroutine running it sets it
// (starting, waiting, online, offline, ended, stopped) and why. It has a
// lock of its own: a zone's line reads its camera's without taking any
// lock of that line.
type sourceState struct {
	mu    sync.Mutex
	state wire.State
	err   string
}

func (s *sourceState) set(state wire.State, err string) {
	s.mu.Lock()
	s.state, s.err = state, err
	s.mu.Unlock()
}

func (s *sourceState) get() (state wire.State, err string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.err
}

// record is what a line has reported, as its status, dashboard and HTTP
// endpoints read it: the reporting stage writes it, under a lock of its
// own (the learning stage only at start, the encoder it restored).
type record struct {
	mu  sync.Mutex
	est *wire.Estimate // latest certified estimate (of mode label 1)
	// modes holds the latest certified estimate of each mode label, for a
	// line whose windows ring in several (label 1's is est too).
	modes    map[int]*wire.Estimate
	diag     *wire.Diagnostic // latest diagnostic
	lastEst  *time.Time
	verdict  map[string]int
	encoder  wire.EncoderInfo
	baseline *wire.Baseline // a copy of the alerter's
	charts   []wire.ChartReading
}

func newRecord() *record { return &record{verdict: map[string]int{}} }

// judged counts a window's verdict and the encoder it was fitted with.
func (r *record) judged(status string, enc wire.EncoderInfo) {
	r.mu.Lock()
	r.verdict[status]++
	r.encoder = enc
	r.mu.Unlock()
}

func (r *record) setEncoder(enc wire.EncoderInfo) {
	r.mu.Lock()
	r.encoder = enc
	r.mu.Unlock()
}

func (r *record) setDiag(d *wire.Diagnostic) {
	r.mu.Lock()
	r.diag = d
	r.mu.Unlock()
}

// setEstimate records a certified estimate: the line's latest (est)
// unless it is about a mode beyond the first, and its mode's.
func (r *record) setEstimate(e *wire.Estimate) {
	end := e.WindowEnd
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastEst = &end
	if e.Mode != nil {
		if r.modes == nil {
			r.modes = map[int]*wire.Estimate{}
		}
		r.modes[e.Mode.Label] = e
		if e.Mode.Label >= 2 {
			return
		}
	}
	r.est = e
}

// modeEstimates are the latest certified estimate of each mode label, by
// label.
func (r *record) modeEstimates() []*wire.Estimate {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*wire.Estimate, 0, len(r.modes))
	for _, e := range r.modes {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *wire.Estimate) int { return a.Mode.Label - b.Mode.Label })
	return out
}

func (r *record) setBaseline(b *wire.Baseline) {
	var c *wire.Baseline
	if b != nil {
		v := *b
		c = &v
	}
	r.mu.Lock()
	r.baseline = c
	r.mu.Unlock()
}

// setCharts keeps the alert charts' readings for the status.
func (r *record) setCharts(c []wire.ChartReading) {
	r.mu.Lock()
	r.charts = c
	r.mu.Unlock()
}

// latest is the latest estimate and diagnostic.
func (r *record) latest() (*wire.Estimate, *wire.Diagnostic) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.est, r.diag
}

// fill copies the record into a status message.
func (r *record) fill(s *wire.Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.Encoder, s.LastEstimate = r.encoder, r.lastEst
	s.Windows = make(map[string]int, len(r.verdict))
	for k, v := range r.verdict {
		s.Windows[k] = v
	}
	if r.baseline != nil {
		b := *r.baseline
		s.Baseline = &b
	}
	s.Charts = slices.Clone(r.charts)
}
