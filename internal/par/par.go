// Package par runs the independent items of a loop on every core.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls fn(0) … fn(n−1) on one goroutine per core, the caller's among
// them, and returns when every call has. Items are taken in turn from a
// shared counter, so a core that other processes slow down takes fewer.
// fn must write only to item i's results.
func For(n int, fn func(i int)) {
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			fn(i)
		}
	}
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}
