package daemon

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/physd/physd/daemon/web"
)

// Timing of the dashboard's event stream.
const (
	// dashStatusEvery is the period of the status event (every camera's
	// card: state, counters, latest estimate).
	dashStatusEvery = 2 * time.Second
	// dashKeepalive is the period of the comment line that keeps proxies
	// and NAT from closing a quiet stream.
	dashKeepalive = 15 * time.Second
	// dashWriteTimeout bounds one write to a stream: a client that takes
	// longer is gone, and the server's WriteTimeout (30 s for the whole
	// response) must not end a healthy stream.
	dashWriteTimeout = 10 * time.Second
)

// dashboardRoutes serves the dashboard: the page is public and holds no
// data; everything with data needs the operator's token.
func (d *Daemon) dashboardRoutes(mux *http.ServeMux) {
	page := web.DashboardHandler()
	mux.Handle("GET "+web.DashboardPath, page)
	mux.Handle("GET "+web.DashboardPath+"/", page)
	mux.HandleFunc("GET /api/v1/dashboard", d.operator(d.dashboardSnapshot))
	mux.HandleFunc("GET /api/v1/dashboard/events", d.operator(d.dashboardEvents))
	mux.HandleFunc("GET /api/v1/cameras/{camera}/frame.png", d.operator(d.framePNGHandler))
	mux.HandleFunc("GET /api/v1/cameras/{camera}/source.png", d.operator(d.sourcePNGHandler))
	mux.HandleFunc("GET /evidence/{camera}/{file}", d.operator(d.evidenceHandler))
}

// dashboardSnapshot serves GET /api/v1/dashboard.
func (d *Daemon) dashboardSnapshot(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, d.buildDashSnapshot())
}

// runContext is the context the daemon runs under (Background before Run).
func (d *Daemon) runContext() context.Context {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx == nil {
		return context.Background()
	}
	return d.ctx
}

// dashboardEvents serves GET /api/v1/dashboard/events, a text/event-stream:
// first a "snapshot" event (as GET /api/v1/dashboard), then a "window"
// event whenever a camera finishes a window, a "status" event every
// dashStatusEvery and a keepalive comment every dashKeepalive. It ends
// when the client goes, the daemon stops, or the client falls so far
// behind that its queue overflows (it reconnects and starts from a new
// snapshot).
func (d *Daemon) dashboardEvents(w http.ResponseWriter, r *http.Request) {
	sub, ok := d.dash.subscribe()
	if !ok {
		httpError(w, http.StatusServiceUnavailable, "too many open dashboard streams (%d); close one and retry", d.dash.maxSubs)
		return
	}
	defer d.dash.unsubscribe(sub)
	// The server's WriteTimeout covers the whole response: each write
	// moves the deadline instead (net/http already lifts the read
	// deadline while the handler waits for a GET's end).
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Accel-Buffering", "no") // a reverse proxy must not buffer the stream
	send := func(b []byte) error {
		if err := rc.SetWriteDeadline(time.Now().Add(dashWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	first, err := sseFrame("snapshot", d.buildDashSnapshot())
	if err != nil {
		d.log.Error("dashboard snapshot not encoded", "err", err)
		httpError(w, http.StatusInternalServerError, "snapshot not encoded")
		return
	}
	w.WriteHeader(http.StatusOK)
	// retry: how long a client waits before reconnecting.
	if err := send(append([]byte("retry: 3000\n"), first...)); err != nil {
		return
	}
	dctx := d.runContext()
	status := time.NewTicker(dashStatusEvery)
	defer status.Stop()
	keep := time.NewTicker(dashKeepalive)
	defer keep.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case <-dctx.Done():
			return
		case <-sub.gone:
			return
		case b := <-sub.ch:
			err = send(b)
		case <-status.C:
			var b []byte
			if b, err = sseFrame("status", d.buildDashStatus()); err == nil {
				err = send(b)
			}
		case <-keep.C:
			err = send([]byte(": keepalive\n\n"))
		}
		if err != nil {
			d.log.Debug("dashboard stream ended", "err", err)
			return
		}
	}
}
