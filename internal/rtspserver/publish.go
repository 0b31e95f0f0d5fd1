package rtspserver

import (
	"bytes"
	"context"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Publish starts ffmpeg publishing file to url in a loop, at its native
// rate, without re-encoding, over TCP:
//
//	ffmpeg -re -stream_loop -1 -i FILE -c copy -f rtsp -rtsp_transport tcp URL
//
// The returned stop kills ffmpeg and waits for it; it is also registered
// with t.Cleanup, so the process never outlives the test, and may be called
// more than once. The process is also killed when ctx is done. The test is
// skipped if ffmpeg is not installed. If ffmpeg exits on its own before
// stop, its stderr is logged.
func Publish(ctx context.Context, t testing.TB, url, file string) (stop func()) {
	t.Helper()
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg not installed")
	}
	cmd := exec.CommandContext(ctx, bin,
		"-hide_banner", "-nostdin", "-loglevel", "error",
		"-re", "-stream_loop", "-1", "-i", file,
		"-c", "copy", "-f", "rtsp", "-rtsp_transport", "tcp", url)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("rtspserver: starting ffmpeg: %v", err)
	}
	done := make(chan struct{})
	var stopping sync.Once
	var stopped bool
	var mu sync.Mutex
	go func() {
		err := cmd.Wait()
		mu.Lock()
		expected := stopped
		mu.Unlock()
		if !expected && ctx.Err() == nil {
			t.Logf("rtspserver: ffmpeg publishing %s exited on its own: %v; stderr: %s", url, err, stderr.String())
		}
		close(done)
	}()
	stop = func() {
		stopping.Do(func() {
			mu.Lock()
			stopped = true
			mu.Unlock()
			_ = cmd.Process.Kill()
			<-done
		})
	}
	t.Cleanup(stop)
	return stop
}

// lockedBuffer is a bytes.Buffer safe for concurrent writes and reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<16 {
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
