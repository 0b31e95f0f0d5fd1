package daemon

import (
	"net/http"

	"github.com/physd/physd/daemon/web"
)

// webRoutes serves the publish page, the dashboard and their assets.
func (d *Daemon) webRoutes(mux *http.ServeMux) {
	mux.Handle("GET "+web.PagePrefix, web.Handler())
	d.dashboardRoutes(mux)
}
