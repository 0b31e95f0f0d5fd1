// Package physdtest runs physd and the servers around it as real processes
// for the fault-injection (chaos) and endurance (soak) tests: it builds the
// binaries, starts and kills processes, reads physd's JSON log and scrapes
// its metrics. Every process it starts is stopped by the test's cleanup.
package physdtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Build compiles the main package pkg (an import path or a directory
// relative to the module) into dir and returns the binary's path.
func Build(t testing.TB, dir, pkg string) string {
	t.Helper()
	out := filepath.Join(dir, filepath.Base(pkg))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// WaitListening waits until something accepts TCP connections on addr.
func WaitListening(ctx context.Context, addr string) error {
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not listening: %w", addr, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Process is a child process whose stderr (and stdout) is kept, and, if it
// is JSON lines, parsed (Log).
type Process struct {
	Name string
	cmd  *exec.Cmd
	Log  *Log
	done chan struct{}
	err  error // after done
}

// Start starts bin with args and extra environment variables. The
// process is killed at the test's end if it still runs.
func Start(t testing.TB, name, bin string, args []string, env ...string) *Process {
	t.Helper()
	p := &Process{Name: name, Log: &Log{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout = p.Log
	p.cmd.Stderr = p.Log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.Kill() })
	return p
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Process) Kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop sends SIGTERM and waits up to grace for the process to exit, then
// kills it. It returns the exit error (nil for status 0), or an error
// saying it had to be killed.
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err
	case <-time.After(grace):
		p.Kill()
		return fmt.Errorf("%s did not stop within %v of SIGTERM; killed", p.Name, grace)
	}
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// RSS is the process's resident set in bytes, from /proc.
func (p *Process) RSS() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		return 0, err
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(line); len(f) == 3 && string(f[0]) == "VmRSS:" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", p.Pid())
}

// NATS starts a nats-server binary with JetStream on 127.0.0.1:port,
// storing in store, and waits until it accepts connections.
func NATS(t testing.TB, bin string, port int, store string) *Process {
	t.Helper()
	p := Start(t, "nats-server", bin, []string{"-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", store})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := WaitListening(ctx, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err != nil {
		t.Fatalf("nats-server: %v\n%s", err, p.Log.String())
	}
	return p
}
