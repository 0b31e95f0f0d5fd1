// Package whepserver is a real WHEP media server on loopback for tests: the
// Janus WebRTC gateway (Debian package janus) with its Streaming plugin,
// meetecho's janus-whep-server (npm, in node/) in front of it, and ffmpeg
// encoding a clip in a loop and sending it to Janus over RTP.
//
//	ffmpeg -re -stream_loop -1 -i CLIP … -f rtp ──RTP/UDP──▶ janus (streaming mountpoint 1)
//	                                                            ▲ WebSocket API
//	WHEP client ──HTTP POST offer──▶ node server.js (janus-whep-server) ─┘
//	WHEP client ◀──────────────── ICE/DTLS/SRTP on 127.0.0.1 ─────────── janus
//
// Everything listens on 127.0.0.1 only, on ports picked free at Start.
// Janus, node and ffmpeg run as child processes in their own process
// groups; Close stops them and removes the generated configuration.
//
// The WHEP endpoint is standard (client-sent offer): POST an SDP offer with
// Content-Type exactly "application/sdp" to URL(); the answer comes back
// with 201 Created, Content-Type application/sdp, a relative Location
// (/whep/resource/ID), an ETag and "Accept-Patch:
// application/trickle-ice-sdpfrag". Janus answers only after gathering its
// candidates (half-trickle), so the answer carries them and no PATCH is
// needed. DELETE on the Location ends the session (200).
//
// Janus cannot gather ICE candidates on loopback by itself; Start builds a
// small LD_PRELOAD shim with gcc to let it (see loopbackShim).
//
// Start needs janus, node, ffmpeg, gcc and `npm ci` run in node/ (make
// deps); it fails, naming what is missing, otherwise.
package whepserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options configures a Server.
type Options struct {
	// Codec is the video codec ffmpeg encodes and Janus offers: "vp8" or
	// "h264" (constrained baseline, packetization-mode 1, profile-level-id
	// 42e01f). Empty means "vp8".
	Codec string
	// Video is the path of a clip ffmpeg can read (y4m, mp4, ...). It is
	// streamed in a loop, in real time, without audio.
	Video string
	// Token, if not empty, is the bearer token the WHEP endpoint requires
	// (Authorization: Bearer TOKEN) on POST, PATCH and DELETE.
	Token string
}

// Server is a running Janus + janus-whep-server + ffmpeg chain. Close must
// be called to stop it (or the ctx given to Start canceled).
type Server struct {
	url   string
	dir   string
	procs []*proc // in start order: janus, node, ffmpeg

	mu   sync.Mutex
	stop func() bool // unregisters the ctx watcher; guarded by mu

	closeOnce sync.Once
	closeErr  error
}

// The codecs Start accepts in Options.Codec.
const (
	CodecVP8  = "vp8"
	CodecH264 = "h264"
)

// The RTP payload type ffmpeg sends and the mountpoint expects (Janus
// keeps it in its answer, whatever the offer numbered the codec), the
// Streaming mountpoint's ID, and the WHEP endpoint's ID.
const (
	payloadType = 96
	mountpoint  = 1
	endpointID  = "cam"
)

// startTimeout bounds Start beyond the caller's ctx: each stage normally
// takes well under a second, so anything near this is a hang.
const startTimeout = 20 * time.Second

// Start starts Janus, the WHEP endpoint and ffmpeg, and returns once Janus
// receives the clip's RTP stream, so a client can connect right away. ctx
// bounds the start-up and the server's life: when it is done the server is
// closed. On failure every process started is stopped and the error
// includes the tail of their output.
func Start(ctx context.Context, opt Options) (*Server, error) {
	if opt.Codec == "" {
		opt.Codec = CodecVP8
	}
	if opt.Codec != CodecVP8 && opt.Codec != CodecH264 {
		return nil, fmt.Errorf("whepserver: unsupported codec %q (want %q or %q)", opt.Codec, CodecVP8, CodecH264)
	}
	if _, err := os.Stat(opt.Video); err != nil {
		return nil, fmt.Errorf("whepserver: video: %w", err)
	}
	tools, err := findTools()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "whepserver-")
	if err != nil {
		return nil, fmt.Errorf("whepserver: %w", err)
	}
	s := &Server{dir: dir}
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := s.start(sctx, tools, opt); err != nil {
		err = fmt.Errorf("whepserver: %w%s", err, s.output())
		s.Close()
		return nil, err
	}
	// If ctx is already done the watcher runs at once, and Close waits
	// on mu until stop is set.
	s.mu.Lock()
	s.stop = context.AfterFunc(ctx, func() { s.Close() })
	s.mu.Unlock()
	return s, nil
}

// start runs the three stages; s.procs holds whatever was started, for
// Close.
func (s *Server) start(ctx context.Context, t tools, opt Options) error {
	// The two ports Janus binds are picked here and could be taken by
	// someone else before Janus binds them: retry with new ones then.
	var (
		rtpPort int
		err     error
	)
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			s.stopProcs()
			s.procs = nil
		}
		var wsPort int
		wsPort, rtpPort, err = s.startJanus(ctx, t, opt.Codec)
		if err == nil {
			err = s.startNode(ctx, t, wsPort, opt.Token)
		}
		if err == nil || ctx.Err() != nil || !errors.Is(err, errPortTaken) {
			break
		}
	}
	if err != nil {
		return err
	}
	return s.startFFmpeg(ctx, t, opt, rtpPort)
}

// errPortTaken marks a start-up failure that fresh ports may cure.
var errPortTaken = errors.New("port taken")

// tools are the absolute paths of what Start runs.
type tools struct {
	janus, node, ffmpeg, cc string
	plugin, transport       string // libjanus_streaming.so, libjanus_websockets.so
	nodeDir                 string // holds server.js and node_modules
}

// findTools locates the programs, Janus's two modules and the npm
// packages, with an error that says how to get what is missing.
func findTools() (tools, error) {
	var t tools
	var err error
	for _, p := range []struct {
		name string
		dst  *string
	}{{"janus", &t.janus}, {"node", &t.node}, {"ffmpeg", &t.ffmpeg}, {"gcc", &t.cc}} {
		if *p.dst, err = exec.LookPath(p.name); err != nil {
			return t, fmt.Errorf("whepserver: %s not found: run `make deps`", p.name)
		}
	}
	// Debian puts Janus's modules in a multiarch directory; source
	// builds default to /usr/local or /opt/janus.
	find := func(kind, lib string) (string, error) {
		for _, pat := range []string{
			"/usr/lib/*/janus/" + kind + "/" + lib,
			"/usr/lib/janus/" + kind + "/" + lib,
			"/usr/local/lib/janus/" + kind + "/" + lib,
			"/opt/janus/lib/janus/" + kind + "/" + lib,
		} {
			if m, _ := filepath.Glob(pat); len(m) > 0 {
				return m[0], nil
			}
		}
		return "", fmt.Errorf("whepserver: janus %s %s not found: run `make deps`", kind, lib)
	}
	if t.plugin, err = find("plugins", "libjanus_streaming.so"); err != nil {
		return t, err
	}
	if t.transport, err = find("transports", "libjanus_websockets.so"); err != nil {
		return t, err
	}
	if t.nodeDir, err = nodeDir(); err != nil {
		return t, err
	}
	return t, nil
}

// nodeDir finds node/ with its node_modules: beside this source file
// (which works for tests of any package in this module, whatever their
// working directory), else under the working directory, which is the
// package directory when this package's own tests run.
func nodeDir() (string, error) {
	var cands []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		cands = append(cands, filepath.Join(filepath.Dir(file), "node"))
	}
	if wd, err := os.Getwd(); err == nil {
		cands = append(cands, filepath.Join(wd, "node"))
	}
	for _, d := range cands {
		if _, err := os.Stat(filepath.Join(d, "server.js")); err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "node_modules", "janus-whep-server", "package.json")); err != nil {
			return "", fmt.Errorf("whepserver: %s/node_modules is missing janus-whep-server: run `make deps` (npm ci in %s)", d, d)
		}
		return d, nil
	}
	return "", fmt.Errorf("whepserver: node/server.js not found (looked in %s)", strings.Join(cands, ", "))
}

// startJanus writes a minimal Janus configuration (Streaming plugin and
// WebSocket transport only, ICE on loopback only) and starts Janus,
// returning once its WebSocket port accepts connections.
func (s *Server) startJanus(ctx context.Context, t tools, codec string) (wsPort, rtpPort int, err error) {
	if wsPort, err = freePort("tcp"); err != nil {
		return 0, 0, err
	}
	if rtpPort, err = freePort("udp"); err != nil {
		return 0, 0, err
	}
	// Janus loads every module in its folders: folders holding just the
	// two modules needed keep it from starting the HTTP transport, the
	// other plugins and their listeners.
	conf := filepath.Join(s.dir, "conf")
	for _, d := range []string{"conf", "plugins", "transports", "none"} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o755); err != nil {
			return 0, 0, err
		}
	}
	for _, l := range [][2]string{
		{t.plugin, filepath.Join(s.dir, "plugins", filepath.Base(t.plugin))},
		{t.transport, filepath.Join(s.dir, "transports", filepath.Base(t.transport))},
	} {
		_ = os.Remove(l[1])
		if err := os.Symlink(l[0], l[1]); err != nil {
			return 0, 0, err
		}
	}
	fmtp := ""
	if codec == CodecH264 {
		fmtp = "\n\t\t\tfmtp = \"profile-level-id=42e01f;packetization-mode=1\""
	}
	files := map[string]string{
		// interface sets the address Janus puts in its SDP; the enforce
		// list limits ICE gathering to lo (eligible thanks to
		// loopbackShim) and ipv6 = false drops ::1, so the answer
		// carries one 127.0.0.1 host candidate and nothing else.
		"janus.jcfg": fmt.Sprintf(`general: {
	configs_folder = %q
	plugins_folder = %q
	transports_folder = %q
	events_folder = %q
	loggers_folder = %q
	debug_level = 4
	debug_colors = false
	interface = "127.0.0.1"
}
media: {
	ipv6 = false
}
nat: {
	ice_enforce_list = "lo"
	full_trickle = false
}
events: {
	broadcast = false
}
`, conf, filepath.Join(s.dir, "plugins"), filepath.Join(s.dir, "transports"),
			filepath.Join(s.dir, "none"), filepath.Join(s.dir, "none")),
		"janus.transport.websockets.jcfg": fmt.Sprintf(`general: {
	json = "plain"
	ws = true
	ws_ip = "127.0.0.1"
	ws_port = %d
	wss = false
}
admin: {
	admin_ws = false
	admin_wss = false
}
`, wsPort),
		"janus.plugin.streaming.jcfg": fmt.Sprintf(`general: {
	events = false
}
cam: {
	type = "rtp"
	id = %d
	description = "physd test clip"
	media = (
		{
			type = "video"
			mid = "v"
			port = %d
			iface = "127.0.0.1"
			pt = %d
			codec = %q%s
		}
	)
}
`, mountpoint, rtpPort, payloadType, codec, fmtp),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(conf, name), []byte(text), 0o644); err != nil {
			return 0, 0, err
		}
	}
	shim, err := s.buildLoopbackShim(ctx, t.cc)
	if err != nil {
		return 0, 0, err
	}
	cmd := exec.Command(t.janus, "-C", filepath.Join(conf, "janus.jcfg"), "-F", conf, "-o")
	cmd.Env = append(os.Environ(), "LD_PRELOAD="+shim)
	p, err := s.spawn("janus", cmd, nil)
	if err != nil {
		return 0, 0, err
	}
	// The mountpoint is created before the transports are loaded, so once
	// the WebSocket port answers the Streaming plugin is ready too.
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(wsPort))
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-p.done:
			// Janus exits when no transport could start, e.g. because
			// the WebSocket port was taken.
			return 0, 0, fmt.Errorf("janus exited during start-up (%v): %w", p.err, errPortTaken)
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("waiting for janus on %s: %w", addr, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	// If the RTP port was taken, Janus logs an error and goes on without
	// the mountpoint; binding it ourselves tells.
	if c, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(rtpPort))); err == nil {
		c.Close()
		return 0, 0, fmt.Errorf("janus did not bind the mountpoint's RTP port %d: %w", rtpPort, errPortTaken)
	}
	return wsPort, rtpPort, nil
}

// loopbackShim is an LD_PRELOAD library for Janus. Janus (ice.c,
// janus_ice_setup_local) skips every interface flagged IFF_LOOPBACK when it
// lists the addresses to gather ICE candidates on, and when it lists none
// libnice falls back to all non-loopback addresses: the answer would carry
// the machine's LAN and IPv6 addresses and no 127.0.0.1. Clearing the flag
// in getifaddrs' result lets ice_enforce_list = "lo" select 127.0.0.1, so
// media stays on loopback.
const loopbackShim = `#define _GNU_SOURCE
#include <dlfcn.h>
#include <ifaddrs.h>
#include <net/if.h>

int getifaddrs(struct ifaddrs **ifap) {
	static int (*real)(struct ifaddrs **);
	if (!real)
		real = (int (*)(struct ifaddrs **))dlsym(RTLD_NEXT, "getifaddrs");
	int r = real(ifap);
	if (r == 0)
		for (struct ifaddrs *i = *ifap; i; i = i->ifa_next)
			i->ifa_flags &= ~IFF_LOOPBACK;
	return r;
}
`

// buildLoopbackShim compiles loopbackShim into the server's directory
// (about 50 ms) and returns the library's path.
func (s *Server) buildLoopbackShim(ctx context.Context, cc string) (string, error) {
	src := filepath.Join(s.dir, "loopback.c")
	lib := filepath.Join(s.dir, "loopback.so")
	if _, err := os.Stat(lib); err == nil {
		return lib, nil // built by an earlier attempt
	}
	if err := os.WriteFile(src, []byte(loopbackShim), 0o644); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, cc, "-shared", "-fPIC", "-O2", "-o", lib, src, "-ldl").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building the loopback shim for janus: %v\n%s", err, out)
	}
	return lib, nil
}

// startNode starts node/server.js and returns once it prints its URL.
func (s *Server) startNode(ctx context.Context, t tools, wsPort int, token string) error {
	cmd := exec.Command(t.node, "server.js")
	cmd.Dir = t.nodeDir
	cmd.Env = append(os.Environ(),
		"JANUS_WS=ws://127.0.0.1:"+strconv.Itoa(wsPort),
		"MOUNTPOINT="+strconv.Itoa(mountpoint),
		"ENDPOINT="+endpointID,
		"WHEP_TOKEN="+token)
	// server.js exits when its stdin closes: the pipe is ours, so node
	// dies with the Go process even if Close is never called.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	ready := make(chan string, 1)
	p, err := s.spawn("node", cmd, func(line string) {
		if u, ok := strings.CutPrefix(line, "WHEP-READY "); ok {
			select {
			case ready <- strings.TrimSpace(u):
			default:
			}
		}
	})
	if err != nil {
		return err
	}
	p.stdin = stdin
	select {
	case s.url = <-ready:
		return nil
	case <-p.done:
		return fmt.Errorf("node server.js exited during start-up: %v", p.err)
	case <-ctx.Done():
		return fmt.Errorf("waiting for node server.js: %w", ctx.Err())
	}
}

// startFFmpeg starts the encoder and returns once Janus reports the
// stream.
func (s *Server) startFFmpeg(ctx context.Context, t tools, opt Options, rtpPort int) error {
	janus := s.procs[0]
	seen := janus.watch("New video stream")
	args := []string{"-hide_banner", "-nostdin", "-loglevel", "warning",
		"-re", "-stream_loop", "-1", "-i", opt.Video, "-an",
		"-pix_fmt", "yuv420p",
		// A keyframe every second whatever the clip's rate, so a client
		// joining at any time decodes within about a second.
		"-force_key_frames", "expr:gte(t,n_forced*1)"}
	switch opt.Codec {
	case CodecVP8:
		args = append(args, "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8",
			"-b:v", "1M", "-auto-alt-ref", "0", "-lag-in-frames", "0")
	case CodecH264:
		// Constrained baseline at level 3.1 matches the mountpoint's
		// profile-level-id 42e01f; repeat-headers puts SPS/PPS before
		// every keyframe, since an RTP receiver has no other way to get
		// them here.
		args = append(args, "-c:v", "libx264", "-profile:v", "baseline", "-level", "3.1",
			"-preset", "ultrafast", "-tune", "zerolatency", "-bf", "0",
			"-x264-params", "repeat-headers=1")
	}
	args = append(args, "-payload_type", strconv.Itoa(payloadType),
		"-f", "rtp", fmt.Sprintf("rtp://127.0.0.1:%d?pkt_size=1200&localaddr=127.0.0.1", rtpPort))
	// ffmpeg prints the stream's SDP on stdout; only stderr matters.
	cmd := exec.Command(t.ffmpeg, args...)
	p, err := s.spawn("ffmpeg", cmd, nil)
	if err != nil {
		return err
	}
	select {
	case <-seen:
		return nil
	case <-p.done:
		return fmt.Errorf("ffmpeg exited during start-up: %v", p.err)
	case <-janus.done:
		return fmt.Errorf("janus exited during start-up: %v", janus.err)
	case <-ctx.Done():
		return fmt.Errorf("waiting for janus to receive ffmpeg's stream: %w", ctx.Err())
	}
}

// freePort returns a port on 127.0.0.1 that was free a moment ago.
func freePort(network string) (int, error) {
	if network == "udp" {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// URL returns the WHEP endpoint, http://127.0.0.1:PORT/whep/endpoint/cam.
func (s *Server) URL() string { return s.url }

// Output returns the last lines Janus, node and ffmpeg printed, for a
// test's log when something goes wrong on the client side.
func (s *Server) Output() string { return strings.TrimPrefix(s.output(), "\n") }

// output is Output as an error suffix: empty, or a newline and the tails.
func (s *Server) output() string {
	var b strings.Builder
	for _, p := range s.procs {
		if tail := p.log.tail(2048); tail != "" {
			fmt.Fprintf(&b, "\n--- %s (last output) ---\n%s", p.name, tail)
		}
	}
	return b.String()
}

// Close stops ffmpeg, node and Janus (each whole process group: SIGTERM,
// then SIGKILL after 3 s) and removes the generated files. It returns an
// error if one of them had exited on its own before Close, with the tail of
// the output. It may be called more than once and returns the same result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		stop := s.stop
		s.mu.Unlock()
		if stop != nil {
			stop()
		}
		var errs []error
		for _, p := range s.procs {
			select {
			case <-p.done:
				errs = append(errs, fmt.Errorf("%s exited before Close: %v", p.name, p.err))
			default:
			}
		}
		if len(errs) > 0 {
			s.closeErr = fmt.Errorf("whepserver: %w%s", errors.Join(errs...), s.output())
		}
		s.stopProcs()
		if err := os.RemoveAll(s.dir); err != nil && s.closeErr == nil {
			s.closeErr = fmt.Errorf("whepserver: %w", err)
		}
	})
	return s.closeErr
}

// stopProcs stops every process, last started first, all in parallel so a
// slow one does not delay the rest.
func (s *Server) stopProcs() {
	var wg sync.WaitGroup
	for _, p := range s.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.stop(3 * time.Second)
		}()
	}
	wg.Wait()
}

// proc is a child process with its output captured.
type proc struct {
	name  string
	cmd   *exec.Cmd
	log   *logBuffer
	stdin io.Closer
	done  chan struct{} // closed when the process has exited
	err   error         // Wait's result, set before done is closed
}

// spawn starts cmd as name in its own process group, capturing stdout and
// stderr; onLine, if not nil, sees every line of output.
func (s *Server) spawn(name string, cmd *exec.Cmd, onLine func(string)) (*proc, error) {
	p := &proc{name: name, cmd: cmd, log: newLogBuffer(onLine), done: make(chan struct{})}
	cmd.Stdout = p.log
	cmd.Stderr = p.log
	// Own process group: Close signals the group, taking along anything
	// the child forked. Pdeathsig kills the child if the test binary dies
	// without running Close (a timeout panic, a fatal signal).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Don't wait forever for a grandchild holding our output pipes.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	s.procs = append(s.procs, p)
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop ends the process group politely, then by force after grace.
func (p *proc) stop(grace time.Duration) {
	if p.stdin != nil {
		p.stdin.Close()
	}
	pgid := p.cmd.Process.Pid
	select {
	case <-p.done:
		// The leader is gone; its group may not be.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return
	default:
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
}

// watch returns a channel closed once the process prints a line
// containing substr; only output after the call counts.
func (p *proc) watch(substr string) <-chan struct{} { return p.log.watch(substr) }

// logBuffer keeps the last logKeep bytes written to it, hands every
// complete line to onLine, and lets callers wait for a line containing a
// string. It is safe for concurrent use.
type logBuffer struct {
	mu       sync.Mutex
	buf      []byte // the output, trimmed to about logKeep bytes
	partial  []byte // an incomplete last line
	onLine   func(string)
	watchers []watcher
}

// watcher waits for a line containing substr.
type watcher struct {
	substr string
	ch     chan struct{}
}

const logKeep = 16 << 10

func newLogBuffer(onLine func(string)) *logBuffer { return &logBuffer{onLine: onLine} }

func (l *logBuffer) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, b...)
	if len(l.buf) > 2*logKeep {
		l.buf = append(l.buf[:0], l.buf[len(l.buf)-logKeep:]...)
	}
	l.partial = append(l.partial, b...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSuffix(string(l.partial[:i]), "\r")
		l.partial = l.partial[i+1:]
		if l.onLine != nil {
			l.onLine(line)
		}
		kept := l.watchers[:0]
		for _, w := range l.watchers {
			if strings.Contains(line, w.substr) {
				close(w.ch)
			} else {
				kept = append(kept, w)
			}
		}
		l.watchers = kept
	}
	if len(l.partial) > logKeep { // a runaway line: drop it
		l.partial = l.partial[:0]
	}
	l.partial = append([]byte(nil), l.partial...)
	return len(b), nil
}

// watch returns a channel closed once a line containing substr is written.
// Only output written after the call counts, so call it before starting
// what should cause the line.
func (l *logBuffer) watch(substr string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan struct{})
	l.watchers = append(l.watchers, watcher{substr, ch})
	return ch
}

// tail returns the last n bytes written, starting at a line boundary.
func (l *logBuffer) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buf
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return strings.TrimRight(string(b), "\n")
}
