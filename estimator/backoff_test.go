package estimator

import "testing"

// The shared schedule: nothing is held before two refusals in a row;
// then 1, 2, 4, … 64, 64 … windows of like motion are held between
// tries, and an accepted window ends the count.
func TestBackoffSchedule(t *testing.T) {
	var b backoff
	var tried []int
	for i := range 201 {
		if !b.hold(1) {
			tried = append(tried, i)
			b.refuse(1, everyRefused)
		}
	}
	want := []int{0, 1, 3, 6, 11, 20, 37, 70, 135, 200}
	if len(tried) != len(want) {
		t.Fatalf("tried windows %v, want %v", tried, want)
	}
	for i := range want {
		if tried[i] != want[i] {
			t.Fatalf("tried windows %v, want %v", tried, want)
		}
	}
	b.reset()
	if b.hold(1) {
		t.Error("held after an accepted window")
	}
}

// What the two spans compare a window with: every refused energy since
// the count began, or the last one's alone.
func TestBackoffEnergySpan(t *testing.T) {
	for _, tc := range []struct {
		span energySpan
		// held at energy 1.5 after refusals at 1 then 5: within 2× of
		// [1, 5], not of 5 alone (2·1.5 < 5).
		held bool
	}{
		{everyRefused, true},
		{lastRefused, false},
	} {
		var b backoff
		b.refuse(1, tc.span)
		b.refuse(5, tc.span)
		if got := b.hold(1.5); got != tc.held {
			t.Errorf("span %d: held %v at 1.5 after refusals at 1 and 5, want %v", tc.span, got, tc.held)
		}
	}
}
