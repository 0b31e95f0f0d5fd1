package modes

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/sim"
)

// A 2-hour stream of releases, a 20 s window every 20 s, whose two modes
// (1.00 and 1.25 Hz at the start) drift 2 % towards each other: each
// window's modes are separated (Separate) and labelled (Tracker). The
// labels never swap: every sighting labelled 1 is the lower mode's,
// every one labelled 2 the upper's, and no third label appears. The
// test prints each label's track every 10 minutes.
func TestTrackerTwoHourDrift(t *testing.T) {
	if testing.Short() {
		t.Skip("360 windows")
	}
	const windows, hop, dur = 360, 20 * time.Second, 20.0
	rng := rand.New(rand.NewPCG(46, 2))
	var tr Tracker
	start := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	var swaps, labels, sightings, missing int
	var lines []string
	last := map[int]float64{}
	for w := range windows {
		frac := float64(w) / float64(windows-1)
		f1, f2 := 1.00*(1+0.02*frac), 1.25*(1-0.02*frac)
		// Some releases excite one mode barely (a twentieth of the other).
		a1, a2 := 0.5+0.5*rng.Float64(), 0.5+0.5*rng.Float64()
		switch rng.IntN(10) {
		case 0:
			a1 = 0.04
		case 1:
			a2 = 0.04
		}
		truth := []sim.Mode{{Fn: f1, Zeta: 0.01, AmplitudePx: a1}, {Fn: f2, Zeta: 0.01, AmplitudePx: a2}}
		x, dt := readout(t, truth, dur, 0.05, uint64(w+1))
		ms, err := Separate(context.Background(), "drift", x, dt, options(t))
		if err != nil {
			t.Fatal(err)
		}
		var seen []Sighting
		for _, m := range ms {
			seen = append(seen, Sighting{Hz: m.Term.Hz(), Certified: m.Verdict.Certified})
		}
		if len(ms) < 2 {
			missing++
		}
		at := start.Add(time.Duration(w) * hop)
		for _, l := range tr.Observe(at, seen) {
			if l.Event == Lost {
				continue
			}
			sightings++
			labels = max(labels, l.Label)
			hz := seen[l.Index].Hz
			truthLabel := 1
			if math.Abs(hz-f2) < math.Abs(hz-f1) {
				truthLabel = 2
			}
			if l.Label != truthLabel {
				swaps++
				t.Errorf("window %d (%s): the mode at %.4f Hz (truth %.4f, %.4f) labelled %d (%s)", w, at.Format("15:04:05"), hz, f1, f2, l.Label, l.Event)
			}
			last[l.Label] = l.Hz
		}
		if w%30 == 0 || w == windows-1 {
			lines = append(lines, fmt.Sprintf("%s  truth %.4f %.4f Hz  label 1 %.4f Hz  label 2 %.4f Hz  (%d modes this window)", at.Format("15:04"), f1, f2, last[1], last[2], len(ms)))
		}
	}
	t.Logf("each mode's track:\n%s", strings.Join(lines, "\n"))
	t.Logf("%d windows, %d sightings, %d windows with fewer than two modes, %d labels, %d swaps", windows, sightings, missing, labels, swaps)
	if labels != 2 {
		t.Errorf("%d labels, want 2", labels)
	}
}

// A label not seen for Lost is retired, and a mode seen again later gets
// a new one; a certified sighting keeps the label an uncertified one
// near it would otherwise take.
func TestTrackerLostAndCertifiedFirst(t *testing.T) {
	tr := Tracker{Lost: time.Minute}
	t0 := time.Unix(0, 0)
	ls := tr.Observe(t0, []Sighting{{Hz: 2, Certified: true}})
	if len(ls) != 1 || ls[0].Event != Appeared || ls[0].Label != 1 {
		t.Fatalf("first sighting: %+v", ls)
	}
	// An uncertified sighting nearer the track's frequency does not take
	// the label from a certified one.
	ls = tr.Observe(t0.Add(10*time.Second), []Sighting{{Hz: 2.001}, {Hz: 2.05, Certified: true}})
	for _, l := range ls {
		if l.Index == 1 && l.Label != 1 || l.Index == 0 && l.Label == 1 {
			t.Errorf("labels %+v: the certified sighting (index 1) should keep label 1", ls)
		}
	}
	ls = tr.Observe(t0.Add(5*time.Minute), nil)
	var lost int
	for _, l := range ls {
		if l.Event == Lost {
			lost++
		}
	}
	if lost != 2 {
		t.Errorf("after 5 min unseen: %+v, want both labels lost", ls)
	}
	ls = tr.Observe(t0.Add(6*time.Minute), []Sighting{{Hz: 2, Certified: true}})
	if len(ls) != 1 || ls[0].Event != Appeared || ls[0].Label != 3 {
		t.Errorf("a mode seen again after its label was retired: %+v, want a new label 3", ls)
	}
}

// State and Restore carry a tracker's labels over a restart; Restore
// refuses labels the tracker could not have given and changes nothing.
func TestTrackerStateRestore(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	var a Tracker
	a.Observe(t0, []Sighting{{Hz: 1, Certified: true}, {Hz: 2.5, Certified: true}})
	var b Tracker
	if err := b.Restore(a.State(), t0.Add(5*time.Hour)); err != nil {
		t.Fatal(err)
	}
	got := b.Observe(t0.Add(5*time.Hour+time.Minute), []Sighting{{Hz: 2.52, Certified: true}, {Hz: 3.3, Certified: true}})
	if len(got) != 2 || got[0].Label != 2 || got[0].Event != Seen || got[1].Label != 3 || got[1].Event != Appeared {
		t.Errorf("after a restore: %+v, want label 2 seen and 3 appeared", got)
	}
	for _, bad := range []TrackerState{
		{Next: 1, Live: []TrackState{{Label: 2, Hz: 1}}},
		{Next: 2, Live: []TrackState{{Label: 1, Hz: 1}, {Label: 1, Hz: 2}}},
		{Next: 1, Live: []TrackState{{Label: 0, Hz: 1}}},
		{Next: 1, Live: []TrackState{{Label: 1, Hz: math.Inf(1)}}},
		{Next: 1, Live: []TrackState{{Label: 1, Hz: -1}}},
	} {
		before := b.State()
		if err := b.Restore(bad, t0); err == nil {
			t.Errorf("restored %+v", bad)
		}
		if after := b.State(); after.Next != before.Next || len(after.Live) != len(before.Live) {
			t.Errorf("a refused restore changed the tracker: %+v → %+v", before, after)
		}
	}
}
