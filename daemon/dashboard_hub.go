package daemon

import (
	"encoding/json"
	"log/slog"
	"sync"
)

// dashHub fans window events out to the open dashboard streams. A stream
// whose buffer is full is dropped, never waited for: a slow phone must
// not hold up a camera.
type dashHub struct {
	log  *slog.Logger
	mu   sync.Mutex
	subs map[*dashSub]struct{}
	// maxSubs bounds the open streams; buffer is each stream's queue.
	maxSubs, buffer int
}

// dashSub is one open event stream.
type dashSub struct {
	ch   chan []byte
	gone chan struct{} // closed when the hub dropped the stream
}

func newDashHub(log *slog.Logger) *dashHub {
	return &dashHub{log: log, subs: map[*dashSub]struct{}{}, maxSubs: 32, buffer: 32}
}

// subscribe opens a stream, or returns false when too many are open.
func (h *dashHub) subscribe() (*dashSub, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) >= h.maxSubs {
		return nil, false
	}
	s := &dashSub{ch: make(chan []byte, h.buffer), gone: make(chan struct{})}
	h.subs[s] = struct{}{}
	return s, true
}

// unsubscribe closes a stream (again is harmless).
func (h *dashHub) unsubscribe(s *dashSub) {
	h.mu.Lock()
	delete(h.subs, s)
	h.mu.Unlock()
}

// listening reports whether any stream is open, so that nobody pays for
// encoding events no one reads.
func (h *dashHub) listening() bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs) > 0
}

// broadcast queues one event on every stream without blocking.
func (h *dashHub) broadcast(event string, v any) {
	if h == nil {
		return
	}
	frame, err := sseFrame(event, v)
	if err != nil {
		h.log.Error("dashboard event not encoded", "event", event, "err", err)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.ch <- frame:
		default:
			delete(h.subs, s)
			close(s.gone)
			h.log.Info("dashboard stream dropped: the client does not keep up", "queued", len(s.ch))
		}
	}
}

// sseFrame encodes one server-sent event; JSON has no raw newlines, so
// one data line carries it.
func sseFrame(event string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(event)+16)
	out = append(out, "event: "...)
	out = append(out, event...)
	out = append(out, "\ndata: "...)
	out = append(out, b...)
	return append(out, "\n\n"...), nil
}
