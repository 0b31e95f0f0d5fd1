package par

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func TestForCallsEachItemOnce(t *testing.T) {
	for _, workers := range []int{-1, 0, 1, 2, 5} {
		for _, n := range []int{0, 1, 2, 7, 1000} {
			calls := make([]atomic.Int32, n)
			For(workers, n, func(i int) { calls[i].Add(1) })
			for i := range calls {
				if c := calls[i].Load(); c != 1 {
					t.Fatalf("workers %d, n = %d: item %d called %d times", workers, n, i, c)
				}
			}
		}
	}
}

// TestForOneWorkerStaysOnCaller checks that one worker runs every item
// on the calling goroutine, in order: no goroutine is started.
func TestForOneWorkerStaysOnCaller(t *testing.T) {
	var order []int
	For(1, 50, func(i int) { order = append(order, i) }) // no lock: one goroutine
	for i, v := range order {
		if v != i {
			t.Fatalf("item %d ran %d-th", v, i)
		}
	}
	if len(order) != 50 {
		t.Fatalf("%d items ran, want 50", len(order))
	}
}

// TestForBoundsGoroutines checks that no more than workers items run at
// once.
func TestForBoundsGoroutines(t *testing.T) {
	var running, most atomic.Int32
	For(3, 200, func(int) {
		r := running.Add(1)
		for {
			m := most.Load()
			if r <= m || most.CompareAndSwap(m, r) {
				break
			}
		}
		runtime.Gosched()
		running.Add(-1)
	})
	if m := most.Load(); m > 3 {
		t.Fatalf("%d items ran at once, limit 3", m)
	}
}

func TestWorkers(t *testing.T) {
	ctx := context.Background()
	if got, want := Workers(ctx), runtime.GOMAXPROCS(0); got != want {
		t.Fatalf("Workers(Background) = %d, want GOMAXPROCS %d", got, want)
	}
	if got := Workers(WithWorkers(ctx, 1)); got != 1 {
		t.Fatalf("Workers(WithWorkers(1)) = %d", got)
	}
	if got := Workers(WithWorkers(ctx, 0)); got != 1 {
		t.Fatalf("Workers(WithWorkers(0)) = %d, want 1", got)
	}
	inner := WithWorkers(WithWorkers(ctx, 1), 4)
	if got := Workers(inner); got != 4 {
		t.Fatalf("the innermost limit should hold: got %d", got)
	}
}

// Count is the number of workers ForWorker hands out: the ask, capped by
// the items, at least one, one per core for an ask below one.
func TestCount(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, c := range []struct{ workers, n, want int }{
		{4, 10, 4}, {4, 2, 2}, {1, 10, 1}, {3, 0, 1}, {0, 1 << 20, procs}, {-1, 1, 1},
	} {
		if got := Count(c.workers, c.n); got != c.want {
			t.Errorf("Count(%d, %d) = %d, want %d", c.workers, c.n, got, c.want)
		}
		seen := map[int]bool{}
		var mu sync.Mutex
		ForWorker(c.workers, c.n, func(w, _ int) { mu.Lock(); seen[w] = true; mu.Unlock() })
		for w := range seen {
			if w < 0 || w >= Count(c.workers, c.n) {
				t.Errorf("ForWorker(%d, %d) ran worker %d, outside [0, %d)", c.workers, c.n, w, Count(c.workers, c.n))
			}
		}
	}
}
