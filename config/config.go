package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is the whole of physd's configuration. The zero value is not
// useful; start from Default or use Parse or Load.
type Config struct {
	// StateDir is where physd keeps its state (encoder checkpoints,
	// baselines). Empty selects the default; see StateDir.
	StateDir string `yaml:"state_dir"`
	// Node names this physd among the boards of a fleet.
	Node Node `yaml:"node"`
	// Log configures the daemon's log.
	Log Log `yaml:"log"`
	// HTTP configures the status and metrics endpoint.
	HTTP HTTP `yaml:"http"`
	// WebRTC restricts where WebRTC media (whip and whep cameras) flows.
	WebRTC WebRTC `yaml:"webrtc"`
	// NATS configures where estimates are published.
	NATS NATS `yaml:"nats"`
	// Windows are the sliding analysis windows, for every camera unless a
	// camera overrides them.
	Windows Windows `yaml:"windows"`
	// Events configures multi-trajectory mode (cameras with mode events).
	Events Events `yaml:"events"`
	// Estimator configures the per-window fit.
	Estimator Estimator `yaml:"estimator"`
	// Certify holds the certification thresholds.
	Certify Certify `yaml:"certify"`
	// Alerts configures drift alerts against a baseline.
	Alerts Alerts `yaml:"alerts"`
	// Cameras are the watched objects. Default has one, a synthetic
	// underdamped pendulum; an explicit empty list means no cameras.
	Cameras []Camera `yaml:"cameras"`
}

// Node names one physd (one board) in a fleet of boards that share a hub.
type Node struct {
	// Name is the board's name: it goes into every message's "node"
	// field and Nats-Msg-Id, and names the embedded server and its
	// JetStream domain, so it must be unique in a fleet. Same form as a
	// camera name. Empty means the host name (see EffectiveName).
	Name string `yaml:"name"`
}

// EffectiveName returns Name, or when it is empty the host name made into
// a valid node name: its first label, with every character outside
// A-Z a-z 0-9 _ - replaced by '-', at most MaxCameraNameLen long; "physd"
// if there is no usable host name.
func (n Node) EffectiveName() string {
	if n.Name != "" {
		return n.Name
	}
	host, err := os.Hostname()
	if err != nil {
		return "physd"
	}
	return hostNodeName(host)
}

// hostNodeName turns a host name into a node name (see EffectiveName).
func hostNodeName(host string) string {
	host, _, _ = strings.Cut(host, ".")
	b := []byte(host)
	for i, c := range b {
		if !ValidCameraName(string(c)) {
			b[i] = '-'
		}
	}
	if len(b) > MaxCameraNameLen {
		b = b[:MaxCameraNameLen]
	}
	if len(b) == 0 {
		return "physd"
	}
	return string(b)
}

// Log levels accepted in Log.Level.
const (
	LevelDebug = "debug"
	LevelInfo  = "info"
	LevelWarn  = "warn"
	LevelError = "error"
)

// Log formats accepted in Log.Format.
const (
	FormatAuto = "auto"
	FormatText = "text"
	FormatJSON = "json"
)

// Log configures the daemon's log.
type Log struct {
	// Level is the least severe level logged: debug, info, warn or error.
	Level string `yaml:"level"`
	// Format is text, json, or auto (json under systemd, that is when
	// $JOURNAL_STREAM is set, else text).
	Format string `yaml:"format"`
}

// SlogLevel returns Level as a slog.Level (slog.LevelInfo for an unknown
// level, which Parse never returns).
func (l Log) SlogLevel() slog.Level {
	switch l.Level {
	case LevelDebug:
		return slog.LevelDebug
	case LevelWarn:
		return slog.LevelWarn
	case LevelError:
		return slog.LevelError
	}
	return slog.LevelInfo
}

// EffectiveFormat resolves FormatAuto: FormatJSON when $JOURNAL_STREAM is
// set (the process runs under systemd with its output in the journal),
// FormatText otherwise. Other formats are returned unchanged.
func (l Log) EffectiveFormat() string {
	if l.Format != FormatAuto && l.Format != "" {
		return l.Format
	}
	if os.Getenv("JOURNAL_STREAM") != "" {
		return FormatJSON
	}
	return FormatText
}

// HTTP configures the status endpoint.
type HTTP struct {
	// Listen is the host:port the endpoint listens on; empty disables it.
	Listen string `yaml:"listen"`
	// Token, when set, is the bearer token clients must present.
	Token Secret `yaml:"token"`
	// TLSCertFile and TLSKeyFile, set together, serve HTTPS: phones open
	// their camera for the publish page only on a secure origin.
	TLSCertFile string `yaml:"tls_cert_file"`
	TLSKeyFile  string `yaml:"tls_key_file"`
	// ClientCAFile (PEM, with TLSCertFile) requires every client to present
	// a certificate signed by one of these CAs: mutual TLS instead of, or as
	// well as, the token.
	ClientCAFile string `yaml:"client_ca_file"`
	// RateLimit is how many requests a second each client may make on
	// average (a token bucket per client IP address; IPv6 clients by their
	// /64 prefix; X-Forwarded-For is not trusted). A client over it gets
	// 429 Too Many Requests with Retry-After, before its token is checked.
	// An open event stream counts once. 0 disables the limit.
	RateLimit float64 `yaml:"rate_limit"`
	// RateBurst is how many requests a client may make at once (the
	// bucket's size): at least 1 while RateLimit is above 0.
	RateBurst int `yaml:"rate_burst"`
	// Pprof serves the Go runtime's profiles (net/http/pprof) under
	// /debug/pprof/, to operators (http.token) like /metrics: where a
	// long-running board's memory and CPU go. Off by default.
	Pprof bool `yaml:"pprof"`
}

// WebRTC restricts ICE, for whip and whep cameras.
type WebRTC struct {
	// Interfaces are the network interfaces ICE may use ("eth0", "wlan0";
	// "lo" also allows loopback); empty allows all but loopback.
	Interfaces []string `yaml:"interfaces"`
	// Addresses are the local addresses or CIDR prefixes ICE may use
	// ("192.168.1.0/24", "127.0.0.1"); empty allows all.
	Addresses []string `yaml:"addresses"`
	// UDPPort carries all WebRTC media on this one UDP port (one firewall
	// rule); 0 uses ephemeral ports.
	UDPPort int `yaml:"udp_port"`
}

// NATS configures the NATS connection.
type NATS struct {
	// URLs are the servers to connect to (nats://, tls://, ws:// or wss://
	// URLs, or host:port). Empty starts an embedded nats-server instead.
	URLs []string `yaml:"urls"`
	// Embedded configures the embedded server used when URLs is empty.
	Embedded Embedded `yaml:"embedded"`
	// TLS configures TLS to the servers in URLs.
	TLS TLS `yaml:"tls"`
	// CredentialsFile is the path of a .creds file (user JWT and nkey seed).
	CredentialsFile string `yaml:"credentials_file"`
	// NKeySeed is an nkey seed for nkey authentication.
	NKeySeed Secret `yaml:"nkey_seed"`
	// Token is a token for token authentication. At most one of
	// CredentialsFile, NKeySeed and Token may be set.
	Token Secret `yaml:"token"`
	// SubjectPrefix starts every subject physd publishes on: one or more
	// dot-separated tokens without wildcards or white space.
	SubjectPrefix string `yaml:"subject_prefix"`
	// JetStream configures the stream that keeps estimates.
	JetStream JetStream `yaml:"jetstream"`
	// Heartbeat is the period of the status heartbeat.
	Heartbeat time.Duration `yaml:"heartbeat"`
	// ReconnectWait is the pause between reconnection attempts.
	ReconnectWait time.Duration `yaml:"reconnect_wait"`
}

// Embedded configures the embedded nats-server.
type Embedded struct {
	// Listen is the host:port the embedded server listens on.
	Listen string `yaml:"listen"`
	// JetStream enables JetStream in the embedded server.
	JetStream bool `yaml:"jetstream"`
	// Domain is the embedded server's JetStream domain: a hub reaches
	// this board's stream through $JS.<Domain>.API across the leaf node
	// connection. Empty means the node name (Node.EffectiveName).
	Domain string `yaml:"domain"`
	// LeafNodes connects the embedded server to a hub as a leaf node.
	LeafNodes LeafNodes `yaml:"leafnodes"`
	// TLS is the embedded server's own certificate (cert_file, key_file)
	// and, with ca_file, the authority its clients' certificates must come
	// from. Required when Listen is beyond loopback.
	TLS TLS `yaml:"tls"`
	// MQTT is nats-server's own MQTT listener on the embedded server, for
	// Home Assistant, Node-RED and other MQTT clients (docs/mqtt.md).
	MQTT MQTT `yaml:"mqtt"`
}

// MQTT configures the embedded server's MQTT listener and the Home
// Assistant discovery physd publishes through it. MQTT topics are NATS
// subjects with "/" for ".": physd/<camera>/estimate and the like.
type MQTT struct {
	// Listen is its host:port ("": no MQTT listener). Clients log in as
	// user "physd" with the password physd keeps in
	// <state_dir>/nats/mqtt.password: read-only on physd's topics, and
	// Home Assistant's own (its status, to hear it start).
	Listen string `yaml:"listen"`
	// DiscoveryPrefix is Home Assistant's discovery prefix ("": none
	// published).
	DiscoveryPrefix string `yaml:"discovery_prefix"`
}

// LeafNodes is the embedded server's leaf node connection to a hub: the
// board keeps serving its own clients and JetStream when the hub is away,
// and the hub sources the board's stream when it is there.
type LeafNodes struct {
	// URLs are the hub's leaf node listeners (nats-leaf://, tls:// or
	// nats:// URLs, or host:port), tried in turn: list every hub node so
	// that the board moves to another when one is gone. Empty: no hub.
	URLs []string `yaml:"urls"`
	// TLS configures TLS to the hub.
	TLS TLS `yaml:"tls"`
	// CredentialsFile is the path of a .creds file (user JWT and nkey
	// seed) the board presents to the hub.
	CredentialsFile string `yaml:"credentials_file"`
}

// EffectiveDomain returns Domain, or node when it is empty.
func (e Embedded) EffectiveDomain(node string) string {
	if e.Domain != "" {
		return e.Domain
	}
	return node
}

// TLS holds the file names for TLS to NATS. All empty means the system's
// roots and no client certificate.
type TLS struct {
	// CAFile is a PEM bundle of the certificate authorities to trust.
	CAFile string `yaml:"ca_file"`
	// CertFile is the client certificate (PEM); set together with KeyFile.
	CertFile string `yaml:"cert_file"`
	// KeyFile is the client certificate's private key (PEM).
	KeyFile string `yaml:"key_file"`
}

// SourceTLS says how physd checks an rtsps:// camera's certificate. All
// empty means the system's certificate authorities and the URL's host
// name. Set at most one field.
type SourceTLS struct {
	// CAFile is a PEM bundle of the certificate authorities to trust in
	// place of the system's (the site's own CA).
	CAFile string `yaml:"ca_file"`
	// Fingerprint pins the camera's own certificate by its SHA-256: 64 hex
	// digits, colons allowed, "sha256:" optional, as
	// `openssl x509 -noout -fingerprint -sha256` prints it. The way to
	// trust a camera's self-signed certificate; the error physd logs for
	// an untrusted camera names the fingerprint it presented.
	Fingerprint string `yaml:"fingerprint"`
	// InsecureSkipVerify accepts any certificate: the stream is encrypted,
	// but anyone on the network path can impersonate the camera.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
}

// FingerprintSHA256 returns Fingerprint as 32 bytes, or nil when it is
// empty.
func (t SourceTLS) FingerprintSHA256() ([]byte, error) {
	if t.Fingerprint == "" {
		return nil, nil
	}
	h := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(t.Fingerprint)), "sha256:")
	b, err := hex.DecodeString(strings.ReplaceAll(h, ":", ""))
	if err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("is %q, want a SHA-256 fingerprint: 64 hex digits, colons allowed, e.g. sha256:AB:CD:…", t.Fingerprint)
	}
	return b, nil
}

// JetStream configures the stream that keeps the published estimates.
type JetStream struct {
	// Enabled makes physd create (or update) the stream.
	Enabled bool `yaml:"enabled"`
	// Stream is the stream's name.
	Stream string `yaml:"stream"`
	// MaxAge is how long estimates are kept; 0 keeps them forever.
	MaxAge time.Duration `yaml:"max_age"`
}

// Windows are the sliding analysis windows.
type Windows struct {
	// Length is the span of one window (at least 0.4 s).
	Length time.Duration `yaml:"length"`
	// Hop is the step between window starts (0 < Hop ≤ Length).
	Hop time.Duration `yaml:"hop"`
	// MaxGap: a frame step longer than MaxGap × the nominal step is a gap,
	// and no window spans a gap. Must be > 1.
	MaxGap float64 `yaml:"max_gap"`
	// Bin decimates the frames in time before the windows are cut
	// (window.Binner: every Bin-th frame becomes the triangular-weighted
	// mean of the 2·Bin−1 around it): the line analyses fps/Bin frames a
	// second for about 1/Bin of the work. The ODE is unchanged by it; the
	// mode must stay well below the binned rate. BinAuto ("auto", the
	// default) lets each sliding-window line choose from its own
	// certified modes and its readouts' spectral lines (window.AutoBin,
	// window.AutoBinBand); 0 or 1: every frame as it comes. Not for ambient lines, whose readout already costs little a
	// frame; auto leaves event lines unbinned.
	Bin Bin `yaml:"bin"`
}

// Bin is a decimation in time: a number of frames (0 or 1: none), or
// BinAuto.
type Bin int

// BinAuto is the decimation "auto": chosen by the line (window.AutoBin,
// window.AutoBinBand).
const BinAuto Bin = -1

// String is "auto" for BinAuto, else the number.
func (b Bin) String() string {
	if b == BinAuto {
		return "auto"
	}
	return strconv.Itoa(int(b))
}

// Events configures multi-trajectory mode: the camera's video is cut into
// events (motion between quiet spells), and the last Keep events are fitted
// together once there are at least MinEvents.
type Events struct {
	// MinEvents is the number of events needed before a fit.
	MinEvents int `yaml:"min_events"`
	// Keep is the number of most recent events fitted together.
	Keep int `yaml:"keep"`
	// MotionThreshold is the mean absolute frame difference (fraction of
	// full scale) above which a frame counts as moving.
	MotionThreshold float64 `yaml:"motion_threshold"`
	// Quiet is how long the scene must stay still to end an event.
	Quiet time.Duration `yaml:"quiet"`
	// MaxLength cuts events longer than this.
	MaxLength time.Duration `yaml:"max_length"`
}

// Estimator configures the per-window fit.
type Estimator struct {
	// Preset is the training recipe, one of estimator.PresetNames()
	// (checked against Vocabulary.Presets).
	Preset string `yaml:"preset"`
	// StepsPerWindow is the number of Adam steps per window, warm-started
	// from the previous window.
	StepsPerWindow int `yaml:"steps_per_window"`
	// MaxWindowTime caps the compute per window; over budget, windows are
	// skipped or coarsened.
	MaxWindowTime time.Duration `yaml:"max_window_time"`
	// Replay is the number of recent windows replayed in each step.
	Replay int `yaml:"replay"`
	// Tau is the variance floor τ of the loss.
	Tau float64 `yaml:"tau"`
	// Lambda is the weight λ of the variance floor.
	Lambda float64 `yaml:"lambda"`
	// LREncoder is the encoder's Adam learning rate.
	LREncoder float64 `yaml:"lr_encoder"`
	// Seed seeds the encoder's random initialisation.
	Seed int64 `yaml:"seed"`
	// CheckpointEvery is the period of encoder checkpoints to the state
	// directory; 0 disables them.
	CheckpointEvery time.Duration `yaml:"checkpoint_every"`
	// Workers is how many goroutines one window's estimate spreads its
	// loops over; 0 means one per core. The default, 1, spends the least
	// CPU: the cameras already estimate side by side (as many at once as
	// there are cores), and handing a window's small loops to another
	// core costs more than it saves. More lowers a window's latency on a
	// board whose other cores are idle.
	Workers int `yaml:"workers"`
}

// Certify holds the certification thresholds (see window.Thresholds).
type Certify struct {
	// MinPsi is the least scale-normalised ψ_min accepted, in (0, 1]; 0
	// keeps the certificate's default (window.Thresholds: 0.1).
	MinPsi float64 `yaml:"min_psi"`
	// MaxRelResidual is the largest RMS residual relative to RMS z''; 0
	// keeps the certificate's default (0.5).
	MaxRelResidual float64 `yaml:"max_rel_residual"`
	// MaxRevisit is the largest revisit score accepted; 0 keeps the
	// certificate's default (2).
	MaxRevisit float64 `yaml:"max_revisit"`
	// MinWidth is the least covered fraction of the latent's range, in
	// (0, 1]; 0 keeps the certificate's default (0.05).
	MinWidth float64 `yaml:"min_width"`
	// MaxRelSigmaFn is the largest σ(f_n)/f_n a certified estimate may
	// carry; 0 keeps the certificate's default (0.01).
	MaxRelSigmaFn float64 `yaml:"max_rel_sigma_fn"`
	// MaxRelSigmaZeta and SigmaZetaFloor bound σ(ζ) of a certified
	// estimate to max(MaxRelSigmaZeta·ζ, SigmaZetaFloor); 0 keeps the
	// certificate's defaults (0.3 and 0.005).
	MaxRelSigmaZeta float64 `yaml:"max_rel_sigma_zeta"`
	SigmaZetaFloor  float64 `yaml:"sigma_zeta_floor"`
}

// Alerts configures structural-health alerts (docs/alerts.md). Method
// "chart" (the default) runs a control chart on each certified mode's
// f_n and ζ — a baseline learned over Chart.Baseline, regressed on the
// environment's Covariates, a moving average of the residual judged
// against limits from the baseline's own scatter (package health).
// Method "fixed" is the percentage rule: the first BaselineWindows
// certified windows set a baseline of f_n and ζ, and an alert fires after
// Consecutive certified windows in a row drift from it by more than
// FnDrift (relative change of f_n) or ZetaDrift (relative change of ζ).
type Alerts struct {
	// Method is "chart" or "fixed".
	Method string `yaml:"method"`
	// BaselineWindows is the number of certified windows averaged into the
	// baseline (fixed).
	BaselineWindows int `yaml:"baseline_windows"`
	// FnDrift is the relative drift of f_n that counts as drifting (fixed).
	FnDrift float64 `yaml:"fn_drift"`
	// ZetaDrift is the relative drift of ζ that counts as drifting (fixed).
	ZetaDrift float64 `yaml:"zeta_drift"`
	// Consecutive is the number of drifting certified windows in a row
	// that raise an alert (fixed).
	Consecutive int `yaml:"consecutive"`
	// Chart tunes the control chart (chart).
	Chart Chart `yaml:"chart"`
	// Covariates are the environment's readings the chart's baseline
	// regresses on (chart.terms name them).
	Covariates []Covariate `yaml:"covariates"`
	// Evidence is what physd keeps of each raised alert.
	Evidence Evidence `yaml:"evidence"`
}

// Evidence is what physd keeps of each raised alert, under
// <state_dir>/evidence (docs/alerts.md): the video around it — Pre
// before the end of the window that raised it to Post after, copied from
// the camera's own packets (RTSP, WHIP and WHEP cameras sending H.264,
// H.265 or VP8) — and a PNG of that window (latent, fit, spectrum). Pre
// and Post both 0 keep no clip.
type Evidence struct {
	Pre  time.Duration `yaml:"pre"`
	Post time.Duration `yaml:"post"`
	// MaxAge removes evidence older (0: kept however old).
	MaxAge time.Duration `yaml:"max_age"`
	// MaxMB caps the evidence directory, in MiB: the oldest files go
	// first (0: no cap).
	MaxMB int `yaml:"max_mb"`
	// BufferMB caps each camera's buffer of recent packets, in MiB (the
	// memory the clips cost: at 2 Mbit/s, Pre plus a minute is 23 MiB).
	BufferMB int `yaml:"buffer_mb"`
}

// Clips tells whether alerts keep video.
func (e Evidence) Clips() bool { return e.Pre > 0 || e.Post > 0 }

// The alert methods.
const (
	AlertsChart = "chart"
	AlertsFixed = "fixed"
)

// IsChart tells whether the alerts run the control chart. The default
// configuration (and so a config file that does not say) sets chart; a
// zero Alerts, as code builds one, keeps the fixed rule.
func (a Alerts) IsChart() bool { return a.Method == AlertsChart }

// Chart tunes the alerts' control chart (package health; zero values take
// its defaults).
type Chart struct {
	// Baseline is how long the chart learns before it judges.
	Baseline time.Duration `yaml:"baseline"`
	// Interval is the chart's step: the certified estimates of an
	// interval are averaged into one point.
	Interval time.Duration `yaml:"interval"`
	// Lambda is the moving average's weight, 0 < λ ≤ 1.
	Lambda float64 `yaml:"lambda"`
	// Limit and Clear are the alarm and clear levels in units of the
	// moving average's baseline spread.
	Limit float64 `yaml:"limit"`
	Clear float64 `yaml:"clear"`
	// Consecutive is how many points in a row beyond the limit raise the
	// alert, and within Clear clear it.
	Consecutive int `yaml:"consecutive"`
	// Terms are the regressors: a covariate's name, its square
	// ("temperature^2"), or a product ("temperature*wind").
	Terms []string `yaml:"terms"`
}

// Covariate is an environmental reading (a temperature, a wind speed, a
// traffic count) and where it comes from: a NATS subject on physd's bus,
// a file a sensor daemon rewrites, and always the HTTP API's POST
// /api/v1/covariates. A value is a number, or JSON {"value": v, "time":
// RFC 3339}. The default declares "temperature", fed by the API alone.
type Covariate struct {
	// Name is the covariate's, as terms name it.
	Name string `yaml:"name"`
	// Subject is a NATS subject its values are published on ("" none).
	Subject string `yaml:"subject"`
	// File is a file holding its latest value, read when it changes ("":
	// none).
	File string `yaml:"file"`
	// MaxAge is how old a value may be and still describe an estimate
	// (default 2h); an estimate without a fresh value of every covariate
	// the terms read stays off the chart.
	MaxAge time.Duration `yaml:"max_age"`
}

// Mode is how a camera's video is analysed.
type Mode string

// The analysis modes.
const (
	// ModeSingle fits each sliding window on its own (one trajectory).
	ModeSingle Mode = "single"
	// ModeEvents fits several recent events together (multi-trajectory
	// mode, for non-oscillatory systems); see Events.
	ModeEvents Mode = "events"
	// ModeAmbient identifies the mode of a structure driven continuously
	// (wind, traffic) from the correlation function of its displacement
	// over a long record (package ambient); see Ambient. The camera's
	// hop is how often it publishes once the record is full.
	ModeAmbient Mode = "ambient"
)

// Ambient configures a camera's ambient mode: each frame is read by a
// readout frozen on the first Calibrate of frames, and the displacement's
// correlation function up to MaxLag is summed over the last Record.
type Ambient struct {
	// Record is how much video one estimate sums (at least 2 min and
	// 4 × MaxLag): the damping's error falls only as 1/√(ζωT), so a
	// lightly damped mode needs minutes.
	Record time.Duration `yaml:"record"`
	// MaxLag is the longest lag of the correlation function summed (at
	// least 2 s): several decay times 1/(ζω) of the slowest mode watched.
	MaxLag time.Duration `yaml:"max_lag"`
	// Calibrate is how much video the frozen readout is calibrated on
	// (at least 5 s, shorter than Record), and again after a failure.
	Calibrate time.Duration `yaml:"calibrate"`
}

// Camera is one watched object.
type Camera struct {
	// Name identifies the camera in subjects, logs and the state directory:
	// 1 to 64 of A-Z a-z 0-9 _ -, unique.
	Name string `yaml:"name"`
	// Source is where the frames come from.
	Source Source `yaml:"source"`
	// ROI is the crop in source pixels; zero means the whole frame.
	ROI ROI `yaml:"roi"`
	// Reference is a region of the whole frame, in source pixels, that
	// should stay still (a wall, the support): the camera's own motion is
	// measured on it, removed from each window before the fit, and a
	// window whose latent follows it is refused. Zero measures that motion
	// from the frames themselves.
	Reference ROI `yaml:"reference"`
	// Size is the side frames are resized to; 0 uses the preset's size.
	Size int `yaml:"size"`
	// FPS overrides the source's frame rate; 0 trusts the source.
	FPS float64 `yaml:"fps"`
	// Binarize thresholds frames (Otsu) before encoding.
	Binarize bool `yaml:"binarize"`
	// Mode is single, events or ambient.
	Mode Mode `yaml:"mode"`
	// Ambient configures the ambient mode (mode ambient).
	Ambient Ambient `yaml:"ambient"`
	// Window overrides the global Windows for this camera.
	Window WindowOverride `yaml:"window"`
	// Scale maps the source's pixels to millimetres on the structure, so
	// that amplitudes are also reported in millimetres; zero reports
	// them in pixels only. A camera's zones take it unless they have
	// their own. A reload applies a change of it without restarting the
	// camera (see Diff).
	Scale Scale `yaml:"scale"`
	// Zones are several watched objects in this camera's picture, each
	// with its own pipeline (see Zone), so that two cables in one view
	// cost one decode instead of two cameras on the same stream. Empty:
	// the camera is one watched object, cropped by ROI. A camera with
	// zones has no ROI of its own, and its Size, Window, Binarize, Mode and
	// Ambient are its zones' defaults (see ZoneCamera).
	Zones []Zone `yaml:"zones"`
}

// Zone is one watched object in a camera's picture (a cable, a mount): its
// own region, windows, encoder, checkpoint, baseline and alerts, fed by the
// camera's one decoded stream. What a zone leaves zero it takes from its
// camera (size, window) or from the global sections (estimator, certify,
// alerts); the camera's other settings (source, reference, fps, binarize,
// mode) apply to all its zones alike. ZoneCamera gives the Camera a zone's
// pipeline runs as, Config.ZoneConfig the configuration it runs under.
type Zone struct {
	// Name identifies the zone within its camera (in subjects, logs and
	// the state directory, after the camera's name): 1 to 64 of A-Z a-z
	// 0-9 _ -, like a camera name, unique within the camera.
	Name string `yaml:"name"`
	// ROI is the zone's crop in source pixels; required (a zone is a part
	// of the picture, not the whole of it).
	ROI ROI `yaml:"roi"`
	// Size is the side the zone's crops are resized to; 0 uses the
	// camera's size (whose 0 is the preset's).
	Size int `yaml:"size"`
	// Window overrides the camera's windows for this zone: a zero field
	// keeps the camera's value, itself the global one unless overridden.
	// Objects of different stiffness in one view want different windows.
	Window WindowOverride `yaml:"window"`
	// Estimator overrides the global estimator's per-window tuning for
	// this zone: a zero field keeps the global value. (The preset, seed
	// and checkpoint period are the camera's: its zones share one
	// encoder recipe.)
	Estimator EstimatorOverride `yaml:"estimator"`
	// Certify overrides the global certification limits for this zone: a
	// zero field keeps the global value (itself 0 for the certificate's
	// default). A thin cable and a stiff mount in one view need not pass
	// the same bar.
	Certify Certify `yaml:"certify"`
	// Alerts overrides the global drift alerts for this zone: a zero
	// field keeps the global value, so one object can alert on a smaller
	// drift than its neighbours.
	Alerts AlertsOverride `yaml:"alerts"`
	// Scale replaces the camera's scale for this zone unless it is zero:
	// the whole scale, not field by field (an object nearer the camera
	// than its neighbours spans more pixels per millimetre).
	Scale Scale `yaml:"scale"`
}

// EstimatorOverride overrides the per-window tuning of the global
// Estimator for one zone. A zero field keeps the global value, so a zone
// cannot set a field to 0 itself (no lambda: 0, no steps_per_window: 0).
type EstimatorOverride struct {
	// StepsPerWindow replaces Estimator.StepsPerWindow unless 0.
	StepsPerWindow int `yaml:"steps_per_window"`
	// MaxWindowTime replaces Estimator.MaxWindowTime unless 0.
	MaxWindowTime time.Duration `yaml:"max_window_time"`
	// Replay replaces Estimator.Replay unless 0.
	Replay int `yaml:"replay"`
	// Tau replaces Estimator.Tau unless 0.
	Tau float64 `yaml:"tau"`
	// Lambda replaces Estimator.Lambda unless 0.
	Lambda float64 `yaml:"lambda"`
	// LREncoder replaces Estimator.LREncoder unless 0.
	LREncoder float64 `yaml:"lr_encoder"`
}

// AlertsOverride overrides the global Alerts for one zone. A zero field
// keeps the global value.
type AlertsOverride struct {
	// BaselineWindows replaces Alerts.BaselineWindows unless 0.
	BaselineWindows int `yaml:"baseline_windows"`
	// FnDrift replaces Alerts.FnDrift unless 0.
	FnDrift float64 `yaml:"fn_drift"`
	// ZetaDrift replaces Alerts.ZetaDrift unless 0.
	ZetaDrift float64 `yaml:"zeta_drift"`
	// Consecutive replaces Alerts.Consecutive unless 0.
	Consecutive int `yaml:"consecutive"`
}

// ZoneConfig returns the configuration z's pipeline runs under: a copy of
// c whose Estimator, Certify and Alerts sections have z's non-zero
// overrides applied. Everything else, the windows included (ZoneCamera
// resolves a zone's windows), equals c's; the copy shares c's slices
// (Cameras, NATS.URLs and the like), which the caller must not modify.
func (c *Config) ZoneConfig(z Zone) *Config {
	zc := *c
	e, o := &zc.Estimator, z.Estimator
	override(&e.StepsPerWindow, o.StepsPerWindow)
	override(&e.MaxWindowTime, o.MaxWindowTime)
	override(&e.Replay, o.Replay)
	override(&e.Tau, o.Tau)
	override(&e.Lambda, o.Lambda)
	override(&e.LREncoder, o.LREncoder)
	override(&zc.Certify.MinPsi, z.Certify.MinPsi)
	override(&zc.Certify.MaxRelResidual, z.Certify.MaxRelResidual)
	override(&zc.Certify.MaxRevisit, z.Certify.MaxRevisit)
	override(&zc.Certify.MinWidth, z.Certify.MinWidth)
	override(&zc.Certify.MaxRelSigmaFn, z.Certify.MaxRelSigmaFn)
	override(&zc.Certify.MaxRelSigmaZeta, z.Certify.MaxRelSigmaZeta)
	override(&zc.Certify.SigmaZetaFloor, z.Certify.SigmaZetaFloor)
	a, ao := &zc.Alerts, z.Alerts
	override(&a.BaselineWindows, ao.BaselineWindows)
	override(&a.FnDrift, ao.FnDrift)
	override(&a.ZetaDrift, ao.ZetaDrift)
	override(&a.Consecutive, ao.Consecutive)
	return &zc
}

// override sets *dst to v unless v is zero: the rule of every override
// section.
func override[T comparable](dst *T, v T) {
	var zero T
	if v != zero {
		*dst = v
	}
}

// ZoneCamera returns the Camera z's pipeline runs as: c with z's ROI, z's
// Size unless 0, z's non-zero Window fields over c's, z's Scale unless it
// is zero, and no Zones. Everything else (Name, Source, Reference, FPS,
// Binarize, Mode, Ambient) is c's, so Config.Effective of the result is
// everything that decides how the zone is processed. The result shares c's slices
// (Source.Synthetic.V0, Scale.Points).
func (c Camera) ZoneCamera(z Zone) Camera {
	zc := c
	zc.ROI = z.ROI
	if z.Size != 0 {
		zc.Size = z.Size
	}
	if !z.Scale.IsZero() {
		zc.Scale = z.Scale
	}
	if z.Window.Length != 0 {
		zc.Window.Length = z.Window.Length
	}
	if z.Window.Hop != 0 {
		zc.Window.Hop = z.Window.Hop
	}
	if z.Window.Bin != 0 {
		zc.Window.Bin = z.Window.Bin
	}
	zc.Zones = nil
	return zc
}

// Zone returns the camera's zone with the given name, or false.
func (c Camera) Zone(name string) (Zone, bool) {
	i := slices.IndexFunc(c.Zones, func(z Zone) bool { return z.Name == name })
	if i < 0 {
		return Zone{}, false
	}
	return c.Zones[i], true
}

// ROI is a rectangle in source pixels; the zero value is the whole frame.
type ROI struct {
	// X and Y are the top-left corner (≥ 0).
	X int `yaml:"x"`
	Y int `yaml:"y"`
	// W and H are the width and height (> 0 unless the whole ROI is zero).
	W int `yaml:"w"`
	H int `yaml:"h"`
}

// IsZero reports whether r is the zero value (the whole frame).
func (r ROI) IsZero() bool { return r == ROI{} }

// WindowOverride overrides the global window settings for one camera. A
// zero field keeps the global value.
type WindowOverride struct {
	// Length replaces Windows.Length unless 0.
	Length time.Duration `yaml:"length"`
	// Hop replaces Windows.Hop unless 0.
	Hop time.Duration `yaml:"hop"`
	// Bin replaces Windows.Bin unless 0: binning suits a structure's
	// frequency, which is each camera's (or zone's) own.
	Bin Bin `yaml:"bin"`
}

// EffectiveWindow returns the windows this camera uses: the global ones
// with the camera's non-zero overrides applied. An ambient camera's
// window is its record (Ambient.Record), whatever the length says: it
// publishes every hop an estimate of the last record, so its hop may be
// as long as the record rather than the sliding windows' length.
func (c Camera) EffectiveWindow(global Windows) Windows {
	w := global
	if c.Window.Length > 0 {
		w.Length = c.Window.Length
	}
	if c.Window.Hop > 0 {
		w.Hop = c.Window.Hop
	}
	if c.Window.Bin != 0 {
		w.Bin = c.Window.Bin
	}
	if c.Mode == ModeAmbient {
		w.Length = c.Ambient.Record
	}
	return w
}

// SourceKind names a kind of frame source.
type SourceKind string

// The source kinds. Adding one means a constant here, an entry in
// sourceKinds (validate.go) and a section in physd.example.yaml.
const (
	// KindSynthetic renders one of the paper's synthetic systems live.
	KindSynthetic SourceKind = "synthetic"
	// KindRTSP reads an RTSP camera.
	KindRTSP SourceKind = "rtsp"
	// KindV4L2 reads a local video device.
	KindV4L2 SourceKind = "v4l2"
	// KindFile reads a video file.
	KindFile SourceKind = "file"
	// KindWHIP receives video that a browser, phone, OBS or GStreamer
	// publishes to physd's WHIP endpoint (RFC 9725).
	KindWHIP SourceKind = "whip"
	// KindWHEP pulls video from a media server's WHEP endpoint.
	KindWHEP SourceKind = "whep"
)

// SourceKinds lists the known source kinds.
func SourceKinds() []SourceKind {
	specs := sourceKinds()
	kinds := make([]SourceKind, len(specs))
	for i, s := range specs {
		kinds[i] = s.kind
	}
	return kinds
}

// RTSP transports accepted in Source.Transport.
const (
	TransportTCP = "tcp"
	TransportUDP = "udp"
)

// DefaultReconnectMax is Source.ReconnectMax's default.
const DefaultReconnectMax = time.Second

// Source is where a camera's frames come from. Kind selects which of the
// other fields apply.
type Source struct {
	// Kind is synthetic, rtsp, v4l2 or file.
	Kind SourceKind `yaml:"kind"`
	// URL is the rtsp:// or rtsps:// URL (rtsp) or the http:// or https://
	// WHEP endpoint (whep); a Secret because it may hold credentials.
	URL Secret `yaml:"url"`
	// Token is the bearer token publishers must present (whip, required)
	// or that physd presents to the media server (whep, optional).
	Token Secret `yaml:"token"`
	// Exclusive refuses a second WHIP publisher while one is connected;
	// by default a new publisher replaces the old one (whip).
	Exclusive bool `yaml:"exclusive"`
	// Transport is tcp or udp (rtsp).
	Transport string `yaml:"transport"`
	// TLS says how an rtsps:// camera's certificate is checked (rtsp).
	TLS SourceTLS `yaml:"tls"`
	// Timeout bounds opening the source and reading one frame; for whip
	// and whep it is how long a session may send no video before it is
	// closed and the camera reported offline.
	Timeout time.Duration `yaml:"timeout"`
	// ReconnectMax caps the pause between attempts to reopen a source that
	// failed or stalled: the pause starts at 250 ms and doubles up to it
	// (±20 % jitter, so cameras that fail together do not retry together).
	// A short cap gets frames flowing soon after a camera or server
	// returns; a retry costs one TCP connection attempt.
	ReconnectMax time.Duration `yaml:"reconnect_max"`
	// Device is a V4L2 device index ("0") or path ("/dev/video0") (v4l2).
	Device string `yaml:"device"`
	// Path is the video file (file).
	Path string `yaml:"path"`
	// Realtime replays the file at its recorded rate; false reads it as
	// fast as possible (file).
	Realtime bool `yaml:"realtime"`
	// Loop starts the file again at its end (file).
	Loop bool `yaml:"loop"`
	// Synthetic configures the rendered scene (synthetic).
	Synthetic Synthetic `yaml:"synthetic"`
}

// Synthetic configures a live synthetic source: one of the paper's systems
// released from (Z0, V0) and rendered frame by frame.
type Synthetic struct {
	// System is pendulum, intensity or scale (a sim.System, checked
	// against Vocabulary.Systems).
	System string `yaml:"system"`
	// Regime is underdamped, undamped, critical or overdamped (a
	// sim.Regime: the paper's ground-truth coefficients; checked against
	// Vocabulary.Regimes).
	Regime string `yaml:"regime"`
	// Z0 is the initial state (degrees for the pendulum).
	Z0 float64 `yaml:"z0"`
	// V0 are initial velocities; each release uses the next one in turn.
	V0 []float64 `yaml:"v0"`
	// EventEvery is the period of releases from (Z0, V0); 0 releases once.
	EventEvery time.Duration `yaml:"event_every"`
	// FPS is the frame rate; 0 uses the system's default.
	FPS float64 `yaml:"fps"`
	// Size is the side of the square frames in pixels (between
	// Vocabulary.MinSize and MaxSize); 0 uses the simulator's default.
	Size int `yaml:"size"`
	// Seed drives the scene's random choices.
	Seed int64 `yaml:"seed"`
	// Realtime paces frames at the frame rate; false renders as fast as
	// possible.
	Realtime bool `yaml:"realtime"`
}

// Defaults that name what other packages own. They are literals so that
// config need not import those packages; a test in package daemon, which
// imports them all, checks that they equal those packages' values.
const (
	// defaultPreset is estimator.DefaultPreset.
	defaultPreset = "edge"
	// defaultSystem is sim.SystemPendulum.
	defaultSystem = "pendulum"
	// defaultRegime is sim.RegimeUnderdamped.
	defaultRegime = "underdamped"
	// defaultSyntheticSize is sim.DefaultSize.
	defaultSyntheticSize = 64
)

// Default returns the configuration physd runs without a config file: every
// option at its default and one camera, DefaultCamera named "pendulum" (a
// synthetic underdamped pendulum, so that a fresh install prints estimates).
// Each call returns a new value.
func Default() *Config {
	cam := DefaultCamera()
	cam.Name = "pendulum"
	return &Config{
		StateDir: "",
		Log:      Log{Level: LevelInfo, Format: FormatAuto},
		HTTP:     HTTP{Listen: "127.0.0.1:8090", RateLimit: 20, RateBurst: 40},
		WebRTC:   WebRTC{Interfaces: []string{}, Addresses: []string{}},
		NATS: NATS{
			URLs:          []string{},
			Embedded:      Embedded{Listen: "127.0.0.1:4222", JetStream: true, LeafNodes: LeafNodes{URLs: []string{}}, MQTT: MQTT{DiscoveryPrefix: "homeassistant"}},
			SubjectPrefix: "physd",
			JetStream:     JetStream{Enabled: true, Stream: "PHYSD_ESTIMATES", MaxAge: 720 * time.Hour},
			Heartbeat:     10 * time.Second,
			ReconnectWait: 2 * time.Second,
		},
		Windows: Windows{Length: 4712 * time.Millisecond, Hop: time.Second, MaxGap: 1.5, Bin: BinAuto},
		Events: Events{MinEvents: 3, Keep: 6, MotionThreshold: 1e-4,
			Quiet: time.Second, MaxLength: 10 * time.Second},
		Estimator: Estimator{
			Preset:          defaultPreset,
			StepsPerWindow:  10,
			MaxWindowTime:   2 * time.Second,
			Replay:          1,
			Tau:             1,
			Lambda:          1,
			LREncoder:       1e-5,
			Seed:            1,
			CheckpointEvery: time.Minute,
			Workers:         1,
		},
		Certify: Certify{}, // every limit at the certificate's default
		Alerts: Alerts{Method: AlertsChart, BaselineWindows: 5, FnDrift: 0.05, ZetaDrift: 0.5, Consecutive: 3,
			Chart:      Chart{Baseline: 7 * 24 * time.Hour, Interval: time.Hour, Lambda: 0.3, Limit: 4, Clear: 2.5, Consecutive: 2, Terms: []string{}},
			Covariates: []Covariate{{Name: "temperature", MaxAge: 2 * time.Hour}},
			Evidence:   Evidence{Pre: 30 * time.Second, Post: 30 * time.Second, MaxAge: 90 * 24 * time.Hour, MaxMB: 2048, BufferMB: 48}},
		Cameras: []Camera{cam},
	}
}

// DefaultCamera returns the defaults every camera entry of a config file
// starts from: a synthetic underdamped pendulum released from 50° at rest
// every minute, whole frame, single mode, global windows, no scale, no
// zones. Its Name is empty. (Zones and Scale.Points are empty rather than
// nil, as a file's "zones: []" and "points: []" read.)
func DefaultCamera() Camera {
	return Camera{
		Source: Source{
			Kind:         KindSynthetic,
			Transport:    TransportTCP,
			Timeout:      5 * time.Second,
			ReconnectMax: DefaultReconnectMax,
			Realtime:     true,
			Synthetic: Synthetic{
				System:     defaultSystem,
				Regime:     defaultRegime,
				Z0:         50,
				V0:         []float64{0},
				EventEvery: time.Minute,
				Size:       defaultSyntheticSize,
				Seed:       1,
				Realtime:   true,
			},
		},
		Mode:    ModeSingle,
		Ambient: DefaultAmbient(),
		Scale:   Scale{Points: [][]float64{}},
		Zones:   []Zone{},
	}
}

// DefaultAmbient returns the ambient mode's defaults: a 60-minute record
// (long enough for the ambient precision limits, σ(f_n) ≤ 1/6 % and
// σ(ζ) ≤ 10 %, from about ζ = 1 % at 1 Hz: a record's error falls as
// 1/√(ζωT), and 20 records of such a mode would have reached both
// limits in 30–75 min, median 43; make ambient, 2026-12-01),
// lags up to 60 s and a 20-second calibration. A longer record costs
// no memory: the sums are lags × segments.
func DefaultAmbient() Ambient {
	return Ambient{Record: 60 * time.Minute, MaxLag: time.Minute, Calibrate: 20 * time.Second}
}

// Camera returns the camera with the given name, or false.
func (c *Config) Camera(name string) (Camera, bool) {
	i := slices.IndexFunc(c.Cameras, func(cam Camera) bool { return cam.Name == name })
	if i < 0 {
		return Camera{}, false
	}
	return c.Cameras[i], true
}
