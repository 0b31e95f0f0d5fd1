package daemon

import (
	"log/slog"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/motion"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/tracker"
	"github.com/physd/physd/wire"
)

// lineSpec is what one line — a camera's, or one zone's of a camera —
// is built from: resolved values, not the daemon's whole state.
type lineSpec struct {
	// cam is the line's camera (for a zone, its ZoneCamera) and cfg the
	// configuration it runs under (for a zone, its ZoneConfig).
	cam config.Camera
	cfg *config.Config
	src stream.Source
	log *slog.Logger
	// preset is the training recipe (cameraPreset of cfg).
	preset estimator.Preset
	// dir is the line's state directory; thumb the thumbnail its
	// dashboard record shows (a zone shows its camera's).
	dir   string
	thumb *stream.Thumbnailer
	// zone names a zone's line; "" for a camera's.
	zone string
}

// newLine builds a line: every line shares the daemon's bus, its gate on
// windows estimated at once, its estimate hook and metrics, and has
// caches of its own for the camera-motion test and the tracker (a zone's
// frames are not its camera's). Zones and cameras are built here alike,
// so that neither runs without what the other has.
func (d *Daemon) newLine(s lineSpec) *camera {
	l := &camera{cfg: s.cam, all: s.cfg, src: s.src, log: s.log, bus: d.bus, node: d.bus.node, preset: s.preset,
		onEst: d.opt.OnEstimate, motionCache: motion.NewCache(), trackCache: tracker.NewCache(), gate: d.gate,
		dir: s.dir, zone: s.zone, rec: newRecord(), dash: newCamDash(d.dash, s.thumb, s.cfg)}
	l.trainTime = d.metrics.training.WithLabelValues(l.key())
	l.setState(wire.StateStarting, "")
	l.alerts = newAlerter(s.cam.Name, s.cfg.Alerts, l.loadBaseline())
	l.rec.setBaseline(l.alerts.base)
	return l
}
