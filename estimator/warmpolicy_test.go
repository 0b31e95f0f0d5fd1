package estimator

import "testing"

// A settled encoder is fitted as it stands for trainEvery-1 windows, then
// trained; a refusal of its fit-only estimate does not hold the training.
func TestWarmPolicySettled(t *testing.T) {
	var w warmPolicy
	if try, _ := w.fitOnly(1); try {
		t.Fatal("a new encoder's first window is not trained")
	}
	w.accepted(true)
	for i := range trainEvery - 1 {
		try, held := w.fitOnly(1)
		if !try || held {
			t.Fatalf("window %d after training: fit only %v, held %v; want fit only, not held", i+1, try, held)
		}
		w.accepted(false)
	}
	if try, _ := w.fitOnly(1); try {
		t.Fatalf("window %d after training: not trained", trainEvery)
	}
	w.accepted(true)
	if try, held := w.fitOnly(1); !try || held {
		t.Fatal("a refused fit-only window of a settled encoder must be trained (not held)")
	}
}

// On a scene that keeps refusing the trained encoder, training is held
// for 1, 2, 4, … windows of like motion, and resumes at once when the
// motion energy changes or a window is accepted.
func TestWarmPolicyRefused(t *testing.T) {
	var w warmPolicy
	w.refusedTrained(1)
	if try, _ := w.fitOnly(1); try {
		t.Fatal("one refusal holds nothing")
	}
	w.refusedTrained(1)
	var pattern []bool // trained or not, window by window
	for range 12 {
		try, held := w.fitOnly(1.5)
		if try != held {
			t.Fatalf("a refused scene's fit-only window must be held (try %v, held %v)", try, held)
		}
		pattern = append(pattern, !try)
		if !try {
			w.refusedTrained(1.5)
		}
	}
	// Refused twice: 1 held, trained, 2 held, trained, 4 held, trained, …
	want := []bool{false, true, false, false, true, false, false, false, false, true, false, false}
	for i := range want {
		if pattern[i] != want[i] {
			t.Fatalf("trained windows %v, want %v", pattern, want)
		}
	}
	if try, _ := w.fitOnly(5); try {
		t.Fatal("a window whose motion energy moved more than 2× must be trained")
	}
	w.accepted(false)
	if !w.settled || w.refused != 0 {
		t.Fatalf("an accepted fit-only window settles the encoder: %+v", w)
	}
}
