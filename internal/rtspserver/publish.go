package rtspserver

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Publish starts ffmpeg publishing file to url in a loop, at its native
// rate, without re-encoding, over TCP (see StartPublisher). The returned
// stop kills ffmpeg and waits for it; it is also registered with
// t.Cleanup, so the process never outlives the test, and may be called
// more than once. The process is also killed when ctx is done. The test is
// skipped if ffmpeg is not installed. If ffmpeg exits on its own before
// stop, its stderr is logged.
func Publish(ctx context.Context, t testing.TB, url, file string) (stop func()) {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not installed")
	}
	stop, err := StartPublisher(ctx, url, file, func(err error, stderr string) {
		t.Logf("rtspserver: ffmpeg publishing %s exited on its own: %v; stderr: %s", url, err, stderr)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return stop
}

// StartPublisher starts ffmpeg publishing file to url in a loop, at its
// native rate, without re-encoding, over TCP:
//
//	ffmpeg -re -stream_loop -1 -i FILE -c copy -f rtsp -rtsp_transport tcp URL
//
// stop kills ffmpeg and waits for it, and may be called more than once;
// ffmpeg is also killed when ctx is done. exited, if not nil, is called
// with ffmpeg's error and stderr when it exits before stop and before ctx
// is done.
func StartPublisher(ctx context.Context, url, file string, exited func(err error, stderr string)) (stop func(), err error) {
	return StartPublisherAt(ctx, url, file, 1, exited)
}

// StartPublisherAt is StartPublisher at rate times the file's native
// rate (ffmpeg -readrate), for a test that needs minutes of stream in
// less: a camera that sends faster than real time, the presentation
// times unchanged.
func StartPublisherAt(ctx context.Context, url, file string, rate float64, exited func(err error, stderr string)) (stop func(), err error) {
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		return nil, fmt.Errorf("rtspserver: %w", err)
	}
	pace := []string{"-re"}
	if rate != 1 {
		pace = []string{"-readrate", strconv.FormatFloat(rate, 'g', -1, 64)}
	}
	args := append([]string{"-hide_banner", "-nostdin", "-loglevel", "error"}, pace...)
	args = append(args, "-stream_loop", "-1", "-i", file, "-c", "copy", "-f", "rtsp", "-rtsp_transport", "tcp", url)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("rtspserver: starting ffmpeg: %w", err)
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
		if !expected && ctx.Err() == nil && exited != nil {
			exited(err, stderr.String())
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
	return stop, nil
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
