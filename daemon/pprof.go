package daemon

import (
	"net/http"
	"net/http/pprof"
)

// pprofRoutes serves the Go runtime's profiles under /debug/pprof/ to
// operators (http.pprof): the heap over a soak, a CPU profile of a busy
// board. pprof.Index serves the named profiles (heap, allocs,
// goroutine, …) by their path.
func (d *Daemon) pprofRoutes(mux *http.ServeMux) {
	mux.Handle("GET /debug/pprof/", d.operator(pprof.Index))
	mux.Handle("GET /debug/pprof/cmdline", d.operator(pprof.Cmdline))
	mux.Handle("GET /debug/pprof/profile", d.operator(pprof.Profile))
	mux.Handle("GET /debug/pprof/symbol", d.operator(pprof.Symbol))
	mux.Handle("GET /debug/pprof/trace", d.operator(pprof.Trace))
}
