package recent

import "testing"

// An entry read or put in a round survives keep more rounds and goes
// after; Peek and Update do not count as use.
func TestSweep(t *testing.T) {
	m := New[string, int]()
	m.Put("a", 1, 1)
	m.Put("b", 2, 1)
	m.Put("c", 3, 1)
	m.Get("b", 3)
	m.Peek("c")
	m.Update("c", func(v *int) { *v = 30 })
	m.Sweep(4, 2)
	if _, ok := m.Peek("a"); ok {
		t.Error("unused for 3 rounds with keep 2: kept")
	}
	if v, ok := m.Peek("b"); !ok || v != 2 {
		t.Errorf("read in round 3: %v %v", v, ok)
	}
	if _, ok := m.Peek("c"); ok {
		t.Error("only peeked and updated: kept")
	}
	if m.Len() != 1 {
		t.Errorf("%d entries, want 1", m.Len())
	}
}
