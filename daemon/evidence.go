package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/evidence"
	"github.com/physd/physd/internal/figure"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
)

// evidenceSlack is how much longer than Pre + Post a camera's ring holds
// its packets: a window's alert is raised some seconds after the window
// ends (its estimation), and the clip reaches back Pre from that end.
const evidenceSlack = time.Minute

// evidenceKeeper keeps the evidence of the daemon's raised alerts
// (package evidence; config alerts.evidence; docs/alerts.md): at once a
// PNG of the window that raised it, and Post later the clip from its
// camera's ring; then it publishes the Evidence message naming both with
// their SHA-256 and enforces the retention. Clips still recording when
// the daemon stops are written with what they hold (stop).
type evidenceKeeper struct {
	cfg   config.Evidence
	store evidence.Store
	bus   publisher
	log   *slog.Logger
	node  string
	// done ends the clips' waits at shutdown.
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
	mu   sync.Mutex // serialises Prune
}

func newEvidenceKeeper(cfg config.Evidence, stateDir, node string, bus publisher, log *slog.Logger) *evidenceKeeper {
	k := &evidenceKeeper{cfg: cfg, bus: bus, log: log, node: node, done: make(chan struct{}),
		store: evidence.Store{Dir: filepath.Join(stateDir, "evidence"), MaxAge: cfg.MaxAge, MaxBytes: int64(cfg.MaxMB) << 20}}
	k.prune()
	return k
}

// prune enforces the retention and logs what it removed.
func (k *evidenceKeeper) prune() {
	k.mu.Lock()
	defer k.mu.Unlock()
	removed, err := k.store.Prune(time.Now())
	if err != nil {
		k.log.Warn("evidence retention", "err", err)
	}
	if len(removed) > 0 {
		k.log.Info("evidence removed (alerts.evidence.max_age, max_mb)", "files", removed)
	}
}

// stop ends the clips' waits and waits, at most until ctx ends, for them
// to be written and their evidence published.
func (k *evidenceKeeper) stop(ctx context.Context) {
	if k == nil {
		return
	}
	k.once.Do(func() { close(k.done) })
	ch := make(chan struct{})
	go func() { k.wg.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-ctx.Done():
		k.log.Warn("evidence clips still being written at shutdown")
	}
}

// cameraEvidence is one camera's part: its ring of packets, or for a
// source that hands physd none its ring of pictures (frames), which a
// clip is encoded from; neither when the alerts keep no clips (why says
// so).
type cameraEvidence struct {
	k      *evidenceKeeper
	camera string
	ring   *evidence.Ring
	frames *evidence.FrameRing
	why    string
	// packets is set once the source handed a packet: an RTSP camera
	// read through OpenCV (MPEG-4, AV1…) hands none, and its clip is
	// encoded from its pictures instead.
	packets atomic.Bool
}

// forCamera returns the camera's evidence and the tap its source feeds
// the packets' ring through (nil: none).
func (k *evidenceKeeper) forCamera(cc config.Camera) (*cameraEvidence, func(stream.AccessUnit)) {
	if k == nil {
		return nil, nil
	}
	ce := &cameraEvidence{k: k, camera: cc.Name}
	if !k.cfg.Clips() {
		ce.why = "alerts.evidence keeps no clips (pre and post are 0)"
		return ce, nil
	}
	hold, buf := k.cfg.Pre+k.cfg.Post+evidenceSlack, k.cfg.BufferMB<<20
	ce.frames = evidence.NewFrameRing(hold, buf)
	if cc.Source.Kind == config.KindRTSP || cc.Source.Kind == config.KindWHIP || cc.Source.Kind == config.KindWHEP {
		ce.ring = evidence.NewRing(hold, buf)
		return ce, func(u stream.AccessUnit) { ce.packets.Store(true); ce.ring.Add(u) }
	}
	return ce, nil
}

// frame keeps a decoded picture, for a source that hands physd no packets.
func (ce *cameraEvidence) frame(f stream.Frame) {
	if ce == nil || ce.frames == nil || ce.packets.Load() {
		return
	}
	ce.frames.Add(f)
}

// capture keeps the evidence of alert a, raised by the window of r and v
// (the estimate of its mode): the figure now, the clip Post after the
// window's end. It sets a.Evidence, and hands show (nil: none) the files
// now and again when the clip is written.
func (ce *cameraEvidence) capture(a *wire.Alert, r *estimator.Result, v window.Verdict, show func([]wire.EvidenceFile)) {
	if ce == nil || a == nil || a.State != wire.AlertRaised {
		return
	}
	k := ce.k
	base := strings.ReplaceAll(a.Key(), ".", "_") + "-" + a.WindowEnd.UTC().Format("20060102T150405.000Z")
	if a.Mode != nil && a.Mode.Label >= 2 {
		base += fmt.Sprintf("-m%d", a.Mode.Label)
	}
	var files []wire.EvidenceFile
	fig := alertFigure(a, r, v)
	if f, err := k.store.Save(ce.camera+"/"+base+".png", func(w io.Writer) error { return fig.Write(w, "png") }); err != nil {
		k.log.Error("alert figure not written", "camera", ce.camera, "err", err)
	} else {
		files = append(files, wire.EvidenceFile{Kind: "figure", Name: f.Name, SHA256: f.SHA256, Bytes: f.Bytes})
	}
	ev := &wire.Evidence{Schema: wire.SchemaEvidence, Node: a.Node, Camera: a.Camera, Zone: a.Zone, Mode: a.Mode, Alert: a.ID(), AlertTime: a.Time}
	if show == nil {
		show = func([]wire.EvidenceFile) {}
	}
	if ce.frames == nil {
		a.Evidence = files
		ev.Files = files
		show(files)
		k.publish(ev, ce.why)
		return
	}
	copied := ce.packets.Load()
	ext := ".mp4"
	if copied {
		if e := (evidence.Clip{Codec: ce.ring.Codec()}).Ext(); e != "" {
			ext = e
		}
	}
	pending := wire.EvidenceFile{Kind: "clip", Name: ce.camera + "/" + base + ext, Pending: true}
	a.Evidence = append(files, pending)
	show(a.Evidence)
	center := a.WindowEnd
	from, to := center.Add(-k.cfg.Pre), center.Add(k.cfg.Post)
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		note := ""
		// The packets of `to` arrive with it; a second more for the
		// network.
		select {
		case <-time.After(time.Until(to) + time.Second):
		case <-k.done:
			note = "the daemon stopped before the clip's end: it ends there"
		}
		var (
			name, codec string
			write       func(io.Writer) error
			start, end  time.Time
			ok          bool
		)
		if copied {
			var clip evidence.Clip
			if clip, ok = ce.ring.Cut(from, to); ok {
				name, codec, write = ce.camera+"/"+base+clip.Ext(), clip.Codec, clip.Write
				start, end = clip.Span()
			}
		} else {
			var clip evidence.FrameClip
			if clip, ok = ce.frames.Cut(from, to); ok {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				name, codec = ce.camera+"/"+base+".mp4", "video/H264"
				write = func(w io.Writer) error { return clip.Write(ctx, w) }
				start, end = clip.Span()
				if _, _, every := ce.frames.Stats(); every > 1 && note == "" {
					note = fmt.Sprintf("encoded from the pictures physd analysed, every %d-th (alerts.evidence.buffer_mb holds no more)", every)
				}
			}
		}
		if !ok {
			ev.Files = files
			show(files)
			k.publish(ev, "the camera sent no video in the clip's span")
			return
		}
		f, err := k.store.Save(name, write)
		if err != nil {
			k.log.Error("alert clip not written", "camera", ce.camera, "err", err)
			ev.Files = files
			show(files)
			k.publish(ev, "the clip could not be written: "+err.Error())
			return
		}
		if note == "" && (start.Sub(from) > time.Second || to.Sub(end) > time.Second) {
			note = "the camera's buffer did not cover the whole span (it was offline, or alerts.evidence.buffer_mb is too small)"
		}
		ev.Files = append(files, wire.EvidenceFile{Kind: "clip", Name: f.Name, SHA256: f.SHA256, Bytes: f.Bytes,
			Start: start.UTC(), End: end.UTC(), Codec: codec, Copied: copied, Note: note})
		show(ev.Files)
		k.publish(ev, "")
		k.prune()
	}()
}

// publish publishes the evidence message (with note, when no clip).
func (k *evidenceKeeper) publish(ev *wire.Evidence, note string) {
	ev.Time = time.Now().UTC()
	ev.Note = note
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := k.bus.publish(ctx, ev); err != nil {
		k.log.Error("alert evidence not published", "alert", ev.Alert, "err", err)
		return
	}
	k.log.Info("alert evidence written", "alert", ev.Alert, "files", len(ev.Files), "note", note)
}

// alertFigure is the figure of the window that raised a: its latent, the
// fit and the certificate's levels, and the latent's spectrum with the
// estimate's f_n marked.
func alertFigure(a *wire.Alert, r *estimator.Result, v window.Verdict) figure.Window {
	title := fmt.Sprintf("%s alert %s", a.Key(), a.WindowEnd.UTC().Format(time.RFC3339))
	if a.Mode != nil && a.Mode.Label >= 2 {
		title += fmt.Sprintf(" (mode %d)", a.Mode.Label)
	}
	if r == nil {
		return figure.Window{Title: title, Verdict: string(v.Status)}
	}
	w := figure.FromResult(title, r, v)
	if len(r.Latents) > 0 {
		if hz, pw := window.DecaySpectrum(r.Latents[0], r.Dt); len(hz) > 1 {
			w.Spectrum = &figure.Spectrum{Hz: hz, Power: pw, Marks: []float64{r.Physics.FreqN}}
		}
	}
	return w
}
