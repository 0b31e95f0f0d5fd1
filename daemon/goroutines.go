package daemon

import (
	"context"
	"log/slog"
	"sync"
)

// goroutines are a camera's or a line's: started under one context,
// cancelled together and waited for together.
type goroutines struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{}
}

// begin returns the context the goroutines run under; run starts each.
func (g *goroutines) begin(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	g.cancel, g.done = cancel, make(chan struct{})
	return ctx
}

// run starts f as one of them.
func (g *goroutines) run(f func()) {
	g.wg.Add(1)
	go func() { defer g.wg.Done(); f() }()
}

// started marks that all are started: done closes when they have ended.
func (g *goroutines) started() {
	go func() { g.wg.Wait(); close(g.done) }()
}

// stop cancels them and waits, at most until ctx ends (then logs what did
// not stop).
func (g *goroutines) stop(ctx context.Context, log *slog.Logger, what string) {
	g.cancel()
	select {
	case <-g.done:
	case <-ctx.Done():
		log.Warn(what + " did not stop in time")
	}
}
