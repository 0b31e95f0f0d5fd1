package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// writeConfig writes text to physd.yaml in a new temporary directory and
// returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "physd.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// testVocab is the vocabulary the binary passes (daemon.Vocabulary), with
// the names written out: config's tests cannot import estimator or sim.
// daemon's TestVocabulary checks that it stays in step.
func testVocab() Vocabulary {
	return Vocabulary{
		Presets: []string{"edge", "paper"},
		Systems: []string{"pendulum", "intensity", "scale"},
		Regimes: []string{"underdamped", "undamped", "critical", "overdamped"},
		MinSize: 16, MaxSize: 4096,
	}
}

// loadText writes text to a file, loads it with testVocab, and returns the
// config and the error messages with the file's path replaced by
// "physd.yaml".
func loadText(t *testing.T, text string) (*Config, []string) {
	t.Helper()
	path := writeConfig(t, text)
	cfg, err := LoadWith(path, testVocab())
	if err == nil {
		if cfg == nil {
			t.Fatal("Load returned neither a config nor an error")
		}
		return cfg, nil
	}
	if cfg != nil {
		t.Errorf("Load returned a config and an error")
	}
	var msgs []string
	for _, e := range unjoin(err) {
		var ce *Error
		if !errors.As(e, &ce) {
			t.Errorf("error %q is not an *Error", e)
		}
		msgs = append(msgs, strings.ReplaceAll(e.Error(), path, "physd.yaml"))
	}
	return nil, msgs
}

// unjoin splits an errors.Join error into its parts.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestDefaultIsValid(t *testing.T) {
	errs := &errorList{source: "default"}
	validate(Default(), map[string]pos{}, errs, testVocab())
	for _, e := range errs.errs {
		t.Error(e)
	}
}

func TestDefaultHasOnePendulum(t *testing.T) {
	cfg := Default()
	if len(cfg.Cameras) != 1 {
		t.Fatalf("Default has %d cameras, want 1", len(cfg.Cameras))
	}
	c := cfg.Cameras[0]
	if c.Name != "pendulum" || c.Source.Kind != KindSynthetic || c.Source.Synthetic.System != "pendulum" ||
		c.Source.Synthetic.Regime != "underdamped" {
		t.Errorf("default camera = %+v", c)
	}
	// Each call is independent.
	cfg.Cameras[0].Source.Synthetic.V0[0] = 99
	if Default().Cameras[0].Source.Synthetic.V0[0] != 0 {
		t.Error("Default shares state between calls")
	}
}

func TestEmptyInputsGiveDefault(t *testing.T) {
	for _, text := range []string{"", "\n", "# only a comment\n", "---\n", "~\n", "null\n", "---\n# c\n...\n"} {
		cfg, errs := loadText(t, text)
		if errs != nil {
			t.Errorf("%q: %v", text, errs)
			continue
		}
		if !reflect.DeepEqual(cfg, Default()) {
			t.Errorf("%q: got %+v, want Default()", text, cfg)
		}
	}
	cfg, err := Load("")
	if err != nil || !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("Load(\"\") = %+v, %v; want Default()", cfg, err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestExplicitNoCameras(t *testing.T) {
	for _, text := range []string{"cameras: []\n", "cameras:\n"} {
		cfg, errs := loadText(t, text)
		if errs != nil {
			t.Fatalf("%q: %v", text, errs)
		}
		if len(cfg.Cameras) != 0 {
			t.Errorf("%q: %d cameras, want 0", text, len(cfg.Cameras))
		}
	}
	cfg, errs := loadText(t, "log: {level: debug}\n")
	if errs != nil || len(cfg.Cameras) != 1 {
		t.Errorf("a file without cameras: %v, %d cameras; want the default camera", errs, len(cfg.Cameras))
	}
}

func TestOverlayAndValues(t *testing.T) {
	text := `
state_dir: /var/lib/physd
log: {level: debug}
nats:
  urls: [nats://a:4222, "b:4222"]
  heartbeat: 2.5
windows:
  length: 10s
  hop: 500ms
estimator:
  lr_encoder: 1e-4
  tau: 2
cameras:
  - name: cam-1
    source:
      kind: rtsp
      url: rtsps://u:p@host/stream
      timeout: 0.25
    roi: {x: 1, y: 2, w: 30, h: 40}
    mode: events
    window: {hop: 250ms}
  - name: lab_0
    source: {kind: v4l2, device: 0}
`
	cfg, errs := loadText(t, text)
	if errs != nil {
		t.Fatal(errs)
	}
	want := Default()
	want.StateDir = "/var/lib/physd"
	want.Log.Level = "debug"
	want.NATS.URLs = []string{"nats://a:4222", "b:4222"}
	want.NATS.Heartbeat = 2500 * time.Millisecond
	want.Windows.Length = 10 * time.Second
	want.Windows.Hop = 500 * time.Millisecond
	want.Estimator.LREncoder = 1e-4
	want.Estimator.Tau = 2
	c1 := DefaultCamera()
	c1.Name = "cam-1"
	c1.Source.Kind = KindRTSP
	c1.Source.URL = NewSecret("rtsps://u:p@host/stream")
	c1.Source.Timeout = 250 * time.Millisecond
	c1.ROI = ROI{1, 2, 30, 40}
	c1.Mode = ModeEvents
	c1.Window.Hop = 250 * time.Millisecond
	c2 := DefaultCamera()
	c2.Name = "lab_0"
	c2.Source.Kind = KindV4L2
	c2.Source.Device = "0"
	want.Cameras = []Camera{c1, c2}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got  %+v\nwant %+v", cfg, want)
	}
	if got := cfg.Cameras[0].EffectiveWindow(cfg.Windows); got != (Windows{Length: 10 * time.Second, Hop: 250 * time.Millisecond, MaxGap: 1.5, Bin: BinAuto}) {
		t.Errorf("EffectiveWindow = %+v", got)
	}
	if got := cfg.Cameras[1].EffectiveWindow(cfg.Windows); got != cfg.Windows {
		t.Errorf("EffectiveWindow without override = %+v, want the global %+v", got, cfg.Windows)
	}
}

func TestAnchorsAndMerge(t *testing.T) {
	text := `
x-rtsp: &rtsp
  kind: rtsp
  transport: udp
  url: rtsp://host/a
cameras:
  - name: a
    source:
      <<: *rtsp
  - name: b
    source:
      <<: *rtsp
      url: rtsp://host/b
      transport: tcp
`
	cfg, errs := loadText(t, text)
	if errs != nil {
		t.Fatal(errs)
	}
	a, b := cfg.Cameras[0].Source, cfg.Cameras[1].Source
	if a.Kind != KindRTSP || a.Transport != "udp" || a.URL.Value() != "rtsp://host/a" {
		t.Errorf("a: %+v", a)
	}
	if b.Kind != KindRTSP || b.Transport != "tcp" || b.URL.Value() != "rtsp://host/b" {
		t.Errorf("b: %+v", b)
	}
}

func TestLogHelpers(t *testing.T) {
	t.Setenv("JOURNAL_STREAM", "8:1234")
	if got := (Log{Format: FormatAuto}).EffectiveFormat(); got != FormatJSON {
		t.Errorf("auto under systemd = %q, want json", got)
	}
	if got := (Log{Format: FormatText}).EffectiveFormat(); got != FormatText {
		t.Errorf("text = %q", got)
	}
	t.Setenv("JOURNAL_STREAM", "")
	if got := (Log{Format: FormatAuto}).EffectiveFormat(); got != FormatText {
		t.Errorf("auto without systemd = %q, want text", got)
	}
	if (Log{Level: "warn"}).SlogLevel().String() != "WARN" {
		t.Error("SlogLevel(warn)")
	}
}

func TestValidCameraName(t *testing.T) {
	for name, want := range map[string]bool{
		"pendulum": true, "a": true, "A-b_9": true, strings.Repeat("x", 64): true,
		"": false, strings.Repeat("x", 65): false, "a.b": false, "a b": false, "a*": false, "a>": false, "é": false,
	} {
		if got := ValidCameraName(name); got != want {
			t.Errorf("ValidCameraName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{Source: "f.yaml", Line: 3, Col: 7, Path: "a.b", Msg: "bad"}, "f.yaml:3:7: a.b: bad"},
		{Error{Source: "f.yaml", Path: "a.b", Msg: "bad"}, "f.yaml: a.b: bad"},
		{Error{Source: "f.yaml", Line: 2, Col: 1, Msg: "bad"}, "f.yaml:2:1: bad"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestSourceKinds(t *testing.T) {
	got := SourceKinds()
	want := []SourceKind{KindSynthetic, KindRTSP, KindV4L2, KindFile, KindWHIP, KindWHEP}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SourceKinds() = %v, want %v", got, want)
	}
	// Every key a kind claims exists in Source.
	keys := fieldsOf(reflect.TypeFor[Source]())
	for _, k := range sourceKinds() {
		for _, f := range k.fields {
			if _, ok := keys[f]; !ok {
				t.Errorf("kind %s uses unknown source key %q", k.kind, f)
			}
		}
	}
}

// TestRateLimitOptions: the defaults, a file that sets both options, and
// rate_limit 0 (disabled) accepting any burst ≥ 0.
func TestRateLimitOptions(t *testing.T) {
	if h := Default().HTTP; h.RateLimit != 20 || h.RateBurst != 40 {
		t.Errorf("default rate_limit %v rate_burst %d, want 20 and 40", h.RateLimit, h.RateBurst)
	}
	cfg, errs := loadText(t, "http: {rate_limit: 0.5, rate_burst: 1}\n")
	if errs != nil || cfg.HTTP.RateLimit != 0.5 || cfg.HTTP.RateBurst != 1 {
		t.Errorf("rate_limit 0.5 rate_burst 1: %+v %v", cfg, errs)
	}
	for _, text := range []string{"http: {rate_limit: 0}\n", "http: {rate_limit: 0, rate_burst: 0}\n"} {
		cfg, errs := loadText(t, text)
		if errs != nil || cfg.HTTP.RateLimit != 0 {
			t.Errorf("%q: %v", text, errs)
		}
	}
	// A value that is not a finite number never reaches the daemon.
	list := &errorList{source: "code"}
	bad := Default()
	bad.HTTP.RateLimit = math.NaN()
	validate(bad, map[string]pos{}, list, testVocab())
	if len(list.errs) != 1 || !strings.Contains(list.errs[0].Error(), "http.rate_limit: is NaN") {
		t.Errorf("NaN rate_limit: %v", list.errs)
	}
}

// TestSourceTLS: the rtsps certificate options are read, a fingerprint in
// any of the forms openssl and browsers print is accepted, and each
// mistake is reported at its own key.
func TestSourceTLS(t *testing.T) {
	const fp = "E9:15:74:2F:F7:AC:D4:F3:91:9F:4E:72:C8:70:92:96:12:C1:0F:34:2F:DA:94:77:D1:64:72:09:67:77:63:AC"
	cam := func(url, tls string) string {
		return "cameras:\n  - name: cam\n    source: {kind: rtsp, url: \"" + url + "\", tls: " + tls + "}\n"
	}
	for _, f := range []string{"sha256:" + fp, strings.ToLower(fp), strings.ReplaceAll(fp, ":", ""), "SHA256:" + fp} {
		cfg, errs := loadText(t, cam("rtsps://cam.local/s", "{fingerprint: \""+f+"\"}"))
		if errs != nil {
			t.Fatalf("fingerprint %q: %v", f, errs)
		}
		b, err := cfg.Cameras[0].Source.TLS.FingerprintSHA256()
		if err != nil || len(b) != 32 || b[0] != 0xE9 || b[31] != 0xAC {
			t.Errorf("fingerprint %q: %x, %v", f, b, err)
		}
	}
	cfg, errs := loadText(t, cam("rtsps://cam.local/s", "{insecure_skip_verify: true}"))
	if errs != nil || !cfg.Cameras[0].Source.TLS.InsecureSkipVerify {
		t.Errorf("insecure_skip_verify: %v", errs)
	}
	for _, tc := range []struct{ url, tls, want string }{
		{"rtsp://cam.local/s", "{ca_file: /etc/ca.pem}", "cameras[0].source.tls: is set, but the url is not rtsps://"},
		{"rtsps://cam.local/s", "{fingerprint: \"sha256:E9:15\"}", "cameras[0].source.tls.fingerprint: is \"sha256:E9:15\", want a SHA-256 fingerprint"},
		{"rtsps://cam.local/s", "{fingerprint: \"" + fp + ":00\"}", "cameras[0].source.tls.fingerprint: is"},
		{"rtsps://cam.local/s", "{fingerprint: \"" + fp + "\", insecure_skip_verify: true}", "cameras[0].source.tls.insecure_skip_verify: contradicts tls.fingerprint"},
		{"rtsps://cam.local/s", "{ca_file: /etc/ca.pem, fingerprint: \"" + fp + "\"}", "cameras[0].source.tls.fingerprint: contradicts tls.ca_file"},
	} {
		_, errs := loadText(t, cam(tc.url, tc.tls))
		if len(errs) != 1 || !strings.Contains(errs[0], tc.want) {
			t.Errorf("%s with tls %s: errors %q, want one containing %q", tc.url, tc.tls, errs, tc.want)
		}
	}
	// A kind that does not read rtsps refuses the key.
	_, errs = loadText(t, "cameras:\n  - name: cam\n    source: {kind: file, path: /x.mp4, tls: {insecure_skip_verify: true}}\n")
	if len(errs) != 1 || !strings.Contains(errs[0], "cameras[0].source.tls: is not used by kind \"file\"") {
		t.Errorf("tls on a file source: %q", errs)
	}
}

// The certificate's limits default to 0, which the certificate reads as
// its own default (they are defined once, in window.Thresholds); a given
// limit is kept, and one out of range is an error naming it.
func TestCertifyLimits(t *testing.T) {
	if c := Default().Certify; c != (Certify{}) {
		t.Errorf("default certify %+v, want every limit 0 (the certificate's default)", c)
	}
	cfg, msgs := loadText(t, "certify:\n  min_psi: 0.2\n  max_revisit: 3\n")
	if len(msgs) != 0 || cfg.Certify.MinPsi != 0.2 || cfg.Certify.MaxRevisit != 3 || cfg.Certify.MaxRelResidual != 0 {
		t.Errorf("given limits: %+v, %v", cfg, msgs)
	}
	cfg, msgs = loadText(t, "certify:\n  max_rel_sigma_fn: 0.02\n  sigma_zeta_floor: 0.01\n")
	if len(msgs) != 0 || cfg.Certify.MaxRelSigmaFn != 0.02 || cfg.Certify.SigmaZetaFloor != 0.01 || cfg.Certify.MaxRelSigmaZeta != 0 {
		t.Errorf("given precision limits: %+v, %v", cfg.Certify, msgs)
	}
	_, msgs = loadText(t, "certify:\n  min_psi: 1.5\n  min_width: -0.1\n  max_revisit: -1\n  max_rel_sigma_fn: -0.01\n  max_rel_sigma_zeta: .nan\n  sigma_zeta_floor: .inf\n")
	joined := strings.Join(msgs, "\n")
	for _, key := range []string{"certify.min_psi", "certify.min_width", "certify.max_revisit", "certify.max_rel_sigma_fn", "certify.max_rel_sigma_zeta", "certify.sigma_zeta_floor"} {
		if !strings.Contains(joined, key) {
			t.Errorf("no error naming %s in %q", key, joined)
		}
	}
}

func TestEstimatorWorkers(t *testing.T) {
	if w := Default().Estimator.Workers; w != 1 {
		t.Errorf("default estimator.workers %d, want 1", w)
	}
	for _, n := range []int{0, 1, 4} {
		cfg, msgs := loadText(t, fmt.Sprintf("estimator:\n  workers: %d\n", n))
		if len(msgs) != 0 || cfg.Estimator.Workers != n {
			t.Errorf("workers: %d: got %d, %v", n, cfg.Estimator.Workers, msgs)
		}
	}
	_, msgs := loadText(t, "estimator:\n  workers: -2\n")
	want := "physd.yaml:2:12: estimator.workers: is -2, want ≥ 1, or 0 for one per core"
	if len(msgs) != 1 || msgs[0] != want {
		t.Errorf("workers: -2: errors %q, want [%q]", msgs, want)
	}
}

// TestHTTPTokenRules: a bearer token (http.token, a whip or whep camera's
// source.token) that is blank, has white space around it or holds a
// control character is refused with its field named, wherever physd
// listens; off loopback, a token physd accepts needs 16 characters of which
// 8 distinct. The rules apply to the resolved value (env:, file:), and no
// error shows the token.
func TestHTTPTokenRules(t *testing.T) {
	dir := t.TempDir()
	shortFile := filepath.Join(dir, "short")
	if err := os.WriteFile(shortFile, []byte("  0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	strongFile := filepath.Join(dir, "strong")
	if err := os.WriteFile(strongFile, []byte("9f86d081884c7d659a2feaa0c55ad015\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PHYSD_TEST_NEWLINE_TOKEN", "9f86d081884c7d659a2feaa0c55ad015\n")
	t.Setenv("PHYSD_TEST_WEAK_TOKEN", "abababababababababab")
	const (
		remote = "http: {listen: \"0.0.0.0:8090\", token: %s}\n"
		strong = "9f86d081884c7d659a2feaa0c55ad015"
		whip   = "http: {listen: %q, token: %s}\ncameras:\n  - name: phone\n    source: {kind: whip, token: %s}\n"
		whep   = "http: {listen: \"0.0.0.0:8090\", token: " + strong + "}\ncameras:\n  - name: relay\n    source: {kind: whep, url: \"http://h:8889/a/whep\", token: %s}\n"
	)
	accepted := []struct{ name, text string }{
		{"short token on loopback", "http: {token: a}\n"},
		{"short tokens on ::1", fmt.Sprintf(whip, "[::1]:8090", "a", "t")},
		{"short tokens on localhost", fmt.Sprintf(whip, "localhost:8090", "tok", "tok2")},
		{"strong token off loopback", fmt.Sprintf(remote, strong)},
		{"16 characters, 8 distinct", fmt.Sprintf(remote, "abcdefghabcdefgh")},
		{"strong token from a file", fmt.Sprintf(remote, "file:"+strongFile)},
		{"space inside", fmt.Sprintf(remote, `"correct horse battery staple"`)},
		{"strong whip token off loopback", fmt.Sprintf(whip, "0.0.0.0:8090", strong, "0123456789ABCDEFGHIJ")},
		{"short whep token off loopback (sent, not accepted)", fmt.Sprintf(whep, "abc")},
	}
	for _, tc := range accepted {
		if _, msgs := loadText(t, tc.text); msgs != nil {
			t.Errorf("%s: refused: %q", tc.name, msgs)
		}
	}
	refused := []struct {
		name, text string
		want       []string // in the one error, in order
	}{
		{"blank", `http: {token: "   "}` + "\n", []string{"http.token: is blank"}},
		{"blank off loopback", fmt.Sprintf(remote, `"     "`), []string{"http.token: is blank"}},
		{"leading space", `http: {token: " s3cr3t"}` + "\n", []string{"http.token: has white space at its start or end"}},
		{"trailing newline from env", fmt.Sprintf(remote, "env:PHYSD_TEST_NEWLINE_TOKEN"), []string{"http.token: has white space", "(from env:PHYSD_TEST_NEWLINE_TOKEN)"}},
		{"tab inside", `http: {token: "to\tk"}` + "\n", []string{"http.token: contains a control character"}},
		{"control character", `http: {token: "to\x01k"}` + "\n", []string{"http.token: contains a control character"}},
		{"short off loopback", fmt.Sprintf(remote, "a"), []string{"http.token: is too short", "want at least 16", `http.listen "0.0.0.0:8090" is not a loopback address`}},
		{"15 characters off loopback", fmt.Sprintf(remote, "0123456789abcde"), []string{"http.token: is too short: 15 characters, want at least 16"}},
		{"short file off loopback", fmt.Sprintf(remote, "file:"+shortFile), []string{"http.token: is too short", "(from file:" + shortFile + ")"}},
		{"one character repeated", fmt.Sprintf(remote, "aaaaaaaaaaaaaaaaaaaaaaaa"), []string{"http.token: is too weak: 1 distinct characters, want at least 8"}},
		{"two characters alternating", fmt.Sprintf(remote, "env:PHYSD_TEST_WEAK_TOKEN"), []string{"http.token: is too weak", "(from env:PHYSD_TEST_WEAK_TOKEN): 2 distinct characters"}},
		{"7 distinct", fmt.Sprintf(remote, "abcdefgabcdefgabcdefg"), []string{"http.token: is too weak: 7 distinct characters"}},
		{"blank whip token", fmt.Sprintf(whip, "127.0.0.1:8090", `""`, `"  "`), []string{"cameras[0].source.token: is blank"}},
		{"whip token with a newline", fmt.Sprintf(whip, "127.0.0.1:8090", `""`, `"tok\n"`), []string{"cameras[0].source.token: has white space"}},
		{"short whip token off loopback", fmt.Sprintf(whip, "0.0.0.0:8090", strong, "tok"), []string{"cameras[0].source.token: is too short", "want at least 16"}},
		{"weak whip token off loopback", fmt.Sprintf(whip, "0.0.0.0:8090", strong, "phonephonephonephone"), []string{"cameras[0].source.token: is too weak: 5 distinct characters"}},
		{"blank whep token", fmt.Sprintf(whep, `" "`), []string{"cameras[0].source.token: is blank"}},
	}
	secrets := []string{"s3cr3t", "to\tk", "to\x01k", "abababab", "aaaaaaaa", "abcdefgabc", "0123456789", "phonephone", "9f86d081"}
	for _, tc := range refused {
		_, msgs := loadText(t, tc.text)
		if len(msgs) != 1 {
			t.Errorf("%s: errors %q, want one", tc.name, msgs)
			continue
		}
		rest := msgs[0]
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: error %q, want it to contain %q", tc.name, msgs[0], w)
				break
			}
			rest = rest[i+len(w):]
		}
		for _, s := range secrets {
			if strings.Contains(strings.ReplaceAll(msgs[0], shortFile, ""), s) {
				t.Errorf("%s: error %q shows the token", tc.name, msgs[0])
			}
		}
	}
}

// The embedded server beyond loopback needs TLS, as HTTP needs a token;
// the client credentials of nats.urls' servers do not apply to it.
func TestEmbeddedAccess(t *testing.T) {
	for _, c := range []struct{ yaml, field string }{
		{"nats:\n  embedded:\n    listen: 0.0.0.0:4222\n", "nats.embedded.listen"},
		{"nats:\n  embedded:\n    listen: 10.0.0.5:4222\n    tls: {ca_file: /etc/ca.pem}\n", "nats.embedded.tls.cert_file"},
		{"nats:\n  embedded:\n    tls: {cert_file: /etc/c.pem}\n", "nats.embedded.tls.key_file"},
		{"nats:\n  token: secret-of-sorts\n", "nats.token"},
		{"nats:\n  urls: [nats://10.0.0.1:4222]\n  embedded:\n    tls: {cert_file: /etc/c.pem, key_file: /etc/k.pem}\n", "nats.embedded.tls"},
	} {
		_, msgs := loadText(t, c.yaml)
		if !strings.Contains(strings.Join(msgs, "\n"), c.field+":") {
			t.Errorf("%q: no error naming %s in %q", c.yaml, c.field, msgs)
		}
	}
	for _, ok := range []string{
		"nats:\n  embedded:\n    listen: 127.0.0.1:4222\n",
		"nats:\n  embedded:\n    listen: 0.0.0.0:4222\n    tls: {cert_file: /etc/c.pem, key_file: /etc/k.pem}\n",
		"nats:\n  urls: [nats://10.0.0.1:4222]\n  token: secret-of-sorts\n",
	} {
		if _, msgs := loadText(t, ok); len(msgs) != 0 {
			t.Errorf("%q: %v", ok, msgs)
		}
	}
}

// TestAmbientDefaults: every camera starts from the ambient defaults
// (60m record, 60s lags, 20s calibration); a camera in mode ambient takes
// its section, its zones inherit the mode and the section, and its window
// is its record, so that its hop may exceed the sliding windows' length.
func TestAmbientDefaults(t *testing.T) {
	want := Ambient{Record: 60 * time.Minute, MaxLag: time.Minute, Calibrate: 20 * time.Second}
	if a := DefaultCamera().Ambient; a != want {
		t.Errorf("default ambient %+v, want %+v", a, want)
	}
	cfg, msgs := loadText(t, ""+
		"cameras:\n"+
		"  - name: footbridge\n"+
		"    mode: ambient\n"+
		"    ambient: {record: 4m, max_lag: 20s}\n"+
		"    window: {hop: 30s}\n"+
		"  - name: bridge\n"+
		"    mode: ambient\n"+
		"    zones:\n"+
		"      - {name: east, roi: {x: 0, y: 0, w: 8, h: 8}, window: {hop: 1m}}\n")
	if len(msgs) != 0 {
		t.Fatalf("errors: %q", msgs)
	}
	cam := cfg.Cameras[0]
	if cam.Mode != ModeAmbient || cam.Ambient != (Ambient{Record: 4 * time.Minute, MaxLag: 20 * time.Second, Calibrate: 20 * time.Second}) {
		t.Errorf("camera mode %q ambient %+v", cam.Mode, cam.Ambient)
	}
	if w := cam.EffectiveWindow(cfg.Windows); w.Length != 4*time.Minute || w.Hop != 30*time.Second {
		t.Errorf("ambient camera's window %+v, want its record as length and its hop", w)
	}
	zc := cfg.Cameras[1].ZoneCamera(cfg.Cameras[1].Zones[0])
	if zc.Mode != ModeAmbient || zc.Ambient != want {
		t.Errorf("zone runs as mode %q ambient %+v, want its camera's", zc.Mode, zc.Ambient)
	}
	if w := zc.EffectiveWindow(cfg.Windows); w.Length != want.Record || w.Hop != time.Minute {
		t.Errorf("ambient zone's window %+v, want the record and its own hop", w)
	}
	if w := DefaultCamera().EffectiveWindow(Default().Windows); w != Default().Windows {
		t.Errorf("a single-mode camera's window %+v changed", w)
	}
}

// TestAmbientErrors: each rule of the ambient section, and the hop an
// ambient camera or zone may have, is refused with the field's path.
func TestAmbientErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"max_lag", "    ambient: {max_lag: 1s}\n",
			[]string{"physd.yaml:4:24: cameras[0].ambient.max_lag: is 1s, want ≥ 2s (the correlation function must hold several periods of the mode)"}},
		{"short record", "    ambient: {record: 90s}\n",
			[]string{"physd.yaml:4:23: cameras[0].ambient.record: is 1m30s, want ≥ 2m0s (the damping's error falls only as 1/√(ζωT))"}},
		{"record under 4 lags", "    ambient: {record: 3m, max_lag: 50s}\n",
			[]string{"physd.yaml:4:23: cameras[0].ambient.record: is 3m0s, want ≥ 4 × max_lag (3m20s), so that even the longest lags are averaged over several stretches of the record"}},
		{"short calibration", "    ambient: {calibrate: 4s}\n",
			[]string{"physd.yaml:4:26: cameras[0].ambient.calibrate: is 4s, want ≥ 5s (the readout's weights need many periods of motion)"}},
		{"calibration as long as the record", "    ambient: {record: 4m, max_lag: 20s, calibrate: 4m}\n",
			[]string{"physd.yaml:4:52: cameras[0].ambient.calibrate: is 4m0s, want shorter than record (4m0s)"}},
		{"hop beyond the record", "    ambient: {record: 4m, max_lag: 20s}\n    window: {hop: 5m}\n",
			[]string{"physd.yaml:5:19: cameras[0].window.hop: the camera's hop 5m0s is longer than its ambient record 4m0s: an ambient line publishes every hop an estimate of the last record"}},
		{"zone hop beyond the record", "    ambient: {record: 4m, max_lag: 20s}\n    zones:\n      - {name: z, roi: {x: 0, y: 0, w: 8, h: 8}, window: {hop: 5m}}\n",
			[]string{"physd.yaml:6:64: cameras[0].zones[0].window.hop: the zone's hop 5m0s is longer than its ambient record 4m0s: an ambient line publishes every hop an estimate of the last record"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, msgs := loadText(t, "cameras:\n  - name: a\n    mode: ambient\n"+tc.text)
			if !reflect.DeepEqual(msgs, tc.want) {
				t.Errorf("errors\n %q\nwant\n %q", msgs, tc.want)
			}
		})
	}
	// Checked in every mode, so that switching to ambient reveals nothing.
	_, msgs := loadText(t, "cameras:\n  - name: a\n    ambient: {record: 1m}\n")
	if len(msgs) != 1 || !strings.Contains(msgs[0], "cameras[0].ambient.record: is 1m0s") {
		t.Errorf("single mode with a bad ambient section: %q", msgs)
	}
	_, msgs = loadText(t, "cameras:\n  - name: a\n    mode: steady\n")
	if len(msgs) != 1 || !strings.Contains(msgs[0], `cameras[0].mode: is "steady", want "single", "events" or "ambient"`) {
		t.Errorf("unknown mode: %q", msgs)
	}
}

// TestAmbientDiff: a reload that changes a camera's ambient section
// restarts it only when the camera is in ambient mode.
func TestAmbientDiff(t *testing.T) {
	for _, mode := range []Mode{ModeSingle, ModeAmbient} {
		old, next := Default(), Default()
		old.Cameras[0].Mode, next.Cameras[0].Mode = mode, mode
		next.Cameras[0].Ambient.Record = 30 * time.Minute
		_, _, changed := Diff(old, next)
		if want := mode == ModeAmbient; (len(changed) == 1) != want {
			t.Errorf("mode %s: a new ambient record changed %v, want a restart %v", mode, changed, want)
		}
	}
}
