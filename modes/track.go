package modes

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Defaults of Tracker.
const (
	// DefaultGate is the largest relative change of a mode's frequency
	// between the windows it is seen in that keeps its label: 5 %,
	// beyond a structure's daily swing with temperature (1–2 %) and the
	// drifts damage makes, within the spacing of any two modes the
	// certificate tells apart (CloseBandwidths half-power bandwidths are
	// 6ζ; 5 % is ζ ≈ 0.8 %).
	DefaultGate = 0.05
	// DefaultLost is how long a label is kept for a mode not seen.
	DefaultLost = 30 * time.Minute
	// follow is the weight of a new sighting in a track's frequency
	// (an exponentially weighted mean): a drift is followed over a few
	// windows, one window's error is not.
	follow = 0.3
)

// Sighting is a mode seen in one window: its frequency and whether it
// was certified.
type Sighting struct {
	Hz        float64
	Certified bool
}

// Event is what Observe says of a label.
type Event string

// Events of Observe.
const (
	// Seen: the label's mode was seen again in this window.
	Seen Event = "seen"
	// Appeared: a mode no label matched; it has a new label.
	Appeared Event = "appeared"
	// Lost: a label's mode has not been seen for Lost; the label is
	// retired (a mode seen again later gets a new one).
	Lost Event = "lost"
)

// Label is a sighting's (or a lost track's) label and what happened to it.
type Label struct {
	// Label numbers a followed mode from 1, in the order modes were
	// first seen; it is never reused.
	Label int
	// Index is the sighting's index in Observe's argument (−1 for Lost).
	Index int
	Event Event
	// Hz is the track's frequency after this window.
	Hz float64
}

// Tracker keeps each mode's label from window to window by frequency
// continuity. The zero value uses the defaults.
type Tracker struct {
	// Gate and Lost override DefaultGate and DefaultLost when positive.
	Gate float64
	Lost time.Duration
	next int
	live []*track
}

type track struct {
	label int
	hz    float64
	seen  time.Time
}

// Live is how many labels the tracker holds.
func (t *Tracker) Live() int { return len(t.live) }

// Observe labels one window's sightings (at its time) and retires the
// labels not seen for Lost. The labels are matched to the live tracks by
// the assignment that pairs the most sightings within Gate of a track's
// frequency and, among those, has the least total |ln(f/f_track)|;
// certified sightings are matched before uncertified ones, so that a
// refused estimate never takes a label from a certified one. A track's
// frequency follows its matches (an exponentially weighted mean).
func (t *Tracker) Observe(at time.Time, seen []Sighting) []Label {
	gate, lost := t.Gate, t.Lost
	if !(gate > 0) {
		gate = DefaultGate
	}
	if lost <= 0 {
		lost = DefaultLost
	}
	out := make([]Label, 0, len(seen))
	taken := make([]bool, len(t.live))
	assigned := make([]int, len(seen)) // track index, −1: none
	for i := range assigned {
		assigned[i] = -1
	}
	for _, certified := range []bool{true, false} {
		var idx []int
		for i, s := range seen {
			if s.Certified == certified && s.Hz > 0 {
				idx = append(idx, i)
			}
		}
		match := bestMatch(seen, idx, t.live, taken, gate)
		for k, i := range idx {
			if j := match[k]; j >= 0 {
				assigned[i], taken[j] = j, true
			}
		}
	}
	for i, s := range seen {
		if !(s.Hz > 0) {
			continue
		}
		if j := assigned[i]; j >= 0 {
			tr := t.live[j]
			tr.hz = math.Exp((1-follow)*math.Log(tr.hz) + follow*math.Log(s.Hz))
			tr.seen = at
			out = append(out, Label{Label: tr.label, Index: i, Event: Seen, Hz: tr.hz})
			continue
		}
		t.next++
		tr := &track{label: t.next, hz: s.Hz, seen: at}
		t.live = append(t.live, tr)
		out = append(out, Label{Label: tr.label, Index: i, Event: Appeared, Hz: tr.hz})
	}
	t.live = slices.DeleteFunc(t.live, func(tr *track) bool {
		if at.Sub(tr.seen) > lost {
			out = append(out, Label{Label: tr.label, Index: -1, Event: Lost, Hz: tr.hz})
			return true
		}
		return false
	})
	return out
}

// bestMatch pairs the sightings seen[idx[k]] with live tracks not taken,
// each pair within gate: match[k] is the track's index or −1. It
// maximises the pairs, then minimises Σ |ln(f/f_track)|, over every
// assignment (a window holds a few modes: DefaultMaxModes).
func bestMatch(seen []Sighting, idx []int, live []*track, taken []bool, gate float64) []int {
	match := make([]int, len(idx))
	best := make([]int, len(idx))
	for k := range best {
		best[k] = -1
	}
	bestPairs, bestCost := 0, math.Inf(1)
	used := slices.Clone(taken)
	var walk func(k, pairs int, cost float64)
	walk = func(k, pairs int, cost float64) {
		if k == len(idx) {
			if pairs > bestPairs || pairs == bestPairs && cost < bestCost {
				bestPairs, bestCost = pairs, cost
				copy(best, match)
			}
			return
		}
		match[k] = -1
		walk(k+1, pairs, cost)
		for j, tr := range live {
			if used[j] {
				continue
			}
			d := math.Abs(math.Log(seen[idx[k]].Hz / tr.hz))
			if d > math.Log1p(gate) {
				continue
			}
			used[j], match[k] = true, j
			walk(k+1, pairs+1, cost+d)
			used[j], match[k] = false, -1
		}
	}
	walk(0, 0, 0)
	return best
}

// TrackerState is a Tracker's labels as a restart keeps them
// (Tracker.State, Tracker.Restore).
type TrackerState struct {
	// Next is the last label given; labels are never reused.
	Next int `json:"next"`
	// Live are the labels followed, with their frequencies.
	Live []TrackState `json:"live"`
}

// TrackState is one followed label.
type TrackState struct {
	Label int     `json:"label"`
	Hz    float64 `json:"hz"`
}

// State returns the tracker's labels.
func (t *Tracker) State() TrackerState {
	s := TrackerState{Next: t.next, Live: make([]TrackState, len(t.live))}
	for i, tr := range t.live {
		s.Live[i] = TrackState{Label: tr.label, Hz: tr.hz}
	}
	return s
}

// Restore sets the tracker's labels to s's, each as last seen at at: the
// time a process was down is no evidence that a mode is gone. It fails,
// changing nothing, when a label is not positive, beyond Next or
// repeated, or a frequency is not positive and finite.
func (t *Tracker) Restore(s TrackerState, at time.Time) error {
	seen := map[int]bool{}
	live := make([]*track, 0, len(s.Live))
	for _, l := range s.Live {
		if l.Label < 1 || l.Label > s.Next || seen[l.Label] {
			return fmt.Errorf("modes: restore: label %d (next %d): not a label the tracker could have given", l.Label, s.Next)
		}
		if !(l.Hz > 0) || math.IsInf(l.Hz, 0) {
			return fmt.Errorf("modes: restore: label %d at %g Hz: want a positive frequency", l.Label, l.Hz)
		}
		seen[l.Label] = true
		live = append(live, &track{label: l.Label, hz: l.Hz, seen: at})
	}
	t.next, t.live = s.Next, live
	return nil
}
