//go:build !nocv && linux

package daemon

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// pageLog is what a page under test writes to its console ("type: text"
// lines) and the exceptions it does not catch.
type pageLog struct {
	mu                  sync.Mutex
	console, exceptions []string
}

// listenPage starts collecting bctx's page log.
func listenPage(bctx context.Context) *pageLog {
	p := &pageLog{}
	chromedp.ListenTarget(bctx, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, strings.Trim(string(a.Value), `"`))
			}
			p.console = append(p.console, string(e.Type)+": "+strings.Join(parts, " "))
		case *runtime.EventExceptionThrown:
			p.exceptions = append(p.exceptions, e.ExceptionDetails.Error())
		}
	})
	return p
}

// logged reports whether a console line holds substr.
func (p *pageLog) logged(substr string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.console {
		if strings.Contains(l, substr) {
			return true
		}
	}
	return false
}

// check logs the console when t failed and fails t on uncaught exceptions.
func (p *pageLog) check(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.Failed() {
		t.Logf("page console:\n%s", strings.Join(p.console, "\n"))
	}
	if len(p.exceptions) > 0 {
		t.Errorf("uncaught exceptions on the page:\n%s", strings.Join(p.exceptions, "\n"))
	}
}
