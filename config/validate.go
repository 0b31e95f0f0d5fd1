package config

import (
	"fmt"
	"math"
	"net"
	"net/netip"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits checked by Parse.
const (
	// MinWindowLength is the shortest analysis window accepted.
	MinWindowLength = 400 * time.Millisecond
	// MaxCameraNameLen is the longest camera name accepted.
	MaxCameraNameLen = 64
	// MinFrameSize and MaxFrameSize bound Camera.Size and Zone.Size when
	// they are not 0 (the estimator's limits).
	MinFrameSize, MaxFrameSize = 4, 1024
	// MaxZones is the most zones one camera may have: the picture is
	// decoded once, but each zone runs a full estimator pipeline, and a
	// small board runs out of CPU long before more.
	MaxZones = 16
	// MinAmbientRecord is the shortest ambient record accepted: the
	// damping's error falls only as 1/√(ζωT), and the jackknife needs
	// groups several decay times long.
	MinAmbientRecord = 2 * time.Minute
	// AmbientRecordLags is how many times max_lag an ambient record must
	// hold at least, for the correlation function's longest lags to be
	// averaged over more than a few independent stretches.
	AmbientRecordLags = 4
	// MinAmbientMaxLag is the shortest max_lag accepted: the signature
	// must hold several periods of the mode.
	MinAmbientMaxLag = 2 * time.Second
	// MinAmbientCalibrate is the shortest calibration accepted: the
	// readout's pixel weights need many periods of motion.
	MinAmbientCalibrate = 5 * time.Second
)

// ValidCameraName reports whether name matches ^[A-Za-z0-9_-]{1,64}$, the
// form camera names must have (they become NATS subject tokens).
func ValidCameraName(name string) bool {
	if len(name) == 0 || len(name) > MaxCameraNameLen {
		return false
	}
	for _, c := range []byte(name) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// kindSpec describes one source kind: the Source keys it uses besides kind
// and timeout, and the checks of those keys.
type kindSpec struct {
	kind   SourceKind
	fields []string
	check  func(v *validator, path string, s Source)
}

// sourceKinds is the table of source kinds. A new kind (webrtc, whip) adds a
// row here, a constant in config.go and its fields in Source.
func sourceKinds() []kindSpec {
	return []kindSpec{
		{KindSynthetic, []string{"synthetic"}, checkSynthetic},
		{KindRTSP, []string{"url", "transport", "tls"}, checkRTSP},
		{KindV4L2, []string{"device"}, checkV4L2},
		{KindFile, []string{"path", "realtime", "loop"}, checkFile},
		{KindWHIP, []string{"token", "exclusive"}, checkWHIP},
		{KindWHEP, []string{"url", "token"}, checkWHEP},
	}
}

// validator runs the semantic checks after decoding.
type validator struct {
	errs *errorList
	pos  map[string]pos
	// vocab holds the names other packages own; its empty fields skip
	// the checks of those names.
	vocab Vocabulary
}

// at returns the position of path's node, or of its nearest ancestor that
// the file contains, or the zero pos.
func (v *validator) at(path string) pos {
	for {
		if p, ok := v.pos[path]; ok {
			return p
		}
		if path == "" {
			return pos{}
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			path = ""
		} else {
			path = path[:i]
		}
	}
}

// inFile reports whether the file sets path explicitly.
func (v *validator) inFile(path string) bool {
	_, ok := v.pos[path]
	return ok
}

func (v *validator) errorf(path, format string, args ...any) {
	v.wrapf(path, nil, format, args...)
}

func (v *validator) wrapf(path string, err error, format string, args ...any) {
	if v.errs.isBad(path) {
		return // already reported as a decoding error
	}
	v.errs.add(v.at(path), path, err, format, args...)
}

func (v *validator) positive(path string, d time.Duration) {
	if d <= 0 {
		v.errorf(path, "is %v, want > 0", d)
	}
}

func (v *validator) nonNegative(path string, d time.Duration) {
	if d < 0 {
		v.errorf(path, "is %v, want ≥ 0", d)
	}
}

func (v *validator) oneOf(path, got string, allowed ...string) {
	if !slices.Contains(allowed, got) {
		v.errorf(path, "is %q, want %s", got, orList(allowed))
	}
}

// orList formats ["a" "b" "c"] as `"a", "b" or "c"`.
func orList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(s)
	}
	switch len(q) {
	case 0:
		return "none"
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// validate checks the decoded configuration; pos holds the positions of
// the values the file sets, vocab the names other packages own.
func validate(c *Config, pos map[string]pos, errs *errorList, vocab Vocabulary) {
	v := &validator{errs: errs, pos: pos, vocab: vocab}
	v.oneOf("log.level", c.Log.Level, LevelDebug, LevelInfo, LevelWarn, LevelError)
	v.oneOf("log.format", c.Log.Format, FormatAuto, FormatText, FormatJSON)
	v.webrtc(c)
	if c.HTTP.Listen != "" {
		v.hostPort("http.listen", c.HTTP.Listen)
		if !LoopbackListen(c.HTTP.Listen) && !c.HTTP.Token.IsSet() && c.HTTP.ClientCAFile == "" {
			v.errorf("http.listen", "is %q, not a loopback address: set http.token, the bearer token operators present for /metrics, /readyz and the API, or http.client_ca_file for TLS client certificates", c.HTTP.Listen)
		}
	}
	v.rateLimit(c.HTTP)
	v.httpTokens(c)
	if c.Node.Name != "" && !ValidCameraName(c.Node.Name) {
		v.errorf("node.name", "is %q, want 1 to %d of A-Z a-z 0-9 _ - (it names the board in message ids and its JetStream domain)", c.Node.Name, MaxCameraNameLen)
	}
	v.nats(c.NATS)
	v.windows(c.Windows)
	v.events(c.Events)
	v.estimator(c.Estimator)
	v.certify("certify", c.Certify, false)
	a := c.Alerts
	v.alerts("alerts", AlertsOverride{BaselineWindows: a.BaselineWindows, FnDrift: a.FnDrift, ZetaDrift: a.ZetaDrift, Consecutive: a.Consecutive}, false)
	v.chart("alerts", a, c.NATS.SubjectPrefix)
	first := map[string]int{}
	for i, cam := range c.Cameras {
		p := fmt.Sprintf("cameras[%d]", i)
		v.camera(p, cam, c)
		if !ValidCameraName(cam.Name) {
			continue
		}
		if j, dup := first[cam.Name]; dup {
			line := v.at(fmt.Sprintf("cameras[%d].name", j)).line
			v.errorf(p+".name", "duplicate camera name %q (cameras[%d], line %d)", cam.Name, j, line)
			continue
		}
		first[cam.Name] = i
	}
}

// hostPort checks a listen address host:port.
// LoopbackListen reports whether a host:port listens on loopback only
// ("localhost", 127.0.0.0/8 or ::1); an empty host listens everywhere.
func LoopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (v *validator) hostPort(path, addr string) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		v.wrapf(path, err, "is %q, want host:port (%v)", addr, err)
		return
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		v.errorf(path, "is %q, want a port number 0…65535", addr)
	}
}

// What a bearer token physd accepts must have when http.listen is not a
// loopback address (anyone who reaches the port can guess at it).
const (
	// MinRemoteTokenLen is the fewest characters of such a token.
	MinRemoteTokenLen = 16
	// MinRemoteTokenDistinct is the fewest distinct characters of such
	// a token: "aaaaaaaaaaaaaaaa" and "abababab…" are no secret.
	MinRemoteTokenDistinct = 8
)

// httpTokens checks the bearer tokens: http.token and every whip camera's
// source.token (which physd accepts on http.listen), and every whep
// camera's source.token (which physd sends to the media server).
func (v *validator) httpTokens(c *Config) {
	remote := c.HTTP.Listen != "" && !LoopbackListen(c.HTTP.Listen)
	v.token("http.token", c.HTTP.Token, remote, c.HTTP.Listen)
	for i, cam := range c.Cameras {
		switch cam.Source.Kind {
		case KindWHIP:
			v.token(fmt.Sprintf("cameras[%d].source.token", i), cam.Source.Token, remote, c.HTTP.Listen)
		case KindWHEP:
			v.token(fmt.Sprintf("cameras[%d].source.token", i), cam.Source.Token, false, "")
		}
	}
}

// token checks one bearer token, its resolved value (after env: and
// file:), when set: it must not be blank, have white space around it or
// hold a control character, and when remote (http.listen, listen, is not
// loopback) it must be at least MinRemoteTokenLen characters with at least
// MinRemoteTokenDistinct distinct ones. The errors never show the token.
func (v *validator) token(path string, s Secret, remote bool, listen string) {
	t := s.Value()
	if t == "" {
		return // whether one is needed is checked where it is
	}
	from := ""
	if src := s.Source(); src != "literal" && src != "" {
		from = " (from " + src + ")"
	}
	runes, distinct := 0, map[rune]bool{}
	control := !utf8.ValidString(t)
	for _, r := range t {
		runes++
		distinct[r] = true
		control = control || unicode.IsControl(r)
	}
	switch {
	case strings.TrimSpace(t) == "":
		v.errorf(path, "is blank%s: white space only, which no client can send as a bearer token; set a real token (e.g. the output of `openssl rand -hex 32`)", from)
	case strings.TrimSpace(t) != t:
		v.errorf(path, "has white space at its start or end%s: clients send the token without it, so none would match; remove it", from)
	case control:
		v.errorf(path, "contains a control character or invalid UTF-8%s: a bearer token must be printable text", from)
	case remote && runes < MinRemoteTokenLen:
		v.errorf(path, "is too short%s: %d characters, want at least %d (and %d distinct) because http.listen %q is not a loopback address; e.g. the output of `openssl rand -hex 32`", from, runes, MinRemoteTokenLen, MinRemoteTokenDistinct, listen)
	case remote && len(distinct) < MinRemoteTokenDistinct:
		v.errorf(path, "is too weak%s: %d distinct characters, want at least %d (and %d characters) because http.listen %q is not a loopback address; e.g. the output of `openssl rand -hex 32`", from, len(distinct), MinRemoteTokenDistinct, MinRemoteTokenLen, listen)
	}
}

// rateLimit checks http.rate_limit and http.rate_burst.
func (v *validator) rateLimit(h HTTP) {
	if !(h.RateLimit >= 0) {
		v.errorf("http.rate_limit", "is %v, want ≥ 0 requests a second per client (0 disables the limit)", h.RateLimit)
		return
	}
	switch {
	case h.RateBurst < 0:
		v.errorf("http.rate_burst", "is %d, want ≥ 1 (requests a client may make at once)", h.RateBurst)
	case h.RateBurst < 1 && h.RateLimit > 0:
		v.errorf("http.rate_burst", "is %d but http.rate_limit is %v, want ≥ 1 (requests a client may make at once), or http.rate_limit: 0 to disable the limit", h.RateBurst, h.RateLimit)
	}
}

func (v *validator) nats(n NATS) {
	for i, u := range n.URLs {
		v.natsURL(fmt.Sprintf("nats.urls[%d]", i), u)
	}
	v.hostPort("nats.embedded.listen", n.Embedded.Listen)
	v.embeddedAccess(n)
	v.leafNodes(n)
	if (n.TLS.CertFile == "") != (n.TLS.KeyFile == "") {
		p := "nats.tls.cert_file"
		if n.TLS.CertFile != "" {
			p = "nats.tls.key_file"
		}
		v.errorf(p, "cert_file and key_file must be set together")
	}
	var auth []string
	if n.CredentialsFile != "" {
		auth = append(auth, "credentials_file")
	}
	if n.NKeySeed.IsSet() {
		auth = append(auth, "nkey_seed")
	}
	if n.Token.IsSet() {
		auth = append(auth, "token")
	}
	if len(auth) > 1 {
		v.errorf("nats."+auth[1], "set only one of credentials_file, nkey_seed and token (have %s)", strings.Join(auth, " and "))
	}
	if err := checkSubject(n.SubjectPrefix); err != "" {
		v.errorf("nats.subject_prefix", "is %q: %s", n.SubjectPrefix, err)
	}
	if n.JetStream.Enabled {
		if err := checkStreamName(n.JetStream.Stream); err != "" {
			v.errorf("nats.jetstream.stream", "is %q: %s", n.JetStream.Stream, err)
		}
	}
	v.nonNegative("nats.jetstream.max_age", n.JetStream.MaxAge)
	v.positive("nats.heartbeat", n.Heartbeat)
	v.positive("nats.reconnect_wait", n.ReconnectWait)
}

// embeddedAccess checks who can reach the embedded server: every client
// authenticates with the credentials physd creates (daemon.SubscriberSeed),
// so the client-side settings, which are for nats.urls' servers, must not
// suggest otherwise; and beyond loopback the server needs TLS, as HTTP
// needs a token.
func (v *validator) embeddedAccess(n NATS) {
	if len(n.URLs) > 0 {
		if n.Embedded.TLS != (TLS{}) {
			v.errorf("nats.embedded.tls", "is set, but nats.urls is too: the embedded server runs only when nats.urls is empty")
		}
		return
	}
	for _, f := range []struct {
		key string
		set bool
	}{{"credentials_file", n.CredentialsFile != ""}, {"nkey_seed", n.NKeySeed.IsSet()}, {"token", n.Token.IsSet()}, {"tls", n.TLS != (TLS{})}} {
		if f.set {
			v.errorf("nats."+f.key, "is set, but nats.urls is empty: it is for nats.urls' servers; physd and its local subscribers authenticate to the embedded server with the credentials physd creates in the state directory (nats/)")
		}
	}
	t := n.Embedded.TLS
	if (t.CertFile == "") != (t.KeyFile == "") {
		p := "nats.embedded.tls.cert_file"
		if t.CertFile != "" {
			p = "nats.embedded.tls.key_file"
		}
		v.errorf(p, "cert_file and key_file must be set together")
	}
	if t.CAFile != "" && t.CertFile == "" {
		v.errorf("nats.embedded.tls.cert_file", "is empty, but tls.ca_file is set: the server needs its own certificate to ask for its clients'")
	}
	if m := n.Embedded.MQTT; m.Listen != "" {
		v.hostPort("nats.embedded.mqtt.listen", m.Listen)
		if len(n.URLs) > 0 {
			v.errorf("nats.embedded.mqtt.listen", "is %q but nats.urls names an external server: the MQTT listener is the embedded server's (enable MQTT on that server instead)", m.Listen)
		}
		if !LoopbackListen(m.Listen) && t.CertFile == "" {
			v.errorf("nats.embedded.mqtt.listen", "is %q, beyond loopback, without nats.embedded.tls: MQTT clients would send their password and read estimates in the clear; listen on 127.0.0.1 (or put TLS in front)", m.Listen)
		}
		if !n.Embedded.JetStream {
			v.errorf("nats.embedded.mqtt.listen", "is %q but nats.embedded.jetstream is off: nats-server's MQTT needs JetStream", m.Listen)
		}
	}
	if p := n.Embedded.MQTT.DiscoveryPrefix; p != "" && (strings.ContainsAny(p, " .*>#+/") || strings.HasPrefix(p, "$")) {
		v.errorf("nats.embedded.mqtt.discovery_prefix", "is %q, want one topic level (letters, digits, _ and -)", p)
	}
	if n.Embedded.Listen != "" && !LoopbackListen(n.Embedded.Listen) && t.CertFile == "" {
		v.errorf("nats.embedded.listen", "is %q, beyond loopback, without nats.embedded.tls: clients would send their credentials and read estimates in the clear; set tls.cert_file and tls.key_file, or listen on 127.0.0.1", n.Embedded.Listen)
	}
}

// leafNodes checks nats.embedded.domain and nats.embedded.leafnodes.
func (v *validator) leafNodes(n NATS) {
	e := n.Embedded
	if e.Domain != "" && !ValidCameraName(e.Domain) {
		v.errorf("nats.embedded.domain", "is %q, want 1 to %d of A-Z a-z 0-9 _ - (a JetStream domain is a subject token)", e.Domain, MaxCameraNameLen)
	}
	l := e.LeafNodes
	for i, u := range l.URLs {
		v.leafURL(fmt.Sprintf("nats.embedded.leafnodes.urls[%d]", i), u)
	}
	if (l.TLS.CertFile == "") != (l.TLS.KeyFile == "") {
		p := "nats.embedded.leafnodes.tls.cert_file"
		if l.TLS.CertFile != "" {
			p = "nats.embedded.leafnodes.tls.key_file"
		}
		v.errorf(p, "cert_file and key_file must be set together")
	}
	if len(l.URLs) == 0 && (l.CredentialsFile != "" || l.TLS != TLS{}) {
		v.errorf("nats.embedded.leafnodes.urls", "is empty, but leafnodes.tls or leafnodes.credentials_file is set: list the hub's leaf node URLs")
	}
	if len(l.URLs) > 0 && len(n.URLs) > 0 {
		v.errorf("nats.embedded.leafnodes.urls", "is set, but nats.urls is too: the embedded server (and its leaf node connection) runs only when nats.urls is empty")
	}
	if len(l.URLs) > 0 && !e.JetStream {
		v.errorf("nats.embedded.leafnodes.urls", "is set, but nats.embedded.jetstream is false: a board keeps its estimates in its own JetStream while the hub is away")
	}
}

// leafURL checks a hub leaf node URL without echoing it (it may hold a
// password).
func (v *validator) leafURL(path, s string) {
	v.serverURL(path, s, "want a nats-leaf://, tls:// or nats:// URL, or host:port", "nats-leaf", "tls", "nats")
}

// natsURL checks a server URL without echoing it (it may hold a password).
func (v *validator) natsURL(path, s string) {
	v.serverURL(path, s, "want a nats://, tls://, ws:// or wss:// URL, or host:port", "nats", "tls", "ws", "wss")
}

// serverURL checks that s is host:port or a URL with a host and one of
// schemes; want says what is expected. The error never echoes s.
func (v *validator) serverURL(path, s, want string, schemes ...string) {
	if !strings.Contains(s, "://") {
		if _, _, err := net.SplitHostPort(s); err != nil {
			v.errorf(path, "%s", want)
		}
		return
	}
	u, err := url.Parse(s)
	if err != nil {
		v.errorf(path, "%s (the URL does not parse)", want)
		return
	}
	if !slices.Contains(schemes, u.Scheme) {
		v.errorf(path, "has scheme %q, %s", u.Scheme, want)
		return
	}
	if u.Host == "" {
		v.errorf(path, "has no host, %s", want)
	}
}

// checkSubject checks a NATS subject prefix: dot-separated non-empty tokens
// of printable ASCII without white space or wildcards. It returns "" if
// the prefix is valid.
func checkSubject(s string) string {
	if s == "" {
		return "want one or more dot-separated tokens, e.g. \"physd\" or \"site1.physd\""
	}
	for tok := range strings.SplitSeq(s, ".") {
		if tok == "" {
			return "has an empty token (leading, trailing or double dot)"
		}
		for _, c := range []byte(tok) {
			if c <= ' ' || c > '~' {
				return "has white space or a non-printable or non-ASCII character"
			}
			if c == '*' || c == '>' {
				return "has a wildcard (* or >)"
			}
		}
	}
	return ""
}

// checkStreamName checks a JetStream stream name and returns "" if valid.
func checkStreamName(s string) string {
	if s == "" {
		return "want a stream name (JetStream is enabled)"
	}
	if len(s) > 255 {
		return "is longer than 255 characters"
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c > '~' || strings.IndexByte(".*>/\\", c) >= 0 {
			return "want printable ASCII without white space, '.', '*', '>', '/' or '\\'"
		}
	}
	return ""
}

func (v *validator) windows(w Windows) {
	if w.Length < MinWindowLength {
		v.errorf("windows.length", "is %v, want ≥ %v", w.Length, MinWindowLength)
	}
	if w.Hop <= 0 {
		v.errorf("windows.hop", "is %v, want > 0", w.Hop)
	} else if w.Hop > w.Length && w.Length >= MinWindowLength {
		v.errorf("windows.hop", "is %v, longer than windows.length %v", w.Hop, w.Length)
	}
	if !(w.MaxGap > 1) {
		v.errorf("windows.max_gap", "is %v, want > 1 (a multiple of the nominal frame step)", w.MaxGap)
	}
	if (w.Bin < 0 && w.Bin != BinAuto) || w.Bin > MaxBin {
		v.errorf("windows.bin", "is %d, want auto or 0…%d (frames decimated into one; 0 or 1: none)", w.Bin, MaxBin)
	}
}

// MaxBin is the most frames windows.bin may decimate into one (and the
// most auto chooses): beyond it a 30 fps camera is analysed at under 4
// frames a second.
const MaxBin Bin = 8

func (v *validator) events(e Events) {
	if e.MinEvents < 1 {
		v.errorf("events.min_events", "is %d, want ≥ 1", e.MinEvents)
	}
	if e.Keep < max(e.MinEvents, 1) {
		v.errorf("events.keep", "is %d, want ≥ events.min_events (%d)", e.Keep, e.MinEvents)
	}
	if !(e.MotionThreshold > 0 && e.MotionThreshold < 1) {
		v.errorf("events.motion_threshold", "is %v, want a fraction of full scale in (0, 1)", e.MotionThreshold)
	}
	v.positive("events.quiet", e.Quiet)
	v.positive("events.max_length", e.MaxLength)
}

func (v *validator) estimator(e Estimator) {
	v.preset(e.Preset)
	v.tuning("estimator", EstimatorOverride{StepsPerWindow: e.StepsPerWindow, MaxWindowTime: e.MaxWindowTime,
		Replay: e.Replay, Tau: e.Tau, Lambda: e.Lambda, LREncoder: e.LREncoder}, false)
	if e.LREncoder == 0 && e.StepsPerWindow > 0 {
		v.errorf("estimator.lr_encoder", "is 0 but steps_per_window is %d, want > 0 (or steps_per_window: 0)", e.StepsPerWindow)
	}
	v.nonNegative("estimator.checkpoint_every", e.CheckpointEvery)
	if e.Workers < 0 {
		v.errorf("estimator.workers", "is %d, want ≥ 1, or 0 for one per core", e.Workers)
	}
}

// orZero is the end of an error message about the field key of section p:
// for a zone's override (zone), that 0 keeps the global value; otherwise
// def, what the global field's 0 means ("" when 0 is invalid there).
func orZero(p, key string, zone bool, def string) string {
	if zone {
		_, section, _ := strings.Cut(p[strings.LastIndexByte(p, ']')+1:], ".")
		return fmt.Sprintf(" (or 0 for %s.%s)", section, key)
	}
	return def
}

// tuning checks the estimator's per-window tuning at p: the global
// section's (zone false) or a zone's override (zone true), where a 0 is
// always fine (it keeps the global value) and any other value follows the
// global field's rule.
func (v *validator) tuning(p string, e EstimatorOverride, zone bool) {
	if e.StepsPerWindow < 0 {
		v.errorf(p+".steps_per_window", "is %d, want ≥ 0%s", e.StepsPerWindow, orZero(p, "steps_per_window", zone, ""))
	}
	if e.MaxWindowTime < 0 || (!zone && e.MaxWindowTime == 0) {
		v.errorf(p+".max_window_time", "is %v, want > 0%s", e.MaxWindowTime, orZero(p, "max_window_time", zone, ""))
	}
	if e.Replay < 0 {
		v.errorf(p+".replay", "is %d, want ≥ 0%s", e.Replay, orZero(p, "replay", zone, ""))
	}
	if !(e.Tau > 0) && !(zone && e.Tau == 0) {
		v.errorf(p+".tau", "is %v, want > 0%s", e.Tau, orZero(p, "tau", zone, ""))
	}
	if !(e.Lambda >= 0) {
		v.errorf(p+".lambda", "is %v, want ≥ 0%s", e.Lambda, orZero(p, "lambda", zone, ""))
	}
	if !(e.LREncoder >= 0) {
		v.errorf(p+".lr_encoder", "is %v, want ≥ 0%s", e.LREncoder, orZero(p, "lr_encoder", zone, ""))
	}
}

// certify checks the certificate's limits at p, the global section's
// (zone false) or a zone's override (zone true); 0 is each one's default
// (the certificate itself holds it, window.Thresholds, so it is written
// once), or for a zone the global value.
func (v *validator) certify(p string, c Certify, zone bool) {
	const def = " (or 0 for the default)"
	if !(c.MinPsi >= 0 && c.MinPsi <= 1) {
		v.errorf(p+".min_psi", "is %v, want in (0, 1]%s", c.MinPsi, orZero(p, "min_psi", zone, def))
	}
	if !(c.MaxRelResidual >= 0) {
		v.errorf(p+".max_rel_residual", "is %v, want > 0%s", c.MaxRelResidual, orZero(p, "max_rel_residual", zone, def))
	}
	if !(c.MaxRevisit >= 0) {
		v.errorf(p+".max_revisit", "is %v, want > 0%s", c.MaxRevisit, orZero(p, "max_revisit", zone, def))
	}
	if !(c.MinWidth >= 0 && c.MinWidth <= 1) {
		v.errorf(p+".min_width", "is %v, want in (0, 1]%s", c.MinWidth, orZero(p, "min_width", zone, def))
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"max_rel_sigma_fn", c.MaxRelSigmaFn}, {"max_rel_sigma_zeta", c.MaxRelSigmaZeta}, {"sigma_zeta_floor", c.SigmaZetaFloor}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			v.errorf(p+"."+f.key, "is %v, want > 0%s", f.v, orZero(p, f.key, zone, def))
		}
	}
}

// alerts checks the drift alerts at p, the global section's (zone false)
// or a zone's override (zone true, where 0 keeps the global value).
func (v *validator) alerts(p string, a AlertsOverride, zone bool) {
	if a.BaselineWindows < 0 || (!zone && a.BaselineWindows == 0) {
		v.errorf(p+".baseline_windows", "is %d, want ≥ 1%s", a.BaselineWindows, orZero(p, "baseline_windows", zone, ""))
	}
	if !(a.FnDrift > 0) && !(zone && a.FnDrift == 0) {
		v.errorf(p+".fn_drift", "is %v, want > 0%s", a.FnDrift, orZero(p, "fn_drift", zone, ""))
	}
	if !(a.ZetaDrift > 0) && !(zone && a.ZetaDrift == 0) {
		v.errorf(p+".zeta_drift", "is %v, want > 0%s", a.ZetaDrift, orZero(p, "zeta_drift", zone, ""))
	}
	if a.Consecutive < 0 || (!zone && a.Consecutive == 0) {
		v.errorf(p+".consecutive", "is %d, want ≥ 1%s", a.Consecutive, orZero(p, "consecutive", zone, ""))
	}
}

// chart checks the alerts' method, control chart and covariates at p.
func (v *validator) chart(p string, a Alerts, prefix string) {
	if a.Method != "" && a.Method != AlertsChart && a.Method != AlertsFixed {
		v.errorf(p+".method", "is %q, want %q or %q", a.Method, AlertsChart, AlertsFixed)
	}
	c := a.Chart
	if c.Baseline < 0 || c.Interval < 0 {
		v.errorf(p+".chart.baseline", "is %v (interval %v), want ≥ 0 (0: the default)", c.Baseline, c.Interval)
	}
	if c.Interval > 0 && c.Baseline > 0 && c.Baseline < 4*c.Interval {
		v.errorf(p+".chart.baseline", "is %v, want at least 4 intervals (%v)", c.Baseline, 4*c.Interval)
	}
	if !(c.Lambda >= 0 && c.Lambda <= 1) {
		v.errorf(p+".chart.lambda", "is %v, want 0 < λ ≤ 1 (0: the default)", c.Lambda)
	}
	if !(c.Limit >= 0) || !(c.Clear >= 0) || (c.Limit > 0 && c.Clear >= c.Limit) {
		v.errorf(p+".chart.clear", "is %v with limit %v, want 0 < clear < limit", c.Clear, c.Limit)
	}
	if c.Consecutive < 0 {
		v.errorf(p+".chart.consecutive", "is %d, want ≥ 1 (0: the default)", c.Consecutive)
	}
	names := map[string]bool{}
	for i, cv := range a.Covariates {
		cp := fmt.Sprintf("%s.covariates[%d]", p, i)
		switch {
		case cv.Name == "" || strings.ContainsAny(cv.Name, "*^ "):
			v.errorf(cp+".name", "is %q, want a name without spaces, * or ^", cv.Name)
		case names[cv.Name]:
			v.errorf(cp+".name", "%q is named twice", cv.Name)
		}
		names[cv.Name] = true
		switch s := cv.Subject; {
		case s == "":
		case strings.ContainsAny(s, " \t*>") || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") || strings.Contains(s, ".."):
			v.errorf(cp+".subject", "is %q, want a NATS subject without wildcards", s)
		case prefix != "" && (s == prefix || strings.HasPrefix(s, prefix+".")) || strings.HasPrefix(s, "$") || strings.HasPrefix(s, "_INBOX"):
			// The board's subscriber key may publish it: not on physd's
			// own subjects, JetStream's or replies.
			v.errorf(cp+".subject", "is %q, want a subject outside %s.>, $… and _INBOX.>", s, prefix)
		}
		if cv.MaxAge < 0 {
			v.errorf(cp+".max_age", "is %v, want ≥ 0 (0: 2h)", cv.MaxAge)
		}
	}
	ev := a.Evidence
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"pre", ev.Pre}, {"post", ev.Post}} {
		if d.v < 0 || d.v > 10*time.Minute {
			v.errorf(p+".evidence."+d.key, "is %v, want 0 to 10m", d.v)
		}
	}
	if ev.MaxAge < 0 {
		v.errorf(p+".evidence.max_age", "is %v, want ≥ 0 (0: kept however old)", ev.MaxAge)
	}
	if ev.MaxMB < 0 {
		v.errorf(p+".evidence.max_mb", "is %d, want ≥ 0 (0: no cap)", ev.MaxMB)
	}
	if ev.BufferMB < 0 || (ev.Clips() && ev.BufferMB == 0) {
		v.errorf(p+".evidence.buffer_mb", "is %d, want ≥ 1 when alerts keep clips", ev.BufferMB)
	}
	for i, t := range c.Terms {
		tp := fmt.Sprintf("%s.chart.terms[%d]", p, i)
		fs := termFactors(t)
		if fs == nil {
			v.errorf(tp, "is %q, want a covariate's name, NAME^2 or NAME*NAME", t)
			continue
		}
		for _, f := range fs {
			if !names[f] {
				v.errorf(tp, "reads %q, which alerts.covariates does not name", f)
			}
		}
	}
}

// termFactors are the covariates a chart term multiplies (nil: no term).
func termFactors(t string) []string {
	t = strings.TrimSpace(t)
	if name, ok := strings.CutSuffix(t, "^2"); ok {
		name = strings.TrimSpace(name)
		if name == "" || strings.ContainsAny(name, "*^") {
			return nil
		}
		return []string{name}
	}
	var out []string
	for _, f := range strings.Split(t, "*") {
		if f = strings.TrimSpace(f); f == "" || strings.Contains(f, "^") {
			return nil
		}
		out = append(out, f)
	}
	return out
}

// zoneOverrides checks the estimator, certify and alerts overrides of the
// zone at zp under the global sections of c: each field by the global
// field's rule, and the learning rate that a zone's steps need.
func (v *validator) zoneOverrides(zp string, z Zone, c *Config) {
	v.tuning(zp+".estimator", z.Estimator, true)
	v.certify(zp+".certify", z.Certify, true)
	v.alerts(zp+".alerts", z.Alerts, true)
	// A zone that trains where the global estimator does not (and so may
	// leave lr_encoder at 0) needs a learning rate of its own. A global
	// section that is itself wrong is reported once, there.
	g := c.Estimator
	if z.Estimator.StepsPerWindow > 0 && z.Estimator.LREncoder == 0 && g.LREncoder == 0 && g.StepsPerWindow == 0 {
		v.errorf(zp+".estimator.steps_per_window", "is %d but estimator.lr_encoder is 0, want the zone's lr_encoder > 0 (or no steps_per_window)", z.Estimator.StepsPerWindow)
	}
}

// name checks the name of a camera or a zone (what) at path.
func (v *validator) name(path, what, name string) {
	switch {
	case name == "":
		v.errorf(path, "a %s needs a name", what)
	case !ValidCameraName(name):
		v.errorf(path, "is %q, want 1 to %d of A-Z a-z 0-9 _ - (it becomes a NATS subject token)", name, MaxCameraNameLen)
	}
}

func (v *validator) camera(p string, c Camera, all *Config) {
	global := all.Windows
	v.name(p+".name", "camera", c.Name)
	v.source(p+".source", c)
	if len(c.Zones) > 0 && !c.ROI.IsZero() {
		v.errorf(p+".roi", "a camera with zones has no roi of its own: each zone has one")
	} else {
		v.region(p+".roi", c.ROI, "for the full frame")
	}
	v.region(p+".reference", c.Reference, "to measure the camera's motion from the frames themselves")
	if c.Size != 0 && (c.Size < MinFrameSize || c.Size > MaxFrameSize) {
		v.errorf(p+".size", "is %d, want %d…%d (or 0 for the preset's size)", c.Size, MinFrameSize, MaxFrameSize)
	}
	if c.FPS < 0 {
		v.errorf(p+".fps", "is %v, want > 0 (or 0 to trust the source)", c.FPS)
	}
	v.oneOf(p+".mode", string(c.Mode), string(ModeSingle), string(ModeEvents), string(ModeAmbient))
	if c.Mode == ModeEvents && c.Source.Kind == KindSynthetic && c.Source.Synthetic.EventEvery == 0 {
		v.errorf(p+".source.synthetic.event_every", "is 0 (one release) but mode is events, which needs several; want > 0")
	}
	// The section is checked in every mode (its defaults are valid), so
	// that switching a camera to ambient never reveals a mistake late.
	ambientOK := v.ambient(p+".ambient", c.Ambient)
	base := &global
	if c.Mode == ModeAmbient && !ambientOK {
		base = nil // the hop is not compared with a record that is itself wrong
	}
	windowOK := v.windowOverride(p+".window", c.Window, base, c, "camera", "windows.length", "windows.hop") && base != nil
	v.scale(p+".scale", fmt.Sprintf("camera %q", c.Name), c.Scale)
	v.zones(p, c, all, windowOK)
}

// ambient checks a camera's ambient section at p and reports whether it
// is valid.
func (v *validator) ambient(p string, a Ambient) bool {
	ok := true
	if a.MaxLag < MinAmbientMaxLag {
		v.errorf(p+".max_lag", "is %v, want ≥ %v (the correlation function must hold several periods of the mode)", a.MaxLag, MinAmbientMaxLag)
		ok = false
	}
	switch {
	case a.Record < MinAmbientRecord:
		v.errorf(p+".record", "is %v, want ≥ %v (the damping's error falls only as 1/√(ζωT))", a.Record, MinAmbientRecord)
		ok = false
	case a.MaxLag >= MinAmbientMaxLag && a.Record < AmbientRecordLags*a.MaxLag:
		v.errorf(p+".record", "is %v, want ≥ %d × max_lag (%v), so that even the longest lags are averaged over several stretches of the record", a.Record, AmbientRecordLags, AmbientRecordLags*a.MaxLag)
		ok = false
	}
	switch {
	case a.Calibrate < MinAmbientCalibrate:
		v.errorf(p+".calibrate", "is %v, want ≥ %v (the readout's weights need many periods of motion)", a.Calibrate, MinAmbientCalibrate)
		ok = false
	case a.Calibrate >= a.Record && a.Record >= MinAmbientRecord:
		v.errorf(p+".calibrate", "is %v, want shorter than record (%v)", a.Calibrate, a.Record)
		ok = false
	}
	return ok
}

// windowOverride checks the window override o at p, whose zero fields
// fall back to base (nil when base is itself invalid: the hop is then not
// compared with the length). cam is the camera whose mode and ambient
// section the override runs under (for a zone, its camera). whose names
// the owner ("camera", "zone") and length and hop what a zero length or
// hop falls back to. It reports whether o is valid.
func (v *validator) windowOverride(p string, o WindowOverride, base *Windows, cam Camera, whose, length, hop string) bool {
	ok := true
	if l := o.Length; l != 0 && l < MinWindowLength {
		v.errorf(p+".length", "is %v, want ≥ %v (or 0 for %s)", l, MinWindowLength, length)
		ok = false
	}
	if o.Hop < 0 {
		v.errorf(p+".hop", "is %v, want > 0 (or 0 for %s)", o.Hop, hop)
		ok = false
	}
	if (o.Bin < 0 && o.Bin != BinAuto) || o.Bin > MaxBin {
		bin := "windows.bin"
		if whose == "zone" {
			bin = "the camera's bin"
		}
		v.errorf(p+".bin", "is %d, want auto or 1…%d (or 0 for %s)", o.Bin, MaxBin, bin)
		ok = false
	}
	if cam.Mode == ModeAmbient {
		// An ambient line's window is its record (EffectiveWindow); even a
		// hop it inherits must fit in it, or the line never starts.
		if !ok || base == nil {
			return ok
		}
		if w := (Camera{Window: o, Mode: ModeAmbient, Ambient: cam.Ambient}).EffectiveWindow(*base); w.Hop > w.Length {
			at, from := p+".hop", ""
			if o.Hop == 0 {
				at, from = p, " ("+hop+")"
			}
			v.errorf(at, "the %s's hop %v%s is longer than its ambient record %v: an ambient line publishes every hop an estimate of the last record", whose, w.Hop, from, w.Length)
			return false
		}
		return true
	}
	if !ok || base == nil || o == (WindowOverride{}) {
		return ok
	}
	if w := (Camera{Window: o}).EffectiveWindow(*base); w.Hop > w.Length {
		at := p + ".hop"
		if o.Hop == 0 {
			at = p + ".length"
		}
		v.errorf(at, "the %s's hop %v is longer than its window length %v", whose, w.Hop, w.Length)
		return false
	}
	return true
}

// zones checks camera c's zones (c at p) under the global sections of
// all; windowOK says whether c's own window override is valid.
func (v *validator) zones(p string, c Camera, all *Config, windowOK bool) {
	global := all.Windows
	if len(c.Zones) > MaxZones {
		v.errorf(p+".zones", "has %d zones, want at most %d: the picture is decoded once, but each zone runs a full estimator pipeline, too much for a small board beyond that", len(c.Zones), MaxZones)
	}
	var base *Windows
	if windowOK {
		w := c.EffectiveWindow(global)
		base = &w
	}
	first := map[string]int{}
	for i, z := range c.Zones {
		zp := fmt.Sprintf("%s.zones[%d]", p, i)
		v.name(zp+".name", "zone", z.Name)
		if z.ROI.IsZero() {
			v.errorf(zp+".roi", "a zone needs a roi: the part of the camera's picture it watches, in source pixels")
		} else {
			v.region(zp+".roi", z.ROI, "")
		}
		if z.Size != 0 && (z.Size < MinFrameSize || z.Size > MaxFrameSize) {
			v.errorf(zp+".size", "is %d, want %d…%d (or 0 for the camera's size)", z.Size, MinFrameSize, MaxFrameSize)
		}
		v.windowOverride(zp+".window", z.Window, base, c, "zone", "the camera's window length", "the camera's hop")
		v.zoneOverrides(zp, z, all)
		v.scale(zp+".scale", fmt.Sprintf("zone %q of camera %q", z.Name, c.Name), z.Scale)
		if !ValidCameraName(z.Name) {
			continue
		}
		if j, dup := first[z.Name]; dup {
			prev := fmt.Sprintf("%s.zones[%d]", p, j)
			v.errorf(zp+".name", "duplicate zone name %q (%s, line %d)", z.Name, prev, v.at(prev+".name").line)
			continue
		}
		first[z.Name] = i
	}
}

func (v *validator) source(p string, c Camera) {
	s := c.Source
	v.positive(p+".timeout", s.Timeout)
	if s.ReconnectMax < 100*time.Millisecond || s.ReconnectMax > 10*time.Minute {
		v.errorf(p+".reconnect_max", "is %v, want between 100ms and 10m", s.ReconnectMax)
	}
	specs := sourceKinds()
	i := slices.IndexFunc(specs, func(k kindSpec) bool { return k.kind == s.Kind })
	if i < 0 {
		names := make([]string, len(specs))
		for j, k := range specs {
			names[j] = string(k.kind)
		}
		v.errorf(p+".kind", "is %q, want %s", s.Kind, orList(names))
		return
	}
	spec := specs[i]
	spec.check(v, p, s)
	// Keys the file sets for another kind are mistakes (kind: file with a
	// url); keys left at their defaults are fine.
	def := reflect.ValueOf(DefaultCamera().Source)
	val := reflect.ValueOf(s)
	t := val.Type()
	for f := range t.NumField() {
		key := yamlKey(t.Field(f))
		if key == "kind" || key == "timeout" || key == "reconnect_max" || slices.Contains(spec.fields, key) {
			continue
		}
		if !v.inFile(p+"."+key) || equalValues(val.Field(f), def.Field(f)) {
			continue
		}
		var users []string
		for _, k := range specs {
			if slices.Contains(k.fields, key) {
				users = append(users, string(k.kind))
			}
		}
		v.errorf(p+"."+key, "is not used by kind %q (only by %s); remove it", s.Kind, orList(users))
	}
}

func checkRTSP(v *validator, p string, s Source) {
	v.sourceURL(p+".url", s.URL.Value(), "kind rtsp needs a url (rtsp://… or rtsps://…)", "rtsp://", "rtsps://")
	v.oneOf(p+".transport", s.Transport, TransportTCP, TransportUDP)
	t := s.TLS
	if t == (SourceTLS{}) {
		return
	}
	if !strings.HasPrefix(strings.ToLower(s.URL.Value()), "rtsps://") {
		v.errorf(p+".tls", "is set, but the url is not rtsps://: a certificate is checked only over RTSPS")
		return
	}
	var set []string
	if t.CAFile != "" {
		set = append(set, "ca_file")
	}
	if t.Fingerprint != "" {
		set = append(set, "fingerprint")
		if _, err := t.FingerprintSHA256(); err != nil {
			v.errorf(p+".tls.fingerprint", "%v", err)
		}
	}
	if t.InsecureSkipVerify {
		set = append(set, "insecure_skip_verify")
	}
	if len(set) > 1 {
		v.errorf(p+".tls."+set[1], "contradicts tls.%s: set one of ca_file (trust a CA), fingerprint (trust one certificate) or insecure_skip_verify (trust any)", set[0])
	}
}

func checkV4L2(v *validator, p string, s Source) {
	if s.Device == "" {
		v.errorf(p+".device", "kind v4l2 needs a device: an index such as \"0\" or a path such as \"/dev/video0\"")
		return
	}
	if _, err := strconv.ParseUint(s.Device, 10, 16); err != nil && !strings.HasPrefix(s.Device, "/") {
		v.errorf(p+".device", "is %q, want an index such as \"0\" or an absolute path such as \"/dev/video0\"", s.Device)
	}
}

func checkFile(v *validator, p string, s Source) {
	if s.Path == "" {
		v.errorf(p+".path", "kind file needs a path")
	}
}

func checkSynthetic(v *validator, p string, s Source) {
	y := s.Synthetic
	p += ".synthetic"
	v.syntheticNames(p, y)
	if len(y.V0) == 0 {
		v.errorf(p+".v0", "want at least one initial velocity")
	}
	v.nonNegative(p+".event_every", y.EventEvery)
	if y.FPS < 0 {
		v.errorf(p+".fps", "is %v, want > 0 (or 0 for the system's default)", y.FPS)
	}
	v.syntheticSize(p+".size", y.Size)
}

func checkWHIP(v *validator, p string, s Source) {
	if s.Token.Value() == "" {
		v.errorf(p+".token", "kind whip needs a token: publishers present it as \"Authorization: Bearer …\" (use env:NAME or file:/path to keep it out of the file)")
	}
}

func checkWHEP(v *validator, p string, s Source) {
	v.sourceURL(p+".url", s.URL.Value(), "kind whep needs a url (the media server's http:// or https:// WHEP endpoint)", "http://", "https://")
}

// sourceURL checks a source URL: set, with one of the schemes (a, b), and
// a host. It never echoes the URL: it may hold credentials.
func (v *validator) sourceURL(path, u, missing, a, b string) {
	switch {
	case u == "":
		v.errorf(path, "%s", missing)
	case !strings.HasPrefix(u, a) && !strings.HasPrefix(u, b):
		v.errorf(path, "want a URL starting with %s or %s", a, b)
	default:
		if pu, err := url.Parse(u); err != nil || pu.Host == "" {
			v.errorf(path, "is not a valid URL with a host")
		}
	}
}

// webrtc checks the ICE restrictions and that whip cameras have an HTTP
// endpoint to publish to.
func (v *validator) webrtc(c *Config) {
	w := c.WebRTC
	for i, a := range w.Addresses {
		if _, err := ParseAddress(a); err != nil {
			v.errorf(fmt.Sprintf("webrtc.addresses[%d]", i), "is %q, want an IP address or a CIDR prefix such as 192.168.1.0/24", a)
		}
	}
	for i, n := range w.Interfaces {
		if n == "" || strings.ContainsAny(n, " /") {
			v.errorf(fmt.Sprintf("webrtc.interfaces[%d]", i), "is %q, want an interface name such as eth0", n)
		}
	}
	if w.UDPPort < 0 || w.UDPPort > 65535 {
		v.errorf("webrtc.udp_port", "is %d, want a port in [1, 65535] or 0 for ephemeral ports", w.UDPPort)
	}
	if (c.HTTP.TLSCertFile == "") != (c.HTTP.TLSKeyFile == "") {
		v.errorf("http.tls_cert_file", "set http.tls_cert_file and http.tls_key_file together (both PEM files) or neither")
	}
	if c.HTTP.ClientCAFile != "" && c.HTTP.TLSCertFile == "" {
		v.errorf("http.client_ca_file", "needs http.tls_cert_file and http.tls_key_file: client certificates are checked only over TLS")
	}
	if c.HTTP.Listen == "" {
		for i, cam := range c.Cameras {
			if cam.Source.Kind == KindWHIP {
				v.errorf(fmt.Sprintf("cameras[%d].source.kind", i), "camera %q is whip but http.listen is empty: publishers need physd's HTTP endpoint", cam.Name)
			}
		}
	}
}

// ParseAddress parses a webrtc.addresses entry: an IP address (a
// single-address prefix) or a CIDR prefix.
func ParseAddress(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// region checks a rectangle in source pixels at path: all zero (meaning
// what zero says), or x, y ≥ 0 and w, h > 0. An empty zero says the caller
// refuses an all-zero rectangle itself.
func (v *validator) region(path string, r ROI, zero string) {
	if r.IsZero() {
		return
	}
	if r.X < 0 || r.Y < 0 {
		v.errorf(path, "x and y must be ≥ 0 (have %d, %d)", r.X, r.Y)
	}
	switch {
	case r.W > 0 && r.H > 0:
	case zero == "":
		v.errorf(path, "w and h must be > 0 (have %d, %d)", r.W, r.H)
	default:
		v.errorf(path, "w and h must be > 0 (have %d, %d), or leave it all zero %s", r.W, r.H, zero)
	}
}
