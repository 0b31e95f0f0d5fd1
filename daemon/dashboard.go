package daemon

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/stream"
	"github.com/physd/physd/window"
	"github.com/physd/physd/wire"
)

// Limits of the dashboard's record: memory per camera and the size of what
// a page receives stay bounded however long physd runs.
const (
	// dashHistory is how many windows each camera keeps: 12 minutes at the
	// default 1 s hop.
	dashHistory = 720
	// dashRecent is how many of the last verdicts a snapshot sends with
	// their reasons (the history without them).
	dashRecent = 10
	// dashMaxPoints caps the latent samples sent per clip; a longer clip
	// is decimated (every k-th sample).
	dashMaxPoints = 600
	// dashMaxClips caps the clips (events) whose latents are sent.
	dashMaxClips = 8
	// dashLevels is how many levels inside the covered interval U show
	// their crossings; dashMaxCrossings caps the crossings per level.
	dashLevels       = 5
	dashMaxCrossings = 64
)

// ring keeps the last cap(buf) values pushed; the oldest is overwritten.
type ring[T any] struct {
	buf  []T
	next int
	full bool
}

func newRing[T any](n int) *ring[T] { return &ring[T]{buf: make([]T, 0, max(1, n))} }

func (r *ring[T]) push(v T) {
	if !r.full && len(r.buf) < cap(r.buf) {
		r.buf = append(r.buf, v)
		r.full = len(r.buf) == cap(r.buf)
		return
	}
	r.buf[r.next] = v
	r.next = (r.next + 1) % len(r.buf)
}

// len is the number of values kept.
func (r *ring[T]) len() int { return len(r.buf) }

// items returns the values kept, oldest first, in a new slice.
func (r *ring[T]) items() []T {
	out := make([]T, 0, len(r.buf))
	if r.full {
		out = append(out, r.buf[r.next:]...)
		return append(out, r.buf[:r.next]...)
	}
	return append(out, r.buf...)
}

// num is a float64 that encodes NaN and ±Inf as JSON null (encoding/json
// refuses them, and "no value" is what they mean here).
type num float64

// MarshalJSON implements json.Marshaler.
func (v num) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// sample is a plot coordinate: like num, with 6 significant digits, which
// is finer than any plot and keeps the latents (the bulk of a window
// event) small.
type sample float64

// MarshalJSON implements json.Marshaler.
func (v sample) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', 6, 64), nil
}

// dashWindow is one window in a camera's history: its verdict, the
// estimate (also when it was not certified; null where none was made),
// the physics derived from it and what the training cost.
type dashWindow struct {
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Verdict   string    `json:"verdict"`
	Certified bool      `json:"certified"`
	Frames    int       `json:"frames"`
	Events    int       `json:"events"`
	dashPhysics
	Loss    num      `json:"loss"`
	TrainMS num      `json:"train_ms"`
	Steps   int      `json:"steps"`
	Cold    bool     `json:"cold"`
	Reasons []string `json:"reasons,omitempty"`
}

// dashCoverage is the part of the certificate's coverage test a plot
// shows: the covered interval U = [Lo, Hi] and how close the window came.
type dashCoverage struct {
	Holds       bool `json:"holds"`
	Lo          num  `json:"u_lo"`
	Hi          num  `json:"u_hi"`
	Width       num  `json:"width"`
	MinWidth    num  `json:"min_width"`
	Levels      int  `json:"levels"`
	Covered     int  `json:"covered"`
	MaxDistinct int  `json:"max_distinct_slopes"`
	SlopeTol    num  `json:"slope_tol"`
}

// dashLevel is one latent level with its crossings.
type dashLevel struct {
	U         num            `json:"u"`
	Crossings []dashCrossing `json:"crossings"`
}

// dashCrossing is one passage of a clip's latent through a level.
type dashCrossing struct {
	Clip  int    `json:"clip"`
	T     sample `json:"t"` // seconds from the clip's first frame
	Slope sample `json:"slope"`
}

// dashDetail is the last estimated window of a camera, for its plots: the
// latents, the fitted ODE solution, and the level crossings behind the
// certificate.
type dashDetail struct {
	End       time.Time `json:"end"`
	Verdict   string    `json:"verdict"`
	Certified bool      `json:"certified"`
	Dt        num       `json:"dt"`
	// Stride is the decimation: sample k of a sent clip is frame k·Stride,
	// at time k·Stride·Dt.
	Stride  int        `json:"stride"`
	Latents [][]sample `json:"latents"`
	// Fitted is the output-error fit's solution per clip (absent when the
	// estimate came without one).
	Fitted   [][]sample   `json:"fitted,omitempty"`
	Coverage dashCoverage `json:"coverage"`
	// Levels lie inside U when coverage holds, else at the quartiles of
	// the latent: where the crossings were and why they did not suffice.
	Levels       []dashLevel `json:"levels"`
	PsiMin       num         `json:"psi_min"`
	TrajResidual num         `json:"trajectory_residual"`
	// Signature: the latent is an ambient record's correlation function
	// R(τ) from τ = Dt on, not a window's latent over time.
	Signature bool `json:"signature,omitempty"`
	// Spectrum is the first clip's periodogram with the window's modes
	// marked (absent without a latent of a few samples).
	Spectrum *dashSpectrum `json:"spectrum,omitempty"`
}

// dashSpectrum is a latent's periodogram (window.DecaySpectrum) and the
// modes the window was read in (wire.Diagnostic.Modes).
type dashSpectrum struct {
	Hz    []sample   `json:"hz"`
	Power []sample   `json:"power"`
	Modes []dashMode `json:"modes"`
}

// dashMode is one mode as the spectrum marks it.
type dashMode struct {
	Label     int  `json:"label"`
	Fn        num  `json:"fn_hz"`
	Certified bool `json:"certified"`
}

// dashEstimate is a camera's latest certified estimate, as a card shows it.
type dashEstimate struct {
	WindowEnd time.Time `json:"window_end"`
	dashPhysics
	// Amplitude is the estimate's window's (absent: not measured).
	Amplitude *wire.Amplitude `json:"amplitude,omitempty"`
}

// dashPhysics is the physics a window or an estimate shows: γ, f_n and ζ
// with their uncertainties, and the regime (empty when there is no fit).
type dashPhysics struct {
	Gamma0      num    `json:"gamma0"`
	Gamma0Sigma num    `json:"gamma0_sigma"`
	Gamma1      num    `json:"gamma1"`
	Gamma1Sigma num    `json:"gamma1_sigma"`
	Fn          num    `json:"fn_hz"`
	FnSigma     num    `json:"fn_sigma"`
	Zeta        num    `json:"zeta"`
	ZetaSigma   num    `json:"zeta_sigma"`
	Regime      string `json:"regime,omitempty"`
}

// dashZone is one zone of a camera, as its card draws it.
type dashZone struct {
	Name string `json:"name"`
	ROI  [4]int `json:"roi"`
}

// dashThumb describes a camera's source thumbnail (source.png).
type dashThumb struct {
	W     int       `json:"w"`
	H     int       `json:"h"`
	SrcW  int       `json:"src_w"`
	SrcH  int       `json:"src_h"`
	Taken time.Time `json:"taken"`
}

// dashCard is a camera's line in the overview, sent in snapshots and in
// every status and window event.
type dashCard struct {
	Name string `json:"name"`
	// Display is what the badge shows: alerting, then a state other than
	// online (starting, waiting, offline, ended, stopped), then certified
	// (the last window was), training (a window is being estimated), else
	// online.
	Display  string     `json:"display"`
	State    wire.State `json:"state"`
	Error    string     `json:"error,omitempty"`
	Source   string     `json:"source"`
	Kind     string     `json:"kind"`
	Mode     string     `json:"mode"`
	Training bool       `json:"training"`
	Alerting bool       `json:"alerting"`
	// LastCertified tells whether the newest window was certified.
	LastCertified bool             `json:"last_certified"`
	Frames        int64            `json:"frames"`
	FramesDropped int64            `json:"frames_dropped"`
	Breaks        int64            `json:"breaks"`
	Windows       map[string]int   `json:"windows"`
	Skipped       int64            `json:"windows_skipped"`
	Encoder       wire.EncoderInfo `json:"encoder"`
	Estimate      *dashEstimate    `json:"estimate"`
	// Amplitude is the newest estimated window's displacement amplitude
	// and noise floor, certified or not, in pixels and, with a scale,
	// millimetres (null: not measured, or no window yet).
	Amplitude *wire.Amplitude `json:"amplitude"`
	// ROI is the configured region of interest {x, y, w, h} in source
	// pixels (null: the whole frame); Size the side of the frames the
	// estimator gets (frame.png).
	ROI *[4]int `json:"roi"`
	// Zones, for a camera with zones, are its zones' regions on its
	// picture; each zone has a card of its own, named "<camera>.<zone>".
	Zones []dashZone `json:"zones,omitempty"`
	Size  int        `json:"size"`
	Frame bool       `json:"frame"` // frame.png is available
	Thumb *dashThumb `json:"thumb"` // source.png, when available
	// Evidence is the files kept of the newest raised alert: its figure
	// and clip (pending while recorded), served at /evidence/<name>.
	Evidence []wire.EvidenceFile `json:"evidence,omitempty"`
	// Charts are the alerts' control charts (f_n, ζ): state, statistic,
	// limit, baseline (docs/alerts.md).
	Charts []wire.ChartReading `json:"charts,omitempty"`
}

// dashCamera is a camera in a snapshot: its card, its history (reasons
// left out), the last verdicts with their reasons (newest first) and the
// last window's detail.
type dashCamera struct {
	dashCard
	History []dashWindow `json:"history"`
	Recent  []dashWindow `json:"recent"`
	Detail  *dashDetail  `json:"detail"`
}

// dashSnapshot is GET /api/v1/dashboard and the first event of a stream.
type dashSnapshot struct {
	Time    time.Time    `json:"time"`
	Cameras []dashCamera `json:"cameras"`
}

// dashStatus is the periodic status event: every camera's card.
type dashStatus struct {
	Time    time.Time  `json:"time"`
	Cameras []dashCard `json:"cameras"`
}

// dashWindowEvent is sent when a camera finishes a window.
type dashWindowEvent struct {
	Camera string      `json:"camera"`
	Card   dashCard    `json:"card"`
	Window dashWindow  `json:"window"`
	Detail *dashDetail `json:"detail"`
}

// camDash is what the dashboard keeps of one camera. A nil *camDash
// records nothing, so a camera works without one.
type camDash struct {
	hub   *dashHub
	thumb *stream.Thumbnailer
	scrub *strings.Replacer

	mu        sync.Mutex
	hist      *ring[dashWindow]
	detail    *dashDetail
	training  bool
	alerting  bool
	lastCert  bool
	amp       *wire.Amplitude // the newest estimated window's
	evidence  []wire.EvidenceFile
	frame     stream.Frame
	haveFrame bool
}

func newCamDash(hub *dashHub, thumb *stream.Thumbnailer, cfg *config.Config) *camDash {
	return &camDash{hub: hub, thumb: thumb, scrub: secretScrubber(cfg), hist: newRing[dashWindow](dashHistory)}
}

// thumbnailer is the source's thumbnail the record shows (nil for none);
// a camera's zones show their camera's.
func (cd *camDash) thumbnailer() *stream.Thumbnailer {
	if cd == nil {
		return nil
	}
	return cd.thumb
}

// setFrame keeps the newest preprocessed frame (frame.png). The frame's
// pixels are shared, not copied: sources hand each frame out once.
func (cd *camDash) setFrame(f stream.Frame) {
	if cd == nil {
		return
	}
	cd.mu.Lock()
	cd.frame, cd.haveFrame = f, true
	cd.mu.Unlock()
}

// latestFrame returns the newest preprocessed frame.
func (cd *camDash) latestFrame() (stream.Frame, bool) {
	if cd == nil {
		return stream.Frame{}, false
	}
	cd.mu.Lock()
	defer cd.mu.Unlock()
	return cd.frame, cd.haveFrame
}

// setTraining marks a window being estimated (display state training).
func (cd *camDash) setTraining(on bool) {
	if cd == nil {
		return
	}
	cd.mu.Lock()
	cd.training = on
	cd.mu.Unlock()
}

// setAlerting follows the camera's alerter: raised until cleared.
func (cd *camDash) setAlerting(on bool) {
	if cd == nil {
		return
	}
	cd.mu.Lock()
	cd.alerting = on
	cd.mu.Unlock()
}

// setEvidence keeps the newest raised alert's evidence files.
func (cd *camDash) setEvidence(files []wire.EvidenceFile) {
	if cd == nil {
		return
	}
	cd.mu.Lock()
	cd.evidence = append([]wire.EvidenceFile(nil), files...)
	cd.mu.Unlock()
}

// clean removes credentials from text bound for the page.
func (cd *camDash) clean(s string) string {
	if cd == nil || s == "" {
		return s
	}
	return redactUserinfo(cd.scrub.Replace(s))
}

// recordWindow adds a finished window (its diagnostic d and, when an
// estimate was made, r) to the camera's history and tells the open
// dashboards.
func (c *line) recordWindow(d *wire.Diagnostic, r *estimator.Result, info *wire.EncoderInfo) {
	cd := c.dash
	if cd == nil {
		return
	}
	w := dashWindowOf(d, r, info)
	for i, s := range w.Reasons {
		w.Reasons[i] = cd.clean(s)
	}
	det := dashDetailOf(d, r)
	cd.mu.Lock()
	cd.hist.push(w)
	if det != nil {
		cd.detail = det
	}
	if d.Verdict != "skipped" {
		cd.lastCert = d.Certified
		cd.amp = d.Amplitude
	}
	cd.mu.Unlock()
	if cd.hub.listening() {
		cd.hub.broadcast("window", dashWindowEvent{Camera: c.key(), Card: c.card(), Window: w, Detail: det})
	}
}

// dashWindowOf makes a history entry. The physics comes from the
// estimator's own derivation (Result.Physics), never recomputed here.
func dashWindowOf(d *wire.Diagnostic, r *estimator.Result, info *wire.EncoderInfo) dashWindow {
	nan := num(math.NaN())
	w := dashWindow{Start: d.WindowStart, End: d.WindowEnd, Verdict: d.Verdict, Certified: d.Certified,
		Frames: d.Frames, Events: d.Events, Reasons: slices.Clone(d.Reasons),
		dashPhysics: dashPhysics{Gamma0: nan, Gamma0Sigma: nan, Gamma1: nan, Gamma1Sigma: nan, Fn: nan, FnSigma: nan, Zeta: nan, ZetaSigma: nan},
		Loss:        nan, TrainMS: nan}
	if r != nil {
		w.Gamma0, w.Gamma0Sigma, w.Gamma1, w.Gamma1Sigma = num(r.Gamma0), num(r.Sigma0), num(r.Gamma1), num(r.Sigma1)
		if r.Gamma0 > 0 { // Derive leaves f_n at 0 for a system that does not restore
			w.Fn, w.FnSigma = num(r.FreqN), num(r.SigmaF)
			w.Zeta, w.ZetaSigma = num(r.Zeta), num(r.SigmaZ)
		}
		w.Regime = string(r.Regime)
		w.Loss = num(r.Loss)
	}
	if info != nil {
		w.TrainMS, w.Steps, w.Cold = num(info.TrainMS), info.Steps, info.Cold
	}
	return w
}

// dashDetailOf makes the last window's plot data, or nil when the window
// has no latents (skipped or failed).
func dashDetailOf(d *wire.Diagnostic, r *estimator.Result) *dashDetail {
	if r == nil || len(r.Latents) == 0 || !(r.Dt > 0) {
		return nil
	}
	clips := r.Latents[:min(len(r.Latents), dashMaxClips)]
	longest := 0
	for _, z := range clips {
		longest = max(longest, len(z))
	}
	stride := max(1, (longest+dashMaxPoints-1)/dashMaxPoints)
	det := &dashDetail{End: d.WindowEnd, Verdict: d.Verdict, Certified: d.Certified, Dt: num(r.Dt), Stride: stride,
		PsiMin: num(math.NaN()), TrajResidual: num(math.NaN()), Signature: d.Ambient != nil}
	for _, z := range clips {
		det.Latents = append(det.Latents, decimate(z, stride))
	}
	if tr := r.Trajectory; tr != nil && len(tr.Fitted) == len(r.Latents) {
		for _, z := range tr.Fitted[:len(clips)] {
			det.Fitted = append(det.Fitted, decimate(z, stride))
		}
	}
	if hz, pw := window.DecaySpectrum(clips[0], r.Dt); len(hz) > 0 {
		s := max(1, (len(hz)+dashMaxPoints-1)/dashMaxPoints)
		sp := &dashSpectrum{Hz: decimate(hz, s), Power: decimate(pw, s), Modes: []dashMode{}}
		for _, m := range d.Modes {
			sp.Modes = append(sp.Modes, dashMode{Label: m.Label, Fn: num(m.Fn), Certified: m.Certified})
		}
		det.Spectrum = sp
	}
	var cov window.Coverage
	if v := d.Certificate; v != nil {
		cov = v.Coverage
		det.PsiMin, det.TrajResidual = num(v.Conditioning.PsiMin), num(v.TrajectoryResidual)
	} else {
		cov.Lo, cov.Hi = math.NaN(), math.NaN()
	}
	det.Coverage = dashCoverage{Holds: cov.Holds, Lo: num(cov.Lo), Hi: num(cov.Hi), Width: num(cov.Width),
		MinWidth: num(cov.MinWidth), Levels: cov.Levels, Covered: cov.Covered, MaxDistinct: cov.MaxDistinct, SlopeTol: num(cov.SlopeTol)}
	// The crossings as the certificate read them.
	tr, trErr := window.NewTrace(r)
	for _, u := range cov.ShownLevels(r.Latents, dashLevels) {
		l := dashLevel{U: num(u), Crossings: []dashCrossing{}}
		var cs []window.Crossing
		if trErr == nil {
			cs = tr.Crossings(u)
		}
		for _, c := range cs {
			if c.Clip >= len(clips) || len(l.Crossings) >= dashMaxCrossings {
				continue
			}
			l.Crossings = append(l.Crossings, dashCrossing{Clip: c.Clip, T: sample(c.Time), Slope: sample(c.Slope)})
		}
		det.Levels = append(det.Levels, l)
	}
	return det
}

// decimate keeps every stride-th value.
func decimate(z []float64, stride int) []sample {
	out := make([]sample, 0, (len(z)+stride-1)/stride)
	for k := 0; k < len(z); k += stride {
		out = append(out, sample(z[k]))
	}
	return out
}

// card is the camera's overview line now.
func (c *line) card() dashCard {
	st := c.status()
	est, _ := c.rec.latest()
	k := dashCard{Name: c.key(), State: st.State, Source: st.Source, Error: st.Error,
		Kind: string(c.cfg.Source.Kind), Mode: st.Mode, Frames: st.Frames, FramesDropped: st.FramesDropped, Breaks: st.Breaks,
		Windows: st.Windows, Skipped: st.WindowsSkipped, Encoder: st.Encoder, Size: c.frameSize(), Charts: st.Charts}
	if roi := c.cfg.ROI; !roi.IsZero() {
		k.ROI = &[4]int{roi.X, roi.Y, roi.W, roi.H}
	}
	if c.spec.sourceOnly {
		for _, z := range c.cfg.Zones {
			k.Zones = append(k.Zones, dashZone{Name: z.Name, ROI: [4]int{z.ROI.X, z.ROI.Y, z.ROI.W, z.ROI.H}})
		}
	}
	if est != nil {
		k.Estimate = &dashEstimate{WindowEnd: est.WindowEnd, dashPhysics: dashPhysics{Gamma0: num(est.Gamma0), Gamma0Sigma: num(est.Gamma0Sigma),
			Gamma1: num(est.Gamma1), Gamma1Sigma: num(est.Gamma1Sigma), Fn: num(est.Fn), FnSigma: num(est.FnSigma),
			Zeta: num(est.Zeta), ZetaSigma: num(est.ZetaSigma), Regime: est.Regime}, Amplitude: est.Amplitude}
	}
	if cd := c.dash; cd != nil {
		k.Source, k.Error = cd.clean(k.Source), cd.clean(k.Error)
		cd.mu.Lock()
		k.Training, k.Alerting, k.LastCertified, k.Frame, k.Amplitude = cd.training, cd.alerting, cd.lastCert, cd.haveFrame, cd.amp
		k.Evidence = cd.evidence
		cd.mu.Unlock()
		if th, ok := cd.thumb.Latest(); ok {
			k.Thumb = &dashThumb{W: th.W, H: th.H, SrcW: th.SrcW, SrcH: th.SrcH, Taken: th.Taken}
		}
	} else {
		k.Source, k.Error = redactUserinfo(k.Source), redactUserinfo(k.Error)
	}
	k.Display = displayState(k.State, k.Training, k.Alerting, k.LastCertified)
	return k
}

// frameSize is the side of the frames the estimator gets.
func (c *line) frameSize() int {
	if c.cfg.Size > 0 {
		return c.cfg.Size
	}
	return c.spec.preset.Size
}

// displayState ranks what an operator must see first: a raised alert,
// then a camera that is not delivering frames, then the certificate of
// the last window, then work in progress.
func displayState(state wire.State, training, alerting, certified bool) string {
	switch {
	case alerting:
		return "alerting"
	case state != wire.StateOnline:
		return string(state)
	case certified:
		return "certified"
	case training:
		return "training"
	}
	return string(wire.StateOnline)
}

// dashCameraOf is the camera's full entry in a snapshot.
func (c *line) dashCameraOf() dashCamera {
	out := dashCamera{dashCard: c.card(), History: []dashWindow{}, Recent: []dashWindow{}}
	cd := c.dash
	if cd == nil {
		return out
	}
	cd.mu.Lock()
	hist := cd.hist.items()
	out.Detail = cd.detail
	cd.mu.Unlock()
	for i := len(hist) - 1; i >= 0 && len(out.Recent) < dashRecent; i-- {
		out.Recent = append(out.Recent, hist[i])
	}
	for i := range hist {
		hist[i].Reasons = nil // the copy's; the ring keeps its own
	}
	out.History = hist
	return out
}

// camerasByName returns the running cameras sorted by name.
func (d *Daemon) camerasByName() []*line {
	d.mu.Lock()
	cams := make([]*line, 0, len(d.lines))
	for _, c := range d.lines {
		cams = append(cams, c)
	}
	d.mu.Unlock()
	sort.Slice(cams, func(i, j int) bool { return cams[i].key() < cams[j].key() })
	return cams
}

// buildDashSnapshot is every camera's card, history and last window.
func (d *Daemon) buildDashSnapshot() dashSnapshot {
	s := dashSnapshot{Time: time.Now().UTC(), Cameras: []dashCamera{}}
	for _, c := range d.camerasByName() {
		s.Cameras = append(s.Cameras, c.dashCameraOf())
	}
	return s
}

// buildDashStatus is every camera's card.
func (d *Daemon) buildDashStatus() dashStatus {
	s := dashStatus{Time: time.Now().UTC(), Cameras: []dashCard{}}
	for _, c := range d.camerasByName() {
		s.Cameras = append(s.Cameras, c.card())
	}
	return s
}
