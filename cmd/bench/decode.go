package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/physd/physd/internal/rtspserver"
)

// decodeWarmup is how long ffmpeg runs before its CPU is counted: the
// RTSP session or the file opens and the decoder starts.
const decodeWarmup = 5 * time.Second

// decodeRun is one decode-alone measurement: ffmpeg's CPU over wall.
type decodeRun struct {
	command   string // the ffmpeg command line, as printed
	cpu, wall time.Duration
}

// pct is the run's CPU in % of one core.
func (r decodeRun) pct() float64 { return 100 * r.cpu.Seconds() / r.wall.Seconds() }

// decodeAlone measures the floor a camera's line stands on: ffmpeg
// decoding the same stream alone, one thread, in real time, to nothing —
//
//	ffmpeg -threads 1 -re -rtsp_transport tcp -i URL -f null -            (rtsp)
//	ffmpeg -threads 1 -re -stream_loop -1 -i FILE -f null -               (file)
//
// with its CPU (utime + stime from /proc/PID/stat) counted over dur after
// decodeWarmup. For rtsp a publisher of clip into url runs meanwhile,
// started anew as for a daemon run. ffmpeg and the publisher are killed
// before it returns.
func decodeAlone(ctx context.Context, kind, clip, url string, dur time.Duration) (decodeRun, error) {
	ctx, cancel := context.WithTimeout(ctx, decodeWarmup+dur+30*time.Second)
	defer cancel()
	args := []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-threads", "1", "-re"}
	switch kind {
	case "rtsp":
		stop, err := rtspserver.StartPublisher(ctx, url, clip, nil)
		if err != nil {
			return decodeRun{}, err
		}
		defer stop()
		args = append(args, "-rtsp_transport", "tcp", "-i", url)
	case "file":
		args = append(args, "-stream_loop", "-1", "-i", clip)
	default:
		return decodeRun{}, fmt.Errorf("decode alone: no source kind %q", kind)
	}
	args = append(args, "-f", "null", "-")
	// An RTSP reader that connects before the publisher has announced
	// the stream is refused: it is started again, a few times, until one
	// lasts the warm-up.
	var (
		cmd    *exec.Cmd
		stderr bytes.Buffer
		exited = make(chan error, 1)
	)
	for attempt := 1; ; attempt++ {
		stderr.Reset()
		cmd = exec.CommandContext(ctx, "ffmpeg", args...)
		cmd.Stderr = &stderr
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Start(); err != nil {
			return decodeRun{}, fmt.Errorf("ffmpeg: %w", err)
		}
		go func(c *exec.Cmd) { exited <- c.Wait() }(cmd)
		select {
		case <-time.After(decodeWarmup):
		case err := <-exited:
			if attempt < 5 && ctx.Err() == nil {
				time.Sleep(time.Second)
				continue
			}
			return decodeRun{}, fmt.Errorf("ffmpeg exited during the warm-up: %v: %s", err, stderr.String())
		}
		break
	}
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	r := decodeRun{command: "ffmpeg " + strings.Join(args[4:], " ")}
	cpu0, err := procCPU(cmd.Process.Pid)
	if err != nil {
		return decodeRun{}, err
	}
	t0 := time.Now()
	select {
	case err := <-exited:
		exited <- err
		return decodeRun{}, fmt.Errorf("ffmpeg exited: %v: %s", err, stderr.String())
	case <-time.After(dur):
	}
	cpu1, err := procCPU(cmd.Process.Pid)
	if err != nil {
		return decodeRun{}, err
	}
	r.cpu, r.wall = cpu1-cpu0, time.Since(t0)
	return r, nil
}
