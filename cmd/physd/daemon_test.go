package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/physd/physd/internal/physdtest"
)

func waitText(t *testing.T, b *physdtest.Log, text string, timeout time.Duration) {
	t.Helper()
	for end := time.Now().Add(timeout); !strings.Contains(b.String(), text); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no %q within %v in:\n%s", text, timeout, b.String())
		}
	}
}

// TestRunWatchAndReload runs `physd run` with a config file, `physd watch`
// against its NATS server until it has printed an estimate, then reloads
// by SIGHUP: a valid new file adds a camera, an invalid one is rejected
// with its line and column while the daemon keeps running.
func TestRunWatchAndReload(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon")
	}
	port := physdtest.FreePort(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "physd.yaml")
	base := fmt.Sprintf("http: {listen: \"127.0.0.1:0\"}\nnats: {embedded: {listen: \"127.0.0.1:%d\"}}\ncameras:\n  - name: one\n", port)
	if err := os.WriteFile(cfgPath, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var out, errb physdtest.Log
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"run", "--config", cfgPath, "--state-dir", filepath.Join(dir, "state")}, &out, &errb)
	}()
	waitText(t, &errb, "physd running", 20*time.Second)

	var wout, werr bytes.Buffer
	// As a local subscriber: with the seed physd created in its state
	// directory (without it the embedded server refuses the connection).
	code := run(ctx, []string{"watch", "--nats", fmt.Sprintf("nats://127.0.0.1:%d", port), "--state-dir", filepath.Join(dir, "state"), "-n", "1", "one"}, &wout, &werr)
	if code != exitOK || !strings.Contains(wout.String(), "one ") || !strings.Contains(wout.String(), "underdamped") {
		t.Fatalf("watch: exit %d, out %q, err %q", code, wout.String(), werr.String())
	}
	t.Logf("physd watch printed:\n%s", wout.String())

	if err := os.WriteFile(cfgPath, []byte(base+"  - name: two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitText(t, &errb, "configuration reloaded", 20*time.Second)
	waitText(t, &errb, `msg="camera started" camera=two`, 5*time.Second)

	if err := os.WriteFile(cfgPath, []byte(base+"  - name: three\n    sise: 32\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitText(t, &errb, "reload rejected", 20*time.Second)
	if !strings.Contains(errb.String(), "physd.yaml:6:5") {
		t.Errorf("the rejection does not name line 6, column 5:\n%s", errb.String())
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("run exited %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not stop within 30 s of cancellation")
	}
	if strings.Contains(errb.String(), `camera=three`) {
		t.Error("the invalid configuration was applied")
	}
	// Each certified estimate is printed once: a table row on stdout, no
	// log line beside it, and never labelled undamped (the camera is an
	// underdamped pendulum whose σ(ζ) is far below ζ).
	rows := 0
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "one ") || strings.HasPrefix(l, "two ") {
			rows++
			if strings.Contains(l, " undamped") {
				t.Errorf("certified estimate labelled undamped: %q", l)
			}
		}
	}
	if rows == 0 {
		t.Errorf("no estimate rows on stdout:\n%s", out.String())
	}
	if n := strings.Count(errb.String(), `msg="certified estimate"`); n > 0 {
		t.Errorf("%d certified estimates logged besides the %d rows printed", n, rows)
	}
}

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("cameras:\n  - name: a\n"), 0o644)
	os.WriteFile(bad, []byte("windows:\n  hop: fast\ncameras:\n  - name: a\n    colour: red\n"), 0o644)
	if code, out, e := physd(t, "config", "check", good); code != exitOK || !strings.Contains(out, "ok (1 camera") {
		t.Errorf("good: exit %d %q %q", code, out, e)
	}
	code, _, e := physd(t, "config", "check", bad)
	if code != exitError || !strings.Contains(e, "bad.yaml:2:8") || !strings.Contains(e, "bad.yaml:5:5") {
		t.Errorf("bad: exit %d, stderr %q: want both errors with line:col", code, e)
	}
	// The names the estimator and the simulator own are checked too.
	preset := filepath.Join(dir, "preset.yaml")
	os.WriteFile(preset, []byte("estimator:\n  preset: huge\n"), 0o644)
	if code, _, e := physd(t, "config", "check", preset); code != exitError || !strings.Contains(e, "preset.yaml:2:11: estimator.preset: is \"huge\"") {
		t.Errorf("unknown preset: exit %d, stderr %q", code, e)
	}
	if code, _, _ := physd(t, "config", "check"); code != exitUsage {
		t.Errorf("no file: exit %d", code)
	}
	if code, _, e := physd(t, "config", "check", filepath.Join(dir, "missing.yaml")); code != exitError || !strings.Contains(e, "missing.yaml") {
		t.Errorf("missing: exit %d %q", code, e)
	}
}
