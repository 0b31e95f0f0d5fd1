// Package gctest checks, in tests, that objects are collected once their
// users let them go: for caches that must index frames without keeping
// them alive.
package gctest

import (
	"runtime"
	"testing"
	"time"
)

// Watch counts the watched objects the collector has freed.
type Watch struct {
	freed chan struct{}
	n     int
}

// New returns a Watch for up to n objects.
func New(n int) *Watch { return &Watch{freed: make(chan struct{}, n)} }

// Add watches the object p points into.
func Add[T any](w *Watch, p *T) {
	w.n++
	runtime.AddCleanup(p, func(c chan struct{}) { c <- struct{}{} }, w.freed)
}

// Wait collects until every watched object was freed, failing t (with
// what says who keeps them) if some are still alive after 10 s.
func (w *Watch) Wait(t testing.TB, what string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for got := 0; got < w.n; {
		runtime.GC()
		select {
		case <-w.freed:
			got++
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%d of %d collected: %s keeps the others alive", got, w.n, what)
		}
	}
}
