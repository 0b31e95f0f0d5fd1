package daemon

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// No more than n holders at once, every waiter served, and a waiter whose
// context ends gives up without a slot.
func TestGate(t *testing.T) {
	g := newGate(2)
	var in, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !g.acquire(context.Background()) {
				t.Error("acquire failed without a cancelled context")
				return
			}
			n := in.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(5 * time.Millisecond)
			in.Add(-1)
			g.release()
		}()
	}
	wg.Wait()
	if m := most.Load(); m != 2 {
		t.Errorf("at most %d holders at once, want 2", m)
	}
	g.acquire(context.Background())
	g.acquire(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if g.acquire(ctx) {
		t.Error("a full gate let a third holder in")
	}
	var open gate
	if !open.acquire(context.Background()) {
		t.Error("a nil gate refused")
	}
	open.release()
}
