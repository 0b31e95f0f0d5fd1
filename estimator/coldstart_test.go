package estimator

import (
	"context"
	"math"
	"testing"
)

// The backoff's schedule: after two refused cold starts, 1, 2, 4, 8, 16
// … windows are held between tries; a motion energy more than 2× outside
// the range of the refused windows' tries at once, and so does a certified
// window unless the next refusal's energy lies in that range.
func TestColdBackoffSchedule(t *testing.T) {
	var b coldBackoff
	// tries runs n windows of energy e, every cold start refused, and
	// says which were tried.
	tries := func(n int, e float64) []bool {
		out := make([]bool, n)
		for i := range out {
			if !b.hold(e) {
				out[i] = true
				b.tried(e, false)
			}
		}
		return out
	}
	got := tries(24, 1)
	// Tried: windows 0 and 1; then held 1 (2), 2 (4, 5), 4 (7–10), 8
	// (12–19), 16 (21–…).
	want := make([]bool, 24)
	for _, i := range []int{0, 1, 3, 6, 11, 20} {
		want[i] = true
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("window %d: tried %v, want %v (schedule %v)", i, got[i], want[i], got)
		}
	}
	if !tries(1, 2.5)[0] {
		t.Error("motion energy up 2.5×: held back")
	}
	if tries(1, 2.4)[0] {
		t.Error("the same new energy again: tried at once")
	}
	if tries(1, 1)[0] {
		t.Error("back to the first energy, refused before: tried at once")
	}
	if !tries(1, 0.4)[0] {
		t.Error("motion energy below every refused one's by 2.5×: held back")
	}
	// A certified window: refused again at a motion energy inside the
	// range the count ran over (0.4 … 2.5), the count resumes (held, as
	// before it); outside it, two tries and the backoff anew.
	b.reset()
	if got := tries(1, 2.4); got[0] {
		t.Errorf("after a certified window, energy in the refused range: tried at once")
	}
	b.reset()
	if got := tries(3, 6); !got[0] || !got[1] || got[2] {
		t.Errorf("after a certified window, a new energy: %v, want two tries, then the backoff anew", got)
	}
	// The count that certified window ended (at 6) is the one remembered.
	b.reset()
	if got := tries(1, 1); !got[0] {
		t.Error("after a certified window, an energy only an older count had refused: held")
	}
	// A kept cold start ends a count as a certified window does.
	tries(2, 1)
	b.tried(1, true)
	if got := tries(1, 1.5); got[0] {
		t.Error("after a kept cold start, energy in the refused range: tried at once")
	}
}

// A learner on a scene that never certifies: the warm estimate refused,
// cold starts held back, and each window still returns the warm estimate
// with its verdict to report.
func TestLearnerHoldsColdStartsOnARefusingScene(t *testing.T) {
	ctx := context.Background()
	clip := pendulumClip(t, 50, 1.5*math.Pi)
	p, err := LookupPreset(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	p.Steps = 0
	l, err := NewLearner(LearnerOptions{Preset: p, Steps: 5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	never := func(*Result) bool { return false }
	tried, held := 0, 0
	for range 12 {
		o, err := l.Window(ctx, []Clip{clip}, never)
		if err != nil {
			t.Fatal(err)
		}
		if o.Result == nil {
			t.Fatal("no estimate to report")
		}
		if o.ColdTried {
			tried++
		}
		if o.ColdHeld {
			held++
		}
		if o.ColdTried == o.ColdHeld {
			t.Fatalf("cold start tried %v and held %v", o.ColdTried, o.ColdHeld)
		}
	}
	// Windows 1–12: tried 1 (no encoder yet; it starts no backoff), then
	// 2, 3, 5, 8 (held 4, 6, 7, 9–12).
	if tried != 5 || held != 7 {
		t.Errorf("cold starts tried %d, held %d; want 5 and 7", tried, held)
	}
	// The same scene, certified: no cold start.
	o, err := l.Window(ctx, []Clip{clip}, func(*Result) bool { return true })
	if err != nil || o.ColdTried || o.ColdHeld {
		t.Errorf("certified window: %v, tried %v held %v", err, o.ColdTried, o.ColdHeld)
	}
}

// motionEnergy is the mean per-pixel temporal variance.
func TestMotionEnergy(t *testing.T) {
	c := Clip{W: 2, H: 1, Frames: [][]float64{{0, 1}, {2, 1}, {0, 1}, {2, 1}}}
	if e := motionEnergy([]Clip{c}); math.Abs(e-0.5) > 1e-12 {
		t.Errorf("energy %v, want 0.5 (pixel 0 varies by 1, pixel 1 not)", e)
	}
	if e := motionEnergy(nil); e != 0 {
		t.Errorf("no clips: %v", e)
	}
}
