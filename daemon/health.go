package daemon

import (
	"net/http"
	"sort"
	"time"

	"github.com/physd/physd/wire"
)

// Health is the body of GET /healthz: the process is alive and serving.
type Health struct {
	Status string  `json:"status"` // always "ok"
	Uptime float64 `json:"uptime_s"`
}

// Readiness is the body of GET /readyz. Ready (HTTP 200, else 503) means
// NATS is connected and at least one camera is configured and running.
// It names no credentials: the NATS URL is redacted.
type Readiness struct {
	Ready   bool     `json:"ready"`
	Reasons []string `json:"reasons,omitempty"`
	NATS    struct {
		Connected bool   `json:"connected"`
		URL       string `json:"url,omitempty"`
	} `json:"nats"`
	Cameras []CameraReadiness `json:"cameras"`
}

// CameraReadiness is one camera's line in Readiness.
type CameraReadiness struct {
	Name  string     `json:"name"`
	State wire.State `json:"state"`
}

func (d *Daemon) healthz(w http.ResponseWriter, _ *http.Request) {
	d.mu.Lock()
	up := time.Since(d.started).Seconds()
	d.mu.Unlock()
	writeJSON(w, Health{Status: "ok", Uptime: up})
}

func (d *Daemon) readyz(w http.ResponseWriter, _ *http.Request) {
	var r Readiness
	d.mu.Lock()
	b := d.bus
	configured := len(d.cfg.Cameras)
	for _, c := range d.lines {
		r.Cameras = append(r.Cameras, CameraReadiness{Name: c.key()})
	}
	cams := d.lines
	d.mu.Unlock()
	for i := range r.Cameras {
		r.Cameras[i].State = cams[r.Cameras[i].Name].status().State
	}
	sort.Slice(r.Cameras, func(i, j int) bool { return r.Cameras[i].Name < r.Cameras[j].Name })
	if b != nil && b.nc != nil {
		r.NATS.Connected = b.nc.IsConnected()
		r.NATS.URL = b.nc.ConnectedUrlRedacted()
	}
	if !r.NATS.Connected {
		r.Reasons = append(r.Reasons, "NATS is not connected")
	}
	if configured == 0 {
		r.Reasons = append(r.Reasons, "no camera is configured")
	} else if len(r.Cameras) == 0 {
		r.Reasons = append(r.Reasons, "no configured camera is running")
	}
	r.Ready = len(r.Reasons) == 0
	code := http.StatusOK
	if !r.Ready {
		code = http.StatusServiceUnavailable
	}
	writeJSONStatus(w, code, r)
}
