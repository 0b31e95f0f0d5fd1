//go:build linux

package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ConsoleMarker is the text a console message must contain to be kept by
// Browser.Console: pages log "physd: ..." for the events a test checks.
const ConsoleMarker = "physd:"

// ErrNotFound is returned (wrapped) by Launch when no Chromium binary is
// installed.
var ErrNotFound = errors.New("chromium not found: run make deps")

// Options configures Launch.
type Options struct {
	// URL is the page to open. Required.
	URL string
	// FakeVideo is a YUV4MPEG2 (.y4m, 4:2:0) file that the fake camera
	// plays in a loop at the frame rate of its header (rounded down to an
	// integer by Chromium). Empty: Chromium's built-in test pattern
	// (640×480, 30 fps, green with a moving pacman).
	FakeVideo string
	// Binary is the Chromium executable. Empty: "chromium" or
	// "chromium-browser" found on PATH.
	Binary string
	// ExtraFlags are appended after the default flags; Chromium keeps the
	// last value of a repeated switch, so these override the defaults.
	ExtraFlags []string
}

// Browser is a running headless Chromium. Close it (t.Cleanup) when done.
type Browser struct {
	cmd  *exec.Cmd
	dir  string // profile and config dir, unique to this browser
	pgid int
	done chan struct{} // closed once Chromium has exited and its output is drained
	stop func() bool   // cancels the ctx-driven Close

	mu      sync.Mutex
	buf     []byte   // incomplete output line
	pending []string // a multi-line console message being collected
	console []string
	tail    []string // last maxTail output lines, for diagnostics
	changed chan struct{}

	closeOnce sync.Once
	closeErr  error
}

const (
	maxTail    = 2000
	maxLine    = 1 << 20
	maxPending = 200
	// killWait bounds how long Close waits for the processes to vanish.
	killWait = 10 * time.Second
)

// Launch starts headless Chromium on opt.URL. The browser lives until Close
// is called or ctx is done, whichever comes first; Close must be called in
// any case to release the profile directory.
func Launch(ctx context.Context, opt Options) (*Browser, error) {
	if opt.URL == "" {
		return nil, errors.New("browser: Options.URL is empty")
	}
	bin, err := findBinary(opt.Binary)
	if err != nil {
		return nil, err
	}
	if opt.FakeVideo != "" {
		if opt.FakeVideo, err = checkY4M(opt.FakeVideo); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "physd-chromium-")
	if err != nil {
		return nil, fmt.Errorf("browser: %w", err)
	}
	b := &Browser{dir: dir, done: make(chan struct{}), changed: make(chan struct{})}
	cmd := exec.Command(bin, flags(opt, dir)...)
	// Chromium's crashpad handlers leave the process group (they call
	// setsid), but they take their database path from XDG_CONFIG_HOME:
	// pointing it into dir makes them findable by that unique path in Close.
	cmd.Env = append(os.Environ(),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	out := &sink{b}
	cmd.Stdout = out // the same writer twice: os/exec then shares one pipe
	cmd.Stderr = out
	cmd.SysProcAttr = sysProcAttr()
	// A grandchild that escaped the group could keep the pipe open forever;
	// WaitDelay stops cmd.Wait from blocking on it.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("browser: start %s: %w", bin, err)
	}
	b.cmd = cmd
	b.pgid = cmd.Process.Pid // Setpgid: the group id is the leader's pid
	go func() {
		_ = cmd.Wait() // the exit status of a killed browser says nothing useful
		close(b.done)
	}()
	b.stop = context.AfterFunc(ctx, func() { _ = b.Close() })
	return b, nil
}

// flags returns Chromium's command line: the defaults, opt.ExtraFlags, then
// the URL.
func flags(opt Options, dir string) []string {
	f := []string{
		"--headless=new",
		"--no-sandbox", // root in a container: the setuid/namespace sandbox is unavailable
		"--disable-gpu",
		"--use-fake-ui-for-media-stream",     // grant getUserMedia without a prompt
		"--use-fake-device-for-media-stream", // a fake camera instead of /dev/video*
		"--allow-loopback-in-peer-connection",
		"--autoplay-policy=no-user-gesture-required",
		"--user-data-dir=" + filepath.Join(dir, "profile"),
		"--no-first-run",
		"--no-default-browser-check",
		"--enable-logging=stderr",
		"--v=0",
		// Keep timers, rAF and the encoder at full rate although no one
		// looks at the headless window.
		"--disable-background-timer-throttling",
		"--disable-renderer-backgrounding",
		"--disable-backgrounding-occluded-windows",
		// A test talks to this machine only: no component updates, sync,
		// metrics or safe-browsing fetches, and every host name except
		// localhost fails to resolve. There is no flag that limits ICE
		// candidates to loopback; the test's server must do that.
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-default-apps",
		"--disable-extensions",
		"--disable-domain-reliability",
		"--metrics-recording-only",
		"--no-pings",
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
		// Small /dev/shm in containers makes Chromium crash; /tmp is fine.
		"--disable-dev-shm-usage",
		"--mute-audio",
	}
	if opt.FakeVideo != "" {
		f = append(f, "--use-file-for-fake-video-capture="+opt.FakeVideo)
	}
	f = append(f, opt.ExtraFlags...)
	return append(f, opt.URL)
}

// findBinary resolves Options.Binary or looks Chromium up on PATH.
func findBinary(name string) (string, error) {
	if name != "" {
		p, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("browser: %w (%s: %v)", ErrNotFound, name, err)
		}
		return p, nil
	}
	for _, n := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("browser: %w", ErrNotFound)
}

// checkY4M returns the absolute path of a readable .y4m file. Chromium
// would otherwise fail getUserMedia with a vague NotReadableError.
func checkY4M(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("browser: FakeVideo: %w", err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", fmt.Errorf("browser: FakeVideo: %w", err)
	}
	defer f.Close()
	head := make([]byte, 10)
	if _, err := io.ReadFull(f, head); err != nil || string(head) != "YUV4MPEG2 " {
		return "", fmt.Errorf("browser: FakeVideo %s: not a YUV4MPEG2 file", abs)
	}
	return abs, nil
}

// sink receives Chromium's stdout and stderr.
type sink struct{ b *Browser }

func (s *sink) Write(p []byte) (int, error) { return s.b.write(p) }

func (b *Browser) write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	for {
		i := bytes.IndexByte(b.buf, '\n')
		if i < 0 {
			break
		}
		b.line(strings.TrimSuffix(string(b.buf[:i]), "\r"))
		b.buf = b.buf[i+1:]
	}
	if len(b.buf) > maxLine { // a runaway line: cut it rather than grow without bound
		b.line(string(b.buf))
		b.buf = nil
	}
	if len(b.buf) == 0 {
		b.buf = nil // let the backing array go
	}
	return len(p), nil
}

// consoleStart matches the start of a console message in Chromium's log:
// recent versions print
//
//	[pid:tid:MMDD/HHMMSS.micro:INFO:CONSOLE:42] "text", source: URL (42)
//
// older ones "...:INFO:CONSOLE(42)] ...". The severity is INFO for every
// console method (log, warn, error, debug) in Chromium 156.
var consoleStart = regexp.MustCompile(`^\[[^\]]*:CONSOLE(?::\d+|\(\d+\))\] "`)

// consoleEnd ends a console message: the text is not escaped, so the last
// `", source: ` on the line is the delimiter.
var consoleEnd = regexp.MustCompile(`^(.*)", source: .*$`)

// line handles one output line; b.mu is held.
func (b *Browser) line(s string) {
	b.tail = append(b.tail, s)
	if len(b.tail) > maxTail {
		b.tail = append(b.tail[:0], b.tail[len(b.tail)-maxTail/2:]...)
	}
	if b.pending != nil { // continuation of a message containing newlines
		b.pending = append(b.pending, s)
		if m := consoleEnd.FindStringSubmatch(s); m != nil {
			b.pending[len(b.pending)-1] = m[1]
			b.addConsole(strings.Join(b.pending, "\n"))
			b.pending = nil
		} else if len(b.pending) > maxPending {
			b.pending = nil
		}
		return
	}
	loc := consoleStart.FindStringIndex(s)
	if loc == nil {
		return
	}
	rest := s[loc[1]:]
	if m := consoleEnd.FindStringSubmatch(rest); m != nil {
		b.addConsole(m[1])
		return
	}
	b.pending = []string{rest}
}

// addConsole records a console message if it carries the marker; b.mu is
// held.
func (b *Browser) addConsole(msg string) {
	if !strings.Contains(msg, ConsoleMarker) {
		return
	}
	b.console = append(b.console, msg)
	close(b.changed) // wake every WaitConsole
	b.changed = make(chan struct{})
}

// Console returns the console messages containing ConsoleMarker that the
// page has logged so far, oldest first, as the text passed to console.log
// (without Chromium's prefix and source suffix).
func (b *Browser) Console() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.console...)
}

// Log returns the last lines (up to about 2000) of Chromium's output, for
// test failure reports.
func (b *Browser) Log() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.tail...)
}

// WaitConsole waits until a console message containing substr has been
// logged (at any time since launch). It fails when ctx is done or when
// Chromium exits first; the error then lists the recent messages.
func (b *Browser) WaitConsole(ctx context.Context, substr string) error {
	for {
		b.mu.Lock()
		for _, m := range b.console {
			if strings.Contains(m, substr) {
				b.mu.Unlock()
				return nil
			}
		}
		changed := b.changed
		b.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("browser: waiting for console %q: %w; console: %s", substr, ctx.Err(), b.recent())
		case <-b.done:
			// The last lines may have arrived with the exit: look once more.
			if b.has(substr) {
				return nil
			}
			return fmt.Errorf("browser: chromium exited before logging %q; console: %s; output: %s",
				substr, b.recent(), strings.Join(lastN(b.Log(), 20), "\n"))
		}
	}
}

func (b *Browser) has(substr string) bool {
	for _, m := range b.Console() {
		if strings.Contains(m, substr) {
			return true
		}
	}
	return false
}

func (b *Browser) recent() string {
	return strconv.Quote(strings.Join(lastN(b.Console(), 10), "\n"))
}

func lastN(s []string, n int) []string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Close kills Chromium and every process it started, waits until they are
// gone, and removes the profile directory. It is safe to call more than
// once and concurrently; later calls return the first call's result.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() { b.closeErr = b.close() })
	return b.closeErr
}

func (b *Browser) close() error {
	b.stop()
	deadline := time.Now().Add(killWait)
	for {
		left := b.processes()
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		// The group kill also reaches processes forked after the scan.
		_ = syscall.Kill(-b.pgid, syscall.SIGKILL)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("browser: chromium processes %v still running after %v", left, killWait)
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case <-b.done:
	case <-time.After(killWait):
		return errors.New("browser: chromium killed but its output did not close")
	}
	if err := os.RemoveAll(b.dir); err != nil {
		return fmt.Errorf("browser: %w", err)
	}
	return nil
}

// processes lists the live (non-zombie) processes of this browser: those in
// its process group and those whose command line names its private
// directory (the crashpad handlers, which leave the group).
func (b *Browser) processes() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		state, pgrp, ok := procStat(pid)
		if !ok || state == 'Z' || state == 'X' {
			continue
		}
		if pgrp == b.pgid {
			pids = append(pids, pid)
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		// dir+"/": another browser's dir may extend this one's name.
		if err == nil && bytes.Contains(cmdline, []byte(b.dir+"/")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procStat reads the state and process group of pid from /proc/pid/stat:
// "pid (comm) state ppid pgrp ...", where comm may contain spaces and
// parentheses, hence the split at the last ')'.
func procStat(pid int) (state byte, pgrp int, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err = strconv.Atoi(fields[2])
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pgrp, true
}

// sysProcAttr puts Chromium in its own process group, so Close can kill the
// whole tree at once, and has the kernel kill it if the test binary dies
// without running its cleanups (Pdeathsig survives the exec of Debian's
// /usr/bin/chromium wrapper script into the real binary). Pdeathsig is tied
// to the starting OS thread; the Go runtime does not end threads outside
// LockOSThread, so in practice it fires only when the test process exits.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
