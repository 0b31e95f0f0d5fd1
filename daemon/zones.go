package daemon

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/physd/physd/config"
	"github.com/physd/physd/wire"
)

// A camera with zones decodes its stream once, as whole gray frames
// (stream.Preprocess.Gray), and its source stage hands every frame to
// each zone's line — framing, learning, reporting, as a camera without
// zones has them — which cuts its own region from it (framer.cutZone). Each
// zone has its own encoder, checkpoint, baseline and alerts, under the
// name "<camera>.<zone>" (line.key).

// startZones starts the lines of every zone of the camera cc (whose
// runner c decodes the source), each under its own context so that a
// reload can restart one zone alone.
func (d *Daemon) startZones(cfg *config.Config, cc config.Camera, c *camera) {
	for _, z := range cc.Zones {
		if err := d.startZone(cfg, cc, c, z); err != nil {
			d.log.Error("zone not started", "camera", cc.Name, "zone", z.Name, "err", err)
		}
	}
}

// startZone builds and starts one zone's line, fed by the camera c. The
// line runs under the zone's ZoneConfig of cfg: its estimator, certify and
// alerts overrides reach its learner, certificate and alerter, while the
// sections a zone cannot override (windows, events, NATS) are cfg's.
func (d *Daemon) startZone(cfg *config.Config, cc config.Camera, c *camera, z config.Zone) error {
	zc := cc.ZoneCamera(z)
	zcfg := cfg.ZoneConfig(z)
	p, err := cameraPreset(zcfg)
	if err != nil {
		return fmt.Errorf("zone %s: %w", z.Name, err)
	}
	pre := cameraPre(zc, p, nil)
	if err := pre.Validate(); err != nil {
		return fmt.Errorf("zone %s: %w", z.Name, err)
	}
	s := lineSpecOf(zcfg, zc, p, c.src, zoneDir(d.opt.StateDir, cc.Name, z.Name), newCamDash(d.dash, c.dash.thumbnailer(), zcfg))
	s.zone, s.cut, s.log, s.evidence = z.Name, &pre, d.log.With("camera", cc.Name, "zone", z.Name), c.evidence
	l := newLine(s, d.shared(wire.Key(cc.Name, z.Name)), c)
	l.feed = c.attach(l.key())
	d.mu.Lock()
	d.lines[l.key()] = l
	ctx := d.ctx
	d.mu.Unlock()
	l.start(ctx)
	l.log.Info("zone started", "roi", fmt.Sprintf("%d,%d,%d,%d", z.ROI.X, z.ROI.Y, z.ROI.W, z.ROI.H))
	return nil
}

// stopZone detaches one zone's line from its camera and waits for it.
func (d *Daemon) stopZone(ctx context.Context, c *camera, zone string) {
	key := wire.Key(c.name, zone)
	d.mu.Lock()
	l := d.lines[key]
	delete(d.lines, key)
	d.mu.Unlock()
	c.detach(key)
	if l != nil {
		l.stop(ctx)
	}
}

// zoneDir is a zone's state directory: beside its camera's, so that
// removing a camera's directory removes its zones'.
func zoneDir(stateDir, camera, zone string) string {
	return filepath.Join(stateDir, "cameras", camera, "zones", zone)
}
