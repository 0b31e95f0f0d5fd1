package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want []string // every error, in order, with the file named physd.yaml
	}{
		{
			name: "unknown top-level key",
			text: "log:\n  level: info\nloglevel: debug\n",
			want: []string{`physd.yaml:3:1: loglevel: unknown key "loglevel"`},
		},
		{
			name: "unknown nested key with suggestion",
			text: "nats:\n  heartbeat: 1s\n  reconect_wait: 1s\n",
			want: []string{`physd.yaml:3:3: nats.reconect_wait: unknown key "reconect_wait" (did you mean "reconnect_wait"?)`},
		},
		{
			name: "unknown key in a list element",
			text: "cameras:\n  - name: a\n    window:\n      length: 5s\n      hopp: 1s\n",
			want: []string{`physd.yaml:5:7: cameras[0].window.hopp: unknown key "hopp" (did you mean "hop"?)`},
		},
		{
			name: "string for an integer",
			text: "estimator:\n  steps_per_window: many\n",
			want: []string{`physd.yaml:2:21: estimator.steps_per_window: want an integer, got "many"`},
		},
		{
			name: "quoted number for an integer",
			text: "estimator: {seed: \"7\"}\n",
			want: []string{`physd.yaml:1:19: estimator.seed: want an integer, got "7"`},
		},
		{
			name: "float for an integer",
			text: "alerts:\n  consecutive: 2.5\n",
			want: []string{`physd.yaml:2:16: alerts.consecutive: want an integer, got "2.5"`},
		},
		{
			name: "list for a mapping",
			text: "log: [info]\n",
			want: []string{`physd.yaml:1:6: log: want a mapping, got a list`},
		},
		{
			name: "mapping for a list",
			text: "nats:\n  urls: {a: b}\n",
			want: []string{`physd.yaml:2:9: nats.urls: want a list, got a mapping`},
		},
		{
			name: "scalar for the cameras list",
			text: "cameras: pendulum\n",
			want: []string{`physd.yaml:1:10: cameras: want a list, got "pendulum"`},
		},
		{
			name: "bad duration",
			text: "windows:\n  hop: 1 second\n",
			want: []string{`physd.yaml:2:8: windows.hop: want a duration such as "1.5s" or "500ms", or a number of seconds, got "1 second"`},
		},
		{
			name: "duration as a list",
			text: "nats: {heartbeat: [1s]}\n",
			want: []string{`physd.yaml:1:19: nats.heartbeat: want a duration such as "1.5s" or "500ms", or a number of seconds, got a list`},
		},
		{
			name: "bool as string",
			text: "nats:\n  jetstream:\n    enabled: yes\n",
			want: []string{`physd.yaml:3:14: nats.jetstream.enabled: want true or false, got "yes"`},
		},
		{
			name: "infinite float",
			text: "windows: {max_gap: .inf}\n",
			want: []string{`physd.yaml:1:20: windows.max_gap: want a finite number, got .inf`},
		},
		{
			name: "duplicate key",
			text: "log:\n  level: info\n  level: debug\n",
			want: []string{`physd.yaml:3:3: log.level: duplicate key "level" (first at line 2)`},
		},
		{
			name: "several errors at once, sorted by position",
			text: "" +
				"log:\n" +
				"  level: loud\n" + // 2: semantic
				"  colour: red\n" + // 3: unknown key
				"windows:\n" +
				"  length: 0.1\n" + // 5: too short
				"  hop: x\n" + // 6: bad duration
				"cameras:\n" +
				"  - name: a.b\n" + // 8: bad name
				"    size: big\n", // 9: wrong type
			want: []string{
				`physd.yaml:2:10: log.level: is "loud", want "debug", "info", "warn" or "error"`,
				`physd.yaml:3:3: log.colour: unknown key "colour"`,
				`physd.yaml:5:11: windows.length: is 100ms, want ≥ 400ms`,
				`physd.yaml:6:8: windows.hop: want a duration such as "1.5s" or "500ms", or a number of seconds, got "x"`,
				`physd.yaml:8:11: cameras[0].name: is "a.b", want 1 to 64 of A-Z a-z 0-9 _ - (it becomes a NATS subject token)`,
				`physd.yaml:9:11: cameras[0].size: want an integer, got "big"`,
			},
		},
		{
			name: "bad regions",
			text: "cameras:\n  - name: a\n    roi: {x: -1, y: 0, w: 10, h: 10}\n    reference: {x: 5, y: 5, w: 0, h: 10}\n",
			want: []string{
				`physd.yaml:3:10: cameras[0].roi: x and y must be ≥ 0 (have -1, 0)`,
				`physd.yaml:4:16: cameras[0].reference: w and h must be > 0 (have 0, 10), or leave it all zero to measure the camera's motion from the frames themselves`,
			},
		},
		{
			name: "duplicate camera names",
			text: "cameras:\n  - name: a\n  - name: b\n  - name: a\n",
			want: []string{`physd.yaml:4:11: cameras[2].name: duplicate camera name "a" (cameras[0], line 2)`},
		},
		{
			name: "bad and missing camera names",
			text: "cameras:\n  - name: \"bad name\"\n  - name: " + strings.Repeat("x", 65) + "\n  - source: {kind: synthetic}\n",
			want: []string{
				`physd.yaml:2:11: cameras[0].name: is "bad name", want 1 to 64 of A-Z a-z 0-9 _ - (it becomes a NATS subject token)`,
				`physd.yaml:3:11: cameras[1].name: is "` + strings.Repeat("x", 65) + `", want 1 to 64 of A-Z a-z 0-9 _ - (it becomes a NATS subject token)`,
				`physd.yaml:4:5: cameras[2].name: a camera needs a name`,
			},
		},
		{
			name: "per-kind validation",
			text: "" +
				"cameras:\n" +
				"  - name: r\n" +
				"    source: {kind: rtsp, url: \"http://cam/x\", transport: quic}\n" +
				"  - name: v\n" +
				"    source: {kind: v4l2}\n" +
				"  - name: f\n" +
				"    source:\n" +
				"      kind: file\n" +
				"      device: /dev/video0\n" +
				"  - name: s\n" +
				"    source:\n" +
				"      synthetic: {system: spring, regime: wobbly, v0: []}\n" +
				"  - name: w\n" +
				"    source: {kind: webrtc}\n",
			want: []string{
				`physd.yaml:3:31: cameras[0].source.url: want a URL starting with rtsp:// or rtsps://`,
				`physd.yaml:3:58: cameras[0].source.transport: is "quic", want "tcp" or "udp"`,
				`physd.yaml:5:13: cameras[1].source.device: kind v4l2 needs a device: an index such as "0" or a path such as "/dev/video0"`,
				`physd.yaml:8:7: cameras[2].source.path: kind file needs a path`,
				`physd.yaml:9:15: cameras[2].source.device: is not used by kind "file" (only by "v4l2"); remove it`,
				`physd.yaml:12:27: cameras[3].source.synthetic.system: is "spring", want "pendulum", "intensity" or "scale"`,
				`physd.yaml:12:43: cameras[3].source.synthetic.regime: is "wobbly", want "underdamped", "undamped", "critical" or "overdamped"`,
				`physd.yaml:12:55: cameras[3].source.synthetic.v0: want at least one initial velocity`,
				`physd.yaml:14:20: cameras[4].source.kind: is "webrtc", want "synthetic", "rtsp", "v4l2", "file", "whip" or "whep"`,
			},
		},
		{
			name: "webrtc validation",
			text: "" +
				"http: {listen: \"\"}\n" +
				"webrtc: {addresses: [10.0.0.0/33, eth0], interfaces: [\"\"], udp_port: 70000}\n" +
				"cameras:\n" +
				"  - name: p\n" +
				"    source: {kind: whip}\n" +
				"  - name: q\n" +
				"    source: {kind: whep, url: \"rtsp://x/y\", transport: udp}\n",
			want: []string{
				`physd.yaml:2:22: webrtc.addresses[0]: is "10.0.0.0/33", want an IP address or a CIDR prefix such as 192.168.1.0/24`,
				`physd.yaml:2:35: webrtc.addresses[1]: is "eth0", want an IP address or a CIDR prefix such as 192.168.1.0/24`,
				`physd.yaml:2:55: webrtc.interfaces[0]: is "", want an interface name such as eth0`,
				`physd.yaml:2:70: webrtc.udp_port: is 70000, want a port in [1, 65535] or 0 for ephemeral ports`,
				`physd.yaml:5:13: cameras[0].source.token: kind whip needs a token: publishers present it as "Authorization: Bearer …" (use env:NAME or file:/path to keep it out of the file)`,
				`physd.yaml:5:20: cameras[0].source.kind: camera "p" is whip but http.listen is empty: publishers need physd's HTTP endpoint`,
				`physd.yaml:7:31: cameras[1].source.url: want a URL starting with http:// or https://`,
				`physd.yaml:7:56: cameras[1].source.transport: is not used by kind "whep" (only by "rtsp"); remove it`,
			},
		},
		{
			name: "http off loopback needs a token",
			text: "" +
				"http: {listen: \"0.0.0.0:8090\"}\n",
			want: []string{
				`physd.yaml:1:16: http.listen: is "0.0.0.0:8090", not a loopback address: set http.token, the bearer token operators present for /metrics, /readyz and the API, or http.client_ca_file for TLS client certificates`,
			},
		},
		{
			name: "client certificates need TLS",
			text: "" +
				"http: {listen: \"0.0.0.0:8090\", client_ca_file: /etc/physd/ca.pem}\n",
			want: []string{
				`physd.yaml:1:48: http.client_ca_file: needs http.tls_cert_file and http.tls_key_file: client certificates are checked only over TLS`,
			},
		},
		{
			name: "reconnect pause out of range",
			text: "cameras:\n  - name: a\n    source: {kind: synthetic, reconnect_max: 10ms}\n",
			want: []string{
				`physd.yaml:3:46: cameras[0].source.reconnect_max: is 10ms, want between 100ms and 10m`,
			},
		},
		{
			name: "negative rate limit",
			text: "http: {rate_limit: -1, rate_burst: 0}\n",
			want: []string{
				`physd.yaml:1:20: http.rate_limit: is -1, want ≥ 0 requests a second per client (0 disables the limit)`,
			},
		},
		{
			name: "rate limit without a burst",
			text: "http:\n  rate_limit: 2.5\n  rate_burst: 0\n",
			want: []string{
				`physd.yaml:3:15: http.rate_burst: is 0 but http.rate_limit is 2.5, want ≥ 1 (requests a client may make at once), or http.rate_limit: 0 to disable the limit`,
			},
		},
		{
			name: "negative burst with the limit off",
			text: "http: {rate_limit: 0, rate_burst: -3}\n",
			want: []string{
				`physd.yaml:1:35: http.rate_burst: is -3, want ≥ 1 (requests a client may make at once)`,
			},
		},
		{
			name: "rate limit as a string",
			text: "http: {rate_limit: fast}\n",
			want: []string{
				`physd.yaml:1:20: http.rate_limit: want a number, got "fast"`,
			},
		},
		{
			name: "window checks",
			text: "" +
				"windows: {length: 2s, hop: 3s, max_gap: 1}\n" +
				"cameras:\n" +
				"  - name: a\n" +
				"    window: {length: 1s, hop: 2s}\n",
			want: []string{
				`physd.yaml:1:28: windows.hop: is 3s, longer than windows.length 2s`,
				`physd.yaml:1:41: windows.max_gap: is 1, want > 1 (a multiple of the nominal frame step)`,
				`physd.yaml:4:31: cameras[0].window.hop: the camera's hop 2s is longer than its window length 1s`,
			},
		},
		{
			name: "bin checks",
			text: "" +
				"windows: {bin: 9}\n" +
				"cameras:\n" +
				"  - name: a\n" +
				"    window: {bin: -1}\n" +
				"  - name: b\n" +
				"    window: {bin: automatic}\n" +
				"  - name: c\n" +
				"    window: {bin: 12}\n",
			want: []string{
				`physd.yaml:1:16: windows.bin: is 9, want auto or 0…8 (frames decimated into one; 0 or 1: none)`,
				`physd.yaml:4:19: cameras[0].window.bin: want auto or an integer ≥ 0, got "-1"`,
				`physd.yaml:6:19: cameras[1].window.bin: want auto or an integer ≥ 0, got "automatic"`,
				`physd.yaml:8:19: cameras[2].window.bin: is 12, want auto or 1…8 (or 0 for windows.bin)`,
			},
		},
		{
			name: "nats checks",
			text: "" +
				"nats:\n" +
				"  urls: [\"http://user:secret@host\", \"nohost\"]\n" +
				"  subject_prefix: \"physd.*\"\n" +
				"  token: abc\n" +
				"  nkey_seed: SUABC\n" +
				"  tls: {cert_file: c.pem}\n" +
				"  jetstream: {stream: \"a.b\"}\n",
			want: []string{
				`physd.yaml:2:10: nats.urls[0]: has scheme "http", want a nats://, tls://, ws:// or wss:// URL, or host:port`,
				`physd.yaml:2:37: nats.urls[1]: want a nats://, tls://, ws:// or wss:// URL, or host:port`,
				`physd.yaml:3:19: nats.subject_prefix: is "physd.*": has a wildcard (* or >)`,
				`physd.yaml:4:10: nats.token: set only one of credentials_file, nkey_seed and token (have nkey_seed and token)`,
				`physd.yaml:6:8: nats.tls.key_file: cert_file and key_file must be set together`,
				`physd.yaml:7:23: nats.jetstream.stream: is "a.b": want printable ASCII without white space, '.', '*', '>', '/' or '\'`,
			},
		},
		{
			name: "unknown preset",
			text: "estimator:\n  preset: huge\n",
			want: []string{`physd.yaml:2:11: estimator.preset: is "huge", want "edge" or "paper"`},
		},
		{
			name: "alias to its own anchor",
			text: "nats:\n  urls: &a [*a]\n",
			want: []string{`physd.yaml:2:9: nats.urls[0]: want a string, got a list`},
		},
		{
			name: "alias inside its own anchor",
			text: "x-a: &a {level: *a}\nlog: *a\n",
			want: []string{`physd.yaml:1:17: log.level: alias *a refers to a node that contains it`},
		},
		{
			name: "top level is not a mapping",
			text: "- a\n- b\n",
			want: []string{`physd.yaml:1:1: want a mapping, got a list`},
		},
		{
			name: "two documents",
			text: "log: {level: info}\n---\nlog: {level: debug}\n",
			want: []string{`physd.yaml:2:1: more than one YAML document; physd reads one`},
		},
		{
			name: "syntax error",
			text: "log:\n  level: info\n bad\n",
			// yaml.v3 reports the line before the offending one here.
			want: []string{`physd.yaml:2: invalid YAML: did not find expected key`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := loadText(t, tc.text)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestErrorFields(t *testing.T) {
	_, err := Parse([]byte("windows:\n  hop: soon\n"), "x.yaml")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%v is not an *Error", err)
	}
	want := Error{Source: "x.yaml", Line: 2, Col: 8, Path: "windows.hop",
		Msg: `want a duration such as "1.5s" or "500ms", or a number of seconds, got "soon"`}
	e.Err = nil
	if *e != want {
		t.Errorf("got %+v, want %+v", *e, want)
	}
}

func TestDurations(t *testing.T) {
	for text, want := range map[string]time.Duration{
		"4.712s": 4712 * time.Millisecond,
		"500ms":  500 * time.Millisecond,
		"1m30s":  90 * time.Second,
		"2":      2 * time.Second,
		"0.25":   250 * time.Millisecond,
		"1.5e1":  15 * time.Second,
		"720h":   720 * time.Hour,
	} {
		cfg, err := Parse([]byte("nats: {heartbeat: "+text+"}\n"), "d.yaml")
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		if cfg.NATS.Heartbeat != want {
			t.Errorf("%s: got %v, want %v", text, cfg.NATS.Heartbeat, want)
		}
	}
	for _, text := range []string{"1e300", "-1e300", `"5"`, "5 s", "true", ".nan"} {
		if _, err := Parse([]byte("nats: {heartbeat: "+text+"}\n"), "d.yaml"); err == nil {
			t.Errorf("%s: no error", text)
		}
	}
}

func TestNulls(t *testing.T) {
	// A null keeps a mapping's defaults and zeroes scalars and lists.
	cfg, err := Parse([]byte("log:\nstate_dir:\nnats:\n  urls:\ncameras:\n  - name: a\n    fps:\n"), "n.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Log != Default().Log || cfg.StateDir != "" || len(cfg.NATS.URLs) != 0 || cfg.Cameras[0].FPS != 0 {
		t.Errorf("got %+v", cfg)
	}
	_, err = Parse([]byte("nats:\n  heartbeat: ~\n"), "n.yaml")
	if err == nil || !strings.Contains(err.Error(), "n.yaml:2:14: nats.heartbeat: is 0s, want > 0") {
		t.Errorf("null heartbeat: %v", err)
	}
}

func TestBillionLaughs(t *testing.T) {
	text := `
x-a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
x-b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
x-c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
x-d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
x-e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
x-f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
x-g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
x-h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]
x-i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]
cameras:
  - name: a
    source: {synthetic: {v0: *i}}
`
	start := time.Now()
	_, err := Parse([]byte(text), "b.yaml")
	if err == nil {
		t.Fatal("no error")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if len(unjoin(err)) > maxErrors+1 {
		t.Errorf("%d errors, want at most %d", len(unjoin(err)), maxErrors+1)
	}
}

func TestTooManyErrors(t *testing.T) {
	var b strings.Builder
	b.WriteString("cameras:\n")
	for range 300 {
		b.WriteString("  - name: \"bad name\"\n")
	}
	_, err := Parse([]byte(b.String()), "m.yaml")
	errs := unjoin(err)
	if len(errs) != maxErrors+1 || !strings.Contains(errs[len(errs)-1].Error(), "too many errors") {
		t.Errorf("%d errors, last %v", len(errs), errs[len(errs)-1])
	}
}
