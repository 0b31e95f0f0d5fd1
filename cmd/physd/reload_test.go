package main

import (
	"bytes"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReloadSignalsOnlyAValidConfig: `physd reload` (the unit's
// ExecReload) reaches the daemon as SIGHUP when the configuration checks,
// and sends nothing, naming the file and the field, when it does not.
func TestReloadSignalsOnlyAValidConfig(t *testing.T) {
	hup := make(chan os.Signal, 4)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	pid := strconv.Itoa(os.Getpid())
	dir := t.TempDir()

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("cameras:\n  - name: c1\n    source: {kind: synthetic}\n    window: {seconds: -3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"reload", "--config", bad, pid}, &out, &errb); code != exitError {
		t.Fatalf("invalid config: exit %d, want %d (stderr %q)", code, exitError, errb.String())
	}
	if msg := errb.String(); !strings.Contains(msg, bad) || !strings.Contains(msg, "not signalled") {
		t.Errorf("invalid config: stderr %q names neither the file nor that nothing was sent", msg)
	}
	select {
	case <-hup:
		t.Fatal("SIGHUP sent for an invalid configuration")
	case <-time.After(200 * time.Millisecond):
	}

	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("cameras:\n  - name: c1\n    source: {kind: synthetic}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := run(t.Context(), []string{"reload", "--config", good, pid}, &out, &errb); code != exitOK {
		t.Fatalf("valid config: exit %d (stderr %q)", code, errb.String())
	}
	select {
	case <-hup:
	case <-time.After(5 * time.Second):
		t.Fatal("no SIGHUP within 5 s of a reload with a valid configuration")
	}
	if !strings.Contains(out.String(), "SIGHUP sent to process "+pid) {
		t.Errorf("stdout %q", out.String())
	}
}

// TestReloadRefusesGroupPids: an empty $MAINPID, 0, 1 or a negative pid
// would signal init or a process group; each is a usage error.
func TestReloadRefusesGroupPids(t *testing.T) {
	for _, args := range [][]string{{"reload"}, {"reload", ""}, {"reload", "0"}, {"reload", "1"}, {"reload", "-1"}, {"reload", "x"}, {"reload", "5", "6"}} {
		var out, errb bytes.Buffer
		if code := run(t.Context(), args, &out, &errb); code != exitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", args, code, exitUsage, errb.String())
		}
	}
}
