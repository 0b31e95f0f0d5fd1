package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/wire"
)

// A camera with zones decodes its stream once, as whole gray frames
// (stream.Preprocess.Gray), and its source stage hands every frame to
// each zone's line — framing, learning, reporting, as a camera without
// zones has them — which cuts its own region from it (cutZone). Each
// zone has its own encoder, checkpoint, baseline and alerts, under the
// name "<camera>.<zone>" (camera.key).

// sourceName is the source's name for the status message; a zone reports
// its camera's source.
func (c *camera) sourceName() string {
	if c.src == nil {
		return ""
	}
	return c.src.Name()
}

// cutZone cuts the zone's frame from the camera's whole gray frame: its
// region, resized as a camera with that region would read it. A frame
// the region does not fit (the stream changed resolution) is counted as
// dropped and the zone goes offline until one fits.
func (c *camera) cutZone(f stream.Frame) (stream.Frame, bool) {
	c.frames.Add(1)
	if f.Gray == nil {
		c.dropped.Add(1)
		return stream.Frame{}, false
	}
	z, err := c.cut.ApplyGray(f.Gray)
	if err != nil {
		c.dropped.Add(1)
		if now := time.Now(); now.Sub(c.lastSkipLog) > 30*time.Second {
			c.lastSkipLog = now
			c.log.Warn("zone cannot be cut from the camera's frame", "width", f.W, "height", f.H, "err", err)
		}
		c.setState(wire.StateOffline, err.Error())
		return stream.Frame{}, false
	}
	z.Seq, z.Time, z.Wall = f.Seq, f.Time, f.Wall
	if st, _ := c.source.get(); st != wire.StateOnline {
		c.setState(wire.StateOnline, "")
	}
	c.dash.setFrame(z)
	return z, true
}

// startZones starts the lines of every zone of the camera c (which runs
// the source), each under its own context so that a reload can restart
// one zone alone (restartZones).
func (d *Daemon) startZones(cfg *config.Config, c *camera) {
	for _, z := range c.cfg.Zones {
		if err := d.startZone(cfg, c, z); err != nil {
			d.log.Error("zone not started", "camera", c.cfg.Name, "zone", z.Name, "err", err)
		}
	}
}

// startZone builds and starts one zone's line, fed by the camera c. The
// line runs under the zone's ZoneConfig of cfg: its estimator, certify and
// alerts overrides reach its learner, certificate and alerter, while the
// sections a zone cannot override (windows, events, NATS) are cfg's.
func (d *Daemon) startZone(cfg *config.Config, c *camera, z config.Zone) error {
	zc := c.cfg.ZoneCamera(z)
	zcfg := cfg.ZoneConfig(z)
	p, err := cameraPreset(zcfg)
	if err != nil {
		return fmt.Errorf("zone %s: %w", z.Name, err)
	}
	pre := cameraPre(zc, p, nil)
	if err := pre.Validate(); err != nil {
		return fmt.Errorf("zone %s: %w", z.Name, err)
	}
	key := c.cfg.Name + "." + z.Name
	l := d.newLine(lineSpec{cam: zc, cfg: zcfg, src: c.src, log: d.log.With("camera", c.cfg.Name, "zone", z.Name), preset: p,
		dir: zoneDir(d.opt.StateDir, c.cfg.Name, z.Name), thumb: c.dash.thumbnailer(), zone: z.Name})
	l.cut, l.up = &pre, c
	l.feed = c.attach(z.Name)
	d.mu.Lock()
	d.cameras[key] = l
	ctx := d.ctx
	d.mu.Unlock()
	l.start(ctx)
	l.log.Info("zone started", "roi", fmt.Sprintf("%d,%d,%d,%d", z.ROI.X, z.ROI.Y, z.ROI.W, z.ROI.H))
	return nil
}

// stopZone detaches one zone's line from its camera and waits for it.
func (d *Daemon) stopZone(ctx context.Context, c *camera, zone string) {
	key := c.cfg.Name + "." + zone
	d.mu.Lock()
	l := d.cameras[key]
	delete(d.cameras, key)
	d.mu.Unlock()
	c.detach(zone)
	if l != nil {
		l.stop(ctx)
	}
}

// zoneDir is a zone's state directory: beside its camera's, so that
// removing a camera's directory removes its zones'.
func zoneDir(stateDir, camera, zone string) string {
	return filepath.Join(stateDir, "cameras", camera, "zones", zone)
}
