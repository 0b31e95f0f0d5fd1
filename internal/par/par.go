// Package par runs the independent items of a loop on several goroutines.
//
// How many is the caller's to say: a command fitting one clip wants every
// core, while the daemon, whose cameras already keep the cores busy side
// by side, runs each window's loops on the camera's own goroutine
// (WithWorkers(ctx, 1)). Every loop here writes each item's result to its
// own slot, so the number of goroutines never changes a result.
package par

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// workersKey is the context key of WithWorkers's limit.
type workersKey struct{}

// WithWorkers returns a copy of ctx under which parallel loops use at most
// n goroutines (n < 1 counts as 1).
func WithWorkers(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, workersKey{}, max(1, n))
}

// Workers is how many goroutines a parallel loop under ctx may use: the
// limit WithWorkers set, else one per core (GOMAXPROCS).
func Workers(ctx context.Context) int {
	if n, ok := ctx.Value(workersKey{}).(int); ok {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// For calls fn(0) … fn(n−1) on up to workers goroutines (one per core if
// workers < 1), the caller's among them, and returns when every call has.
// Items are taken in turn from a shared counter, so a core that other
// processes slow down takes fewer. fn must write only to item i's results.
func For(workers, n int, fn func(i int)) {
	ForWorker(workers, n, func(_, i int) { fn(i) })
}

// ForWorker is For with the worker's number w in [0, workers) passed to fn
// (the caller's goroutine is worker 0), so that fn can keep scratch space
// per worker.
func ForWorker(workers, n int, fn func(w, i int)) {
	workers = Count(workers, n)
	var next atomic.Int64
	work := func(w int) {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			fn(w, i)
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(w)
		}()
	}
	work(0)
	wg.Wait()
}

// Count is how many goroutines ForWorker runs for n items with workers
// asked for: workers (one per core if workers < 1), at most one per item,
// at least one. A caller keeping scratch space per worker sizes it by
// Count.
func Count(workers, n int) int {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	return max(1, min(n, workers))
}
