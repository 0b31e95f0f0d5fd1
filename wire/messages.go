package wire

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/estimator"
	"github.com/physd/physd/window"
)

// Estimate is a certified window's physics, published on
// physd.<camera>.estimate. Only certified windows are published here.
type Estimate struct {
	Schema string `json:"schema"`
	// Node is the board that published the message (node.name), so that
	// a subscriber of a hub knows it; absent when unnamed.
	Node   string `json:"node,omitempty"`
	Camera string `json:"camera"`
	// Zone names the zone of Camera the message is about, for a camera
	// with zones (subject physd.<camera>.<zone>.<kind>); absent otherwise.
	Zone        string    `json:"zone,omitempty"`
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
	// Frames is the number of frames in the window (all events, in the
	// multi-trajectory mode); Events the number of trajectories (1 for a
	// sliding window).
	Frames int `json:"frames"`
	Events int `json:"events"`
	// Bin is the decimation in time: each of Frames stands for Bin camera
	// frames (window.Binner; config windows.bin, a number or chosen by the
	// line under auto); absent when each is one camera frame.
	Bin int `json:"bin,omitempty"`
	// Gamma0 and Gamma1 are the coefficients of z'' + γ1 z' + γ0 z = 0
	// with their 1σ uncertainties.
	Gamma0      float64 `json:"gamma0"`
	Gamma0Sigma float64 `json:"gamma0_sigma"`
	Gamma1      float64 `json:"gamma1"`
	Gamma1Sigma float64 `json:"gamma1_sigma"`
	// Fn is the natural frequency √γ0/2π in Hz, Zeta the damping ratio.
	Fn         float64 `json:"fn_hz"`
	FnSigma    float64 `json:"fn_sigma"`
	Zeta       float64 `json:"zeta"`
	ZetaSigma  float64 `json:"zeta_sigma"`
	OmegaN     float64 `json:"omega_n"`
	DampedFreq float64 `json:"damped_freq_hz"`
	Regime     string  `json:"regime"`
	Certified  bool    `json:"certified"`
	// Certificate is the full verdict: coverage, conditioning, residual.
	Certificate window.Verdict `json:"certificate"`
	Encoder     EncoderInfo    `json:"encoder"`
	// Amplitude is how far the window's region moved and the smallest
	// motion its video resolves; absent when it could not be measured.
	Amplitude *Amplitude `json:"amplitude,omitempty"`
	// Ambient is the record and the evidence of an ambient camera's
	// estimate (config mode ambient), whose window is its record; absent
	// for the other modes.
	Ambient *Ambient `json:"ambient,omitempty"`
	// Mode is the mode this estimate is about, for a window that rings
	// in several (each published on its own: ModeSubject); absent for a
	// window read as one mode.
	Mode *Mode `json:"mode,omitempty"`
}

// Ambient is what an ambient estimate (package ambient) rests on: the
// record its correlation function was summed over and the checks of that
// function. NewAmbient makes one.
type Ambient struct {
	// Record is the record's length in seconds, Frames its frames: every
	// pair of frames within the longest lag is a trigger of the
	// correlation function (breaks in the stream count as frames here but
	// pair with none).
	Record float64 `json:"record_s"`
	Frames int     `json:"frames"`
	// Lags is how many lags of the correlation function were fitted, and
	// LagSpan the longest in seconds.
	Lags    int     `json:"lags"`
	LagSpan float64 `json:"lag_span_s"`
	// Groups is how many groups of the record the jackknife deleted in
	// turn for the estimate's σ.
	Groups int `json:"groups"`
	// Kurtosis is the displacement's (3 for a response to broadband
	// forcing, 1.5 for a sinusoid's).
	Kurtosis float64 `json:"kurtosis"`
	// Bend is ζ fitted over a longer span of lags less ζ over the fitted
	// ones, BendSigma its σ: one mode's envelope does not bend, two close
	// modes' does. Both 0 when it was not measured.
	Bend      float64 `json:"bend"`
	BendSigma float64 `json:"bend_sigma"`
	// ResolvesHz is the record's resolution of close modes
	// (ambient.Estimate.ResolvesHz): the bend test refuses about half the
	// pairs of equal modes that far apart; a closer pair mostly reads as
	// one mode at their mean frequency. 0 when not measured
	// (WithResolves).
	ResolvesHz float64 `json:"resolves_hz,omitempty"`
	// Peak is the signature's part at the mode below the one mode fitted
	// over the lags predicts, over one decay time (ambient.Estimate.Peak),
	// PeakSigma its σ: two close modes beat and read below zero. Both
	// absent when not measured (WithPeak).
	Peak      float64 `json:"peak,omitempty"`
	PeakSigma float64 `json:"peak_sigma,omitempty"`
}

// WithPeak sets a's Peak and PeakSigma to p and sigma, or both to 0
// (absent) unless p is finite and sigma positive and finite, and returns
// a.
func (a *Ambient) WithPeak(p, sigma float64) *Ambient {
	a.Peak, a.PeakSigma = 0, 0
	if !math.IsNaN(p) && !math.IsInf(p, 0) && sigma > 0 && !math.IsInf(sigma, 0) {
		a.Peak, a.PeakSigma = p, sigma
	}
	return a
}

// WithResolves sets a's ResolvesHz to hz, or to 0 (absent) when hz is
// not a positive finite number, and returns a.
func (a *Ambient) WithResolves(hz float64) *Ambient {
	a.ResolvesHz = 0
	if hz > 0 && !math.IsInf(hz, 0) {
		a.ResolvesHz = hz
	}
	return a
}

// NewAmbient returns the ambient facts of an estimate, with the numbers a
// message cannot carry (JSON has no NaN) made 0: a kurtosis that was not
// measured, or a bend and its σ (both, so that a bend is never read
// against a σ it does not have).
func NewAmbient(record float64, frames, lags int, lagSpan float64, groups int, kurtosis, bend, bendSigma float64) *Ambient {
	a := &Ambient{Record: record, Frames: frames, Lags: lags, LagSpan: lagSpan, Groups: groups, Kurtosis: kurtosis, Bend: bend, BendSigma: bendSigma}
	if !finiteNonNegative(a.Record) {
		a.Record = 0
	}
	if !finiteNonNegative(a.LagSpan) {
		a.LagSpan = 0
	}
	if !finiteNonNegative(a.Kurtosis) {
		a.Kurtosis = 0
	}
	if math.IsNaN(a.Bend) || math.IsInf(a.Bend, 0) || !finiteNonNegative(a.BendSigma) {
		a.Bend, a.BendSigma = 0, 0
	}
	return a
}

// check tests the values the schema constrains.
func (a *Ambient) check() error {
	switch {
	case !(a.Record > 0):
		return fmt.Errorf("field ambient.record_s: is %g, want > 0", a.Record)
	case a.Frames < 1:
		return fmt.Errorf("field ambient.frames: is %d, want ≥ 1", a.Frames)
	case a.Lags < 1:
		return fmt.Errorf("field ambient.lags: is %d, want ≥ 1", a.Lags)
	case a.Groups < 2:
		return fmt.Errorf("field ambient.groups: is %d, want ≥ 2", a.Groups)
	case a.LagSpan < 0, a.Kurtosis < 0, a.BendSigma < 0, a.ResolvesHz < 0, a.PeakSigma < 0:
		return fmt.Errorf("field ambient: lag_span_s %g, kurtosis %g, bend_sigma %g, resolves_hz %g, peak_sigma %g, want each ≥ 0", a.LagSpan, a.Kurtosis, a.BendSigma, a.ResolvesHz, a.PeakSigma)
	}
	return nil
}

// Amplitude is a window's displacement amplitude and noise floor, in the
// source's pixels and, when the camera (or zone) has a scale
// (config.Scale), in millimetres on the structure. The millimetre fields
// are all present or all absent; NewAmplitude makes one.
type Amplitude struct {
	// Px is the displacement's amplitude in source pixels (√2 × its rms
	// about the window's mean: a sinusoid's peak).
	Px float64 `json:"px"`
	// NoisePx is the rms of the readout's noise in source pixels: the
	// smallest motion the video resolves.
	NoisePx float64 `json:"noise_px"`
	// MM and NoiseMM are Px and NoisePx in millimetres, MMPerPx the
	// scale that made them; absent without a scale.
	MM      *float64 `json:"mm,omitempty"`
	NoiseMM *float64 `json:"noise_mm,omitempty"`
	MMPerPx *float64 `json:"mm_per_px,omitempty"`
	// Readout names what measured the displacement: "flow" (intensity
	// gradients) or a tracked object.
	Readout string `json:"readout"`
	// HeldShare is the share of the window's frames in which the
	// stream's codec held the moving pixels still (flow.HeldShare):
	// motion below its quantiser, dropped; absent when none were.
	HeldShare float64 `json:"held_share,omitempty"`
}

// NewAmplitude returns the amplitude px and noise floor noisePx (source
// pixels) measured by readout, in millimetres too when mmPerPx is above 0
// (and finite). It returns nil when px or noisePx is negative or not
// finite: a message cannot carry such an amplitude (JSON has no NaN), and
// none is better than a wrong one.
func NewAmplitude(px, noisePx float64, readout string, mmPerPx float64) *Amplitude {
	if !finiteNonNegative(px) || !finiteNonNegative(noisePx) {
		return nil
	}
	a := &Amplitude{Px: px, NoisePx: noisePx, Readout: readout}
	if mmPerPx > 0 && !math.IsInf(mmPerPx, 0) {
		mm, noise, scale := px*mmPerPx, noisePx*mmPerPx, mmPerPx
		a.MM, a.NoiseMM, a.MMPerPx = &mm, &noise, &scale
	}
	return a
}

// finiteNonNegative reports whether v is a finite number ≥ 0.
func finiteNonNegative(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }

// check tests the values the schema constrains: px and noise_px ≥ 0,
// held_share in [0, 1], and mm, noise_mm ≥ 0 with mm_per_px > 0, all three
// or none.
func (a *Amplitude) check() error {
	if a.HeldShare > 1 {
		return fmt.Errorf("field amplitude.held_share: is %g, want ≤ 1", a.HeldShare)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"px", a.Px}, {"noise_px", a.NoisePx}, {"held_share", a.HeldShare}} {
		if f.v < 0 {
			return fmt.Errorf("field amplitude.%s: is %g, want ≥ 0", f.name, f.v)
		}
	}
	mm := []struct {
		name string
		v    *float64
	}{{"mm", a.MM}, {"noise_mm", a.NoiseMM}, {"mm_per_px", a.MMPerPx}}
	set := 0
	for _, f := range mm {
		if f.v != nil {
			set++
		}
	}
	if set == 0 {
		return nil
	}
	for _, f := range mm {
		switch {
		case f.v == nil:
			return fmt.Errorf("field amplitude.%s: missing; mm, noise_mm and mm_per_px come together", f.name)
		case f.name == "mm_per_px" && !(*f.v > 0):
			return fmt.Errorf("field amplitude.%s: is %g, want > 0", f.name, *f.v)
		case *f.v < 0:
			return fmt.Errorf("field amplitude.%s: is %g, want ≥ 0", f.name, *f.v)
		}
	}
	return nil
}

// EncoderInfo says which encoder made an estimate and what it cost.
type EncoderInfo struct {
	Version    int     `json:"version"`
	TotalSteps int64   `json:"total_steps"`
	Steps      int     `json:"steps"`
	Cold       bool    `json:"cold"`
	TrainMS    float64 `json:"train_ms"`
}

// Diagnostic is every window's verdict, certified or not, on
// physd.<camera>.diag, with the reasons in words.
type Diagnostic struct {
	Schema string `json:"schema"`
	// Node is the board that published the message (node.name), so that
	// a subscriber of a hub knows it; absent when unnamed.
	Node   string `json:"node,omitempty"`
	Camera string `json:"camera"`
	// Zone names the zone of Camera the message is about, for a camera
	// with zones (subject physd.<camera>.<zone>.<kind>); absent otherwise.
	Zone        string    `json:"zone,omitempty"`
	WindowStart time.Time `json:"window_start"`
	WindowEnd   time.Time `json:"window_end"`
	Frames      int       `json:"frames"`
	Events      int       `json:"events"`
	// Bin is the decimation in time (as Estimate.Bin); absent when
	// none.
	Bin int `json:"bin,omitempty"`
	// Verdict is certified, undamped-uncertified, not-certified, error
	// or skipped.
	Verdict   string   `json:"verdict"`
	Certified bool     `json:"certified"`
	Reasons   []string `json:"reasons,omitempty"`
	// The estimate, when one was made (also for uncertified windows).
	Gamma0      *float64        `json:"gamma0,omitempty"`
	Gamma1      *float64        `json:"gamma1,omitempty"`
	Gamma0Sigma *float64        `json:"gamma0_sigma,omitempty"`
	Gamma1Sigma *float64        `json:"gamma1_sigma,omitempty"`
	Certificate *window.Verdict `json:"certificate,omitempty"`
	Encoder     *EncoderInfo    `json:"encoder,omitempty"`
	// Amplitude is the window's displacement amplitude and noise floor,
	// certified or not (a window refused for too little motion shows how
	// little); absent when it was not measured.
	Amplitude *Amplitude `json:"amplitude,omitempty"`
	// Ambient is the record and the evidence of an ambient camera's
	// window (its record), certified or not; absent for the other modes
	// and when no estimate was made.
	Ambient *Ambient `json:"ambient,omitempty"`
	// Modes are the window's modes when it rings in several, each
	// fitted and certified on its own; absent otherwise.
	Modes []ModeSummary `json:"modes,omitempty"`
	// LoneEvent marks the window of a lone event (the events mode's
	// single trajectory, published as a diagnostic only). Not in the
	// JSON: it only tells the message's id from a window's (ID).
	LoneEvent bool `json:"-"`
}

// Status is a camera's heartbeat on physd.<camera>.status.
type Status struct {
	Schema string `json:"schema"`
	// Node is the board that published the message (node.name), so that
	// a subscriber of a hub knows it; absent when unnamed.
	Node   string `json:"node,omitempty"`
	Camera string `json:"camera"`
	// Zone names the zone of Camera the message is about, for a camera
	// with zones (subject physd.<camera>.<zone>.<kind>); absent otherwise.
	Zone   string    `json:"zone,omitempty"`
	Time   time.Time `json:"time"`
	State  State     `json:"state"`
	Source string    `json:"source"`
	Error  string    `json:"error,omitempty"`
	Mode   string    `json:"mode"`
	// Counters since the daemon started.
	Frames         int64          `json:"frames"`
	FramesDropped  int64          `json:"frames_dropped"`
	Breaks         int64          `json:"breaks"`
	Windows        map[string]int `json:"windows"`
	WindowsSkipped int64          `json:"windows_skipped"`
	Events         int64          `json:"events"`
	Reconnects     int64          `json:"reconnects"`
	Encoder        EncoderInfo    `json:"encoder"`
	// LastEstimate is the newest certified estimate's window end.
	LastEstimate *time.Time `json:"last_estimate,omitempty"`
	Baseline     *Baseline  `json:"baseline,omitempty"`
	// Charts are the alerts' control charts of f_n and ζ (alerts.method
	// chart): state, statistic, limits, baseline (docs/alerts.md).
	Charts []ChartReading `json:"charts,omitempty"`
}

// EvidenceFile is one file of an alert's evidence.
type EvidenceFile struct {
	// Kind is "clip" (the video around the alert) or "figure" (a PNG of
	// the window that raised it: latent, fit and spectrum).
	Kind string `json:"kind"`
	// Name is the file's path under the evidence directory
	// (<state_dir>/evidence): <camera>/<file>. The dashboard serves it
	// at /evidence/<name>.
	Name string `json:"name"`
	// SHA256 is the file's hex SHA-256 and Bytes its size, once written.
	SHA256 string `json:"sha256,omitempty"`
	Bytes  int64  `json:"bytes,omitempty"`
	// Pending marks a clip still being recorded.
	Pending bool `json:"pending,omitempty"`
	// Start and End are the clip's presentation (the wall clock of its
	// first and past its last picture).
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// Codec is the clip's (its packets as the camera sent them), and
	// Copied whether they are (no re-encoding).
	Codec  string `json:"codec,omitempty"`
	Copied bool   `json:"copied,omitempty"`
	// Note says why a clip was not kept or is shorter than asked.
	Note string `json:"note,omitempty"`
}

// Evidence is published when a raised alert's evidence is all written:
// it names the alert (its message id) and each file with its SHA-256.
type Evidence struct {
	Schema string `json:"schema"`
	Node   string `json:"node,omitempty"`
	Camera string `json:"camera"`
	Zone   string `json:"zone,omitempty"`
	// Mode is the alert's mode, for a camera whose windows ring in
	// several.
	Mode *Mode `json:"mode,omitempty"`
	// Alert is the raised alert's message id (its Nats-Msg-Id) and
	// AlertTime its time.
	Alert     string    `json:"alert"`
	AlertTime time.Time `json:"alert_time"`
	// Time is when the evidence was complete.
	Time  time.Time      `json:"time"`
	Files []EvidenceFile `json:"files"`
	// Note says why there is no clip (the source hands physd no
	// packets, the camera sent none in the span, it could not be written).
	Note string `json:"note,omitempty"`
}

// Baseline is a camera's reference f_n and ζ for alerts.
type Baseline struct {
	Fn      float64   `json:"fn_hz"`
	Zeta    float64   `json:"zeta"`
	Windows int       `json:"windows"`
	Since   time.Time `json:"since"`
}

// Alert reports a structural change on physd.<camera>.alert: f_n or ζ
// drifted beyond the configured limits from the camera's baseline for
// the configured number of consecutive certified windows (State
// "raised"), or came back (State "cleared").
type Alert struct {
	Schema string `json:"schema"`
	// Node is the board that published the message (node.name), so that
	// a subscriber of a hub knows it; absent when unnamed.
	Node   string `json:"node,omitempty"`
	Camera string `json:"camera"`
	// Zone names the zone of Camera the message is about, for a camera
	// with zones (subject physd.<camera>.<zone>.<kind>); absent otherwise.
	Zone      string     `json:"zone,omitempty"`
	Time      time.Time  `json:"time"`
	State     AlertState `json:"state"`
	Reasons   []string   `json:"reasons"`
	Baseline  Baseline   `json:"baseline"`
	Fn        float64    `json:"fn_hz"`
	Zeta      float64    `json:"zeta"`
	FnDrift   float64    `json:"fn_drift"`
	ZetaDrift float64    `json:"zeta_drift"`
	Windows   int        `json:"windows"`
	// WindowStart and WindowEnd are the window whose estimate raised or
	// cleared the alert. Not in the JSON (schema v1 has no such fields):
	// they make the message's id (ID), so a decoded alert has them zero;
	// its id is its Nats-Msg-Id header.
	WindowStart time.Time `json:"-"`
	WindowEnd   time.Time `json:"-"`
	// Mode is the mode whose estimates raised or cleared the alert, for a
	// camera whose windows ring in several; absent otherwise.
	Mode *Mode `json:"mode,omitempty"`
	// Charts are the control charts of f_n and ζ when the alerts run
	// them (alerts.method chart; docs/alerts.md): the statistic, its
	// limits and the baseline that raised or cleared the alert. Baseline
	// is then the f_n and ζ charts' baseline means and FnDrift, ZetaDrift
	// the last points' relative distance from what the baselines expect.
	Charts []ChartReading `json:"charts,omitempty"`
	// Evidence names the files physd keeps of a raised alert
	// (alerts.evidence; docs/alerts.md): the figure of the window that
	// raised it, written at once (with its SHA-256), and the clip around
	// it, written Post later — Pending here, then named with its SHA-256
	// by the Evidence message on <prefix>.<camera>[.<zone>].evidence.
	Evidence []EvidenceFile `json:"evidence,omitempty"`
}

// ChartReading is one control chart of a certified quantity as an alert
// or a status carries it (package health; docs/alerts.md).
type ChartReading struct {
	// Quantity is "fn_hz" or "zeta".
	Quantity string `json:"quantity"`
	// State is learning, normal or alarm.
	State string `json:"state"`
	// Statistic is |Z| in units of Z's spread over the baseline: the
	// alert is raised beyond Limit and cleared within Clear. Z is the
	// moving average (weight Lambda) of the standardised residuals.
	Statistic float64 `json:"statistic"`
	Z         float64 `json:"z"`
	Limit     float64 `json:"limit"`
	Clear     float64 `json:"clear"`
	Lambda    float64 `json:"lambda"`
	// Expected is the baseline's value at the last point's covariates and
	// Last the point (the interval's mean of certified estimates).
	Expected float64 `json:"expected,omitempty"`
	Last     float64 `json:"last,omitempty"`
	// ResidualSD is the baseline regression's residual spread, SpreadZ
	// Z's spread over the baseline, Mean the baseline points' mean.
	ResidualSD float64 `json:"residual_sd,omitempty"`
	SpreadZ    float64 `json:"spread_z,omitempty"`
	Mean       float64 `json:"mean,omitempty"`
	// Coefficients are the regression's: "const" and one per term.
	Coefficients map[string]float64 `json:"coefficients,omitempty"`
	// BaselinePoints, BaselineFrom and BaselineTo describe the baseline
	// (while learning, the points so far); Points are the points charted
	// since and Skipped those without their covariates.
	BaselinePoints int       `json:"baseline_points"`
	BaselineFrom   time.Time `json:"baseline_from,omitzero"`
	BaselineTo     time.Time `json:"baseline_to,omitzero"`
	Points         int       `json:"points"`
	Skipped        int       `json:"skipped"`
}

// Message is a message physd publishes: *Estimate, *Diagnostic, *Status,
// *Alert or *Evidence. Its JSON is the message's data.
type Message interface {
	// Kind is the message's kind, the last token of its subject.
	Kind() Kind
	// Key is the camera, or "<camera>.<zone>", of its subject (Key).
	Key() string
	// ID is its Nats-Msg-Id: JetStream deduplicates by it, and physd
	// alerts keeps the ids of the alerts it handled, so the format is
	// fixed (wire's tests pin it).
	ID() string
}

// Kind is KindEstimate.
func (e *Estimate) Kind() Kind { return KindEstimate }

// Key is the estimate's camera[.zone].
func (e *Estimate) Key() string { return Key(e.Camera, e.Zone) }

// ID is <node>.<camera>[.<zone>].estimate.<start ns>.<end ns> (MsgID).
func (e *Estimate) ID() string {
	return MsgID(e.Node, e.Key(), modeKind(string(KindEstimate), labelOf(e)), e.WindowStart, e.WindowEnd)
}

// Kind is KindDiagnostic.
func (d *Diagnostic) Kind() Kind { return KindDiagnostic }

// Key is the diagnostic's camera[.zone].
func (d *Diagnostic) Key() string { return Key(d.Camera, d.Zone) }

// ID is <node>.<camera>[.<zone>].diag-window.<start ns>.<end ns>, or
// diag-event for a lone event (MsgID).
func (d *Diagnostic) ID() string {
	what := "window"
	if d.LoneEvent {
		what = "event"
	}
	return MsgID(d.Node, d.Key(), string(KindDiagnostic)+"-"+what, d.WindowStart, d.WindowEnd)
}

// Kind is KindStatus.
func (s *Status) Kind() Kind { return KindStatus }

// Key is the status's camera[.zone].
func (s *Status) Key() string { return Key(s.Camera, s.Zone) }

// ID is <camera>[.<zone>].status.<time ns>. It has no node, unlike the
// other kinds' ids: heartbeats are not kept in JetStream, so no stream,
// a hub's included, deduplicates by it.
func (s *Status) ID() string {
	return fmt.Sprintf("%s.%s.%d", s.Key(), KindStatus, s.Time.UnixNano())
}

// Kind is KindAlert.
func (a *Alert) Kind() Kind { return KindAlert }

// Key is the alert's camera[.zone].
func (a *Alert) Key() string { return Key(a.Camera, a.Zone) }

// ID is <node>.<camera>[.<zone>].alert-<state>.<start ns>.<end ns> of the
// window that raised or cleared it (MsgID): the same change, published
// again, has the same id.
func (a *Alert) ID() string {
	return MsgID(a.Node, a.Key(), modeKind(string(KindAlert), labelOf(a))+"-"+string(a.State), a.WindowStart, a.WindowEnd)
}

// Kind is KindEvidence.
func (e *Evidence) Kind() Kind { return KindEvidence }

// Key is the evidence's camera[.zone].
func (e *Evidence) Key() string { return Key(e.Camera, e.Zone) }

// ID is the alert's id with .evidence after it: one message per alert.
func (e *Evidence) ID() string { return e.Alert + "." + string(KindEvidence) }

// MsgID is the Nats-Msg-Id of a message about one window: the same
// window always gets the same id, so JetStream drops a re-publication.
// The node (the board's name) comes first, so that ids stay unique in a
// hub's aggregate stream, where every board's messages meet and two
// boards may have a camera of the same name; an empty node leaves it out
// (<camera>.<kind>.<start ns>.<end ns>, physd's ids before fleets).
//
// kind is the message's kind, with its variant for diagnostics and
// alerts (diag-window, diag-event, alert-raised, alert-cleared); the
// messages' ID methods pass it.
func MsgID(node, camera, kind string, start, end time.Time) string {
	if node == "" {
		return fmt.Sprintf("%s.%s.%d.%d", camera, kind, start.UnixNano(), end.UnixNano())
	}
	return fmt.Sprintf("%s.%s.%s.%d.%d", node, camera, kind, start.UnixNano(), end.UnixNano())
}

// DecodeEstimate parses an estimate message and checks it against its
// schema (docs/schema/estimate.v1.json): the schema string, every required
// field present, and the values a certified estimate has (a camera name,
// frames and events ≥ 1, a bin ≥ 2 if any, σ ≥ 0, a known regime, certified true, the window
// not ending before it starts, an amplitude's numbers ≥ 0 and its
// millimetres all there or none, an ambient record's counts). An error
// names the field.
func DecodeEstimate(data []byte) (*Estimate, error) {
	var e Estimate
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("estimate message: %w", err)
	}
	if e.Schema != SchemaEstimate {
		return nil, fmt.Errorf("estimate message: schema %q, want %q", e.Schema, SchemaEstimate)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, fmt.Errorf("estimate message: %w", err)
	}
	for _, k := range []string{"schema", "camera", "window_start", "window_end", "frames", "events", "gamma0", "gamma0_sigma",
		"gamma1", "gamma1_sigma", "fn_hz", "fn_sigma", "zeta", "zeta_sigma", "omega_n", "damped_freq_hz", "regime", "certified",
		"certificate", "encoder"} { // the schema's required fields
		if _, ok := keys[k]; !ok {
			return nil, fmt.Errorf("estimate message: field %s: missing", k)
		}
	}
	if err := e.check(); err != nil {
		return nil, fmt.Errorf("estimate message: %w", err)
	}
	return &e, nil
}

// check tests the values the estimate schema constrains.
func (e *Estimate) check() error {
	switch {
	case !config.ValidCameraName(e.Camera):
		return fmt.Errorf("field camera: %q is not a camera name (1 to 64 of A-Z a-z 0-9 _ -)", e.Camera)
	case e.WindowEnd.Before(e.WindowStart):
		return fmt.Errorf("field window_end: %v is before window_start %v", e.WindowEnd, e.WindowStart)
	case e.Frames < 1:
		return fmt.Errorf("field frames: is %d, want ≥ 1", e.Frames)
	case e.Events < 1:
		return fmt.Errorf("field events: is %d, want ≥ 1", e.Events)
	case e.Bin != 0 && e.Bin < 2:
		return fmt.Errorf("field bin: is %d, want ≥ 2 (absent when each frame is one camera frame)", e.Bin)
	case !e.Certified:
		return fmt.Errorf("field certified: is false; the estimate subject carries certified estimates only")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"gamma0_sigma", e.Gamma0Sigma}, {"gamma1_sigma", e.Gamma1Sigma}, {"fn_sigma", e.FnSigma}, {"zeta_sigma", e.ZetaSigma}} {
		if f.v < 0 {
			return fmt.Errorf("field %s: is %g, want ≥ 0", f.name, f.v)
		}
	}
	if e.Amplitude != nil {
		if err := e.Amplitude.check(); err != nil {
			return err
		}
	}
	if e.Ambient != nil {
		if err := e.Ambient.check(); err != nil {
			return err
		}
	}
	switch estimator.Regime(e.Regime) {
	case estimator.Underdamped, estimator.Undamped, estimator.Critical, estimator.Overdamped, estimator.Unstable:
		return nil
	}
	return fmt.Errorf("field regime: is %q, want underdamped, undamped, critical, overdamped or unstable", e.Regime)
}
