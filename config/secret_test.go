package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestSecretsFromEnvAndFile(t *testing.T) {
	dir := t.TempDir()
	seedFile := filepath.Join(dir, "seed")
	if err := os.WriteFile(seedFile, []byte("  SUSEEDFROMFILE\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PHYSD_TEST_TOKEN", "tok-from-env")
	t.Setenv("PHYSD_TEST_URL", "rtsp://admin:hunter2@10.0.0.5/stream")
	text := `
http:
  token: env:PHYSD_TEST_TOKEN
nats:
  urls: [nats://10.0.0.1:4222]
  nkey_seed: file:` + seedFile + `
cameras:
  - name: cam
    source:
      kind: rtsp
      url: env:PHYSD_TEST_URL
  - name: lit
    source: {kind: rtsp, url: "rtsp://plain/stream"}
`
	cfg, errs := loadText(t, text)
	if errs != nil {
		t.Fatal(errs)
	}
	for _, tc := range []struct {
		s          Secret
		val, where string
	}{
		{cfg.HTTP.Token, "tok-from-env", "env:PHYSD_TEST_TOKEN"},
		{cfg.NATS.NKeySeed, "SUSEEDFROMFILE", "file:" + seedFile},
		{cfg.Cameras[0].Source.URL, "rtsp://admin:hunter2@10.0.0.5/stream", "env:PHYSD_TEST_URL"},
		{cfg.Cameras[1].Source.URL, "rtsp://plain/stream", "literal"},
		{cfg.NATS.Token, "", ""},
	} {
		if tc.s.Value() != tc.val || tc.s.Source() != tc.where || tc.s.IsSet() != (tc.val != "") {
			t.Errorf("secret = %q from %q, want %q from %q", tc.s.Value(), tc.s.Source(), tc.val, tc.where)
		}
	}
}

func TestSecretErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PHYSD_TEST_EMPTY", "")
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name, text, want string
	}{
		{"missing env", "nats:\n  token: env:PHYSD_TEST_UNSET_VAR\n",
			"physd.yaml:2:10: nats.token: environment variable PHYSD_TEST_UNSET_VAR is not set"},
		{"empty env", "http: {token: env:PHYSD_TEST_EMPTY}\n",
			"physd.yaml:1:15: http.token: environment variable PHYSD_TEST_EMPTY is empty"},
		{"bad env name", "http: {token: \"env:\"}\n",
			`physd.yaml:1:15: http.token: "" is not a valid environment variable name`},
		{"missing file", "nats:\n  nkey_seed: file:" + missing + "\n",
			"physd.yaml:2:14: nats.nkey_seed: stat " + missing + ": no such file or directory"},
		{"empty file", "nats:\n  nkey_seed: file:" + empty + "\n",
			"physd.yaml:2:14: nats.nkey_seed: " + empty + " is empty"},
		{"directory", "nats:\n  nkey_seed: file:" + dir + "\n",
			"physd.yaml:2:14: nats.nkey_seed: " + dir + " is not a regular file"},
		{"camera url", "cameras:\n  - name: a\n    source: {kind: rtsp, url: env:PHYSD_TEST_UNSET_VAR}\n",
			"physd.yaml:3:31: cameras[0].source.url: environment variable PHYSD_TEST_UNSET_VAR is not set"},
		{"not a string", "http: {token: [a]}\n",
			"physd.yaml:1:15: http.token: want a string, got a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := loadText(t, tc.text)
			if len(errs) != 1 || errs[0] != tc.want {
				t.Errorf("errors %q, want [%q]", errs, tc.want)
			}
		})
	}
}

func TestSecretErrorsDoNotLeak(t *testing.T) {
	// A bad rtsp URL must not be echoed: it may hold a password.
	_, errs := loadText(t, "cameras:\n  - name: a\n    source: {kind: rtsp, url: \"http://admin:hunter2@cam\"}\n")
	if len(errs) == 0 {
		t.Fatal("no error")
	}
	for _, e := range errs {
		if strings.Contains(e, "hunter2") {
			t.Errorf("error leaks the secret: %s", e)
		}
	}
}

func TestRedaction(t *testing.T) {
	const secret = "hunter2-very-secret"
	t.Setenv("PHYSD_TEST_SECRET", secret)
	text := `
http: {token: env:PHYSD_TEST_SECRET}
nats: {urls: [nats://10.0.0.1:4222], token: ` + secret + `}
cameras:
  - name: a
    source: {kind: rtsp, url: "rtsp://admin:` + secret + `@cam/x"}
`
	cfg, errs := loadText(t, text)
	if errs != nil {
		t.Fatal(errs)
	}
	if cfg.NATS.Token.Value() != secret {
		t.Fatalf("token = %q", cfg.NATS.Token.Value())
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ym, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "cfg", cfg, "token", cfg.NATS.Token)
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "cfg", cfg, "token", cfg.NATS.Token)
	outputs := map[string]string{
		"%v":    fmt.Sprintf("%v", cfg),
		"%+v":   fmt.Sprintf("%+v", cfg),
		"%#v":   fmt.Sprintf("%#v", cfg),
		"%s":    fmt.Sprintf("%s", cfg.NATS.Token),
		"%d":    fmt.Sprintf("%d", cfg.NATS.Token),
		"%x":    fmt.Sprintf("%x", cfg.Cameras[0].Source.URL),
		"%q":    fmt.Sprintf("%q", cfg.HTTP.Token),
		"value": fmt.Sprint(*cfg),
		"json":  string(js),
		"yaml":  string(ym),
		"slog":  logged.String(),
	}
	for how, out := range outputs {
		if strings.Contains(out, secret) || strings.Contains(out, fmt.Sprintf("%x", secret)) {
			t.Errorf("%s leaks the secret: %s", how, out)
		}
	}
	if !strings.Contains(outputs["json"], `"Token":"[redacted]"`) {
		t.Errorf("json: %s", outputs["json"])
	}
	if got := cfg.NATS.Token.String(); got != "[redacted]" {
		t.Errorf("String() = %q", got)
	}
	if got := (Secret{}).String(); got != "" {
		t.Errorf("empty String() = %q, want \"\"", got)
	}
	if b, _ := json.Marshal(NewSecret("x")); string(b) != `"[redacted]"` {
		t.Errorf("MarshalJSON = %s", b)
	}
}
