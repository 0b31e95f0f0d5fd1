package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/physd/physd/internal/physdtest"
)

// TestLogLinesNameCameraAndWindow runs the daemon with the JSON handler
// physd uses under systemd, at debug level, until a few windows are
// certified: every line is one JSON object, every line about a camera
// names it, and every line about a window names the camera and the
// window's start and end.
func TestLogLinesNameCameraAndWindow(t *testing.T) {
	var buf physdtest.Log
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d, err := New(testConfig(), Options{StateDir: t.TempDir(), Logger: log, ShutdownTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, nil) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("daemon did not stop")
		}
	}()
	waitFor(t, 60*time.Second, "three certified windows", func() bool {
		return d.Statuses()["pendulum"].Windows["certified"] >= 3
	})
	cameraMsgs := map[string]bool{"camera online": true, "certified estimate": true, "window": true}
	windowMsgs := map[string]bool{"certified estimate": true, "window": true, "window not estimated": true,
		"diagnostic not published": true, "certified estimate not published": true, "structural-health alert": true,
		"alert baseline established": true, "alert not published": true, "windows skipped: estimation is behind the stream": true}
	seen := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not a JSON log line: %q: %v", sc.Text(), err)
		}
		msg, _ := line["msg"].(string)
		seen[msg]++
		if cameraMsgs[msg] || windowMsgs[msg] {
			if line["camera"] != "pendulum" {
				t.Errorf("%q: camera %v, want pendulum", msg, line["camera"])
			}
		}
		if windowMsgs[msg] {
			if _, ok := line["window_start"]; !ok {
				t.Errorf("%q lacks window_start: %s", msg, sc.Text())
			}
			if _, ok := line["window_end"]; !ok {
				t.Errorf("%q lacks window_end: %s", msg, sc.Text())
			}
		}
	}
	for msg := range cameraMsgs {
		if seen[msg] == 0 {
			t.Errorf("no %q line logged", msg)
		}
	}
}
