package sweepcmd

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// script writes an executable shell script body to dir and returns its
// path: a stand-in for the physd binary.
func script(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "physd")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Main tells a command-line mistake (2) from a sweep that cannot run (1)
// and writes the report of one that does (0), in the clips' directory it
// was given.
func TestMain(t *testing.T) {
	dir := t.TempDir()
	bin := script(t, dir, "exit 0")
	out := filepath.Join(dir, "report.md")
	var seen Config
	sweep := func(ctx context.Context, cfg Config, clips string, log io.Writer) (string, error) {
		seen = cfg
		if _, err := os.Stat(clips); err != nil {
			t.Errorf("the clips' directory: %v", err)
		}
		return "# report\n", nil
	}
	report := func(w io.Writer, cfg Config, rows string, took time.Duration) { io.WriteString(w, rows) }
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"-seeds", "0", "-bin", bin}, 2},
		{[]string{"-bin", bin, "stray"}, 2},
		{[]string{"-nosuchflag"}, 2},
		{[]string{"-bin", filepath.Join(dir, "missing")}, 1},
		{[]string{"-bin", bin, "-out", filepath.Join(dir, "no", "such", "dir.md")}, 1},
		{[]string{"-bin", bin, "-out", out, "-seeds", "3", "-keep", filepath.Join(dir, "clips")}, 0},
	} {
		var stdout, stderr bytes.Buffer
		if got := Main(context.Background(), "test", "default.md", 2, c.args, &stdout, &stderr, sweep, report); got != c.want {
			t.Errorf("%q: exit %d, want %d (%s)", c.args, got, c.want, stderr.String())
		}
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "# report\n" {
		t.Errorf("report %q, %v", b, err)
	}
	if seen.Seeds != 3 || seen.Out != out || seen.Bin != bin {
		t.Errorf("config %+v", seen)
	}
}

// Estimate decodes what the binary prints, certified or not, and reports
// a run that prints nothing as the binary's own words.
func TestEstimate(t *testing.T) {
	dir := t.TempDir()
	type est struct {
		Verdict string `json:"verdict"`
	}
	cfg := Config{Bin: script(t, dir, `echo '{"verdict":"not-certified"}'; exit 3`), Timeout: time.Minute}
	if v, msg := Estimate[est](context.Background(), cfg, "clip.mp4"); msg != "" || v.Verdict != "not-certified" {
		t.Errorf("message %q, verdict %q", msg, v.Verdict)
	}
	cfg.Bin = script(t, dir, `echo "physd: clip.mp4: no video stream" >&2; exit 1`)
	if _, msg := Estimate[est](context.Background(), cfg, "clip.mp4"); !strings.Contains(msg, "no video stream") || !strings.Contains(msg, "exit status 1") {
		t.Errorf("message %q", msg)
	}
	cfg.Bin, cfg.Timeout = script(t, dir, `sleep 5`), 50*time.Millisecond
	if _, msg := Estimate[est](context.Background(), cfg, "clip.mp4"); msg == "" {
		t.Error("a run past its timeout printed no message")
	}
}
