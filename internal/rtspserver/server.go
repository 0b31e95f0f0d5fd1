// Package rtspserver is a loopback RTSP server for tests, built on
// gortsplib. A publisher (for example ffmpeg, see Publish) sends a stream
// to a path with ANNOUNCE and RECORD; readers DESCRIBE, SETUP and PLAY the
// same path, and the server relays the publisher's RTP packets to them.
// Pause and Resume stop and restart the relaying without closing any
// connection, which is how a test simulates a hung camera.
package rtspserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/gortsplib/v5"
	"github.com/bluenviron/gortsplib/v5/pkg/base"
	"github.com/bluenviron/gortsplib/v5/pkg/description"
	"github.com/bluenviron/gortsplib/v5/pkg/format"
	"github.com/pion/rtp"
)

// Server is a running loopback RTSP server. Its methods are safe for
// concurrent use.
type Server struct {
	srv    *gortsplib.Server
	addr   string // 127.0.0.1:port of the RTSP listener
	udp    bool   // whether the UDP transport is enabled
	tls    bool   // whether it serves RTSPS
	paused atomic.Bool
	stop   func() bool // unregisters the ctx watcher

	mu         sync.Mutex
	paths      map[string]*path
	transports []string // transport of every PLAY, in order
	closed     bool
}

// path is the state of one published path.
type path struct {
	stream    *gortsplib.ServerStream
	publisher *gortsplib.ServerSession
	recording chan struct{} // closed at RECORD
}

// Start starts a server listening on 127.0.0.1 on a free TCP port (and, if
// a free even/odd UDP port pair is found, accepting the UDP transport
// too). It stops when ctx is done or Close is called.
func Start(ctx context.Context) (*Server, error) {
	return Listen(ctx, "127.0.0.1:0")
}

// Listen is Start on a given TCP address, such as the address of a server
// that was stopped, to restart it where its clients reconnect.
func Listen(ctx context.Context, addr string) (*Server, error) {
	return listen(ctx, addr, nil)
}

// StartTLS starts an RTSPS server on 127.0.0.1 on a free TCP port, with
// the certificate in cfg. It takes the interleaved TCP transport only (UDP
// over RTSPS would need SRTP). URL returns rtsps:// URLs.
func StartTLS(ctx context.Context, cfg *tls.Config) (*Server, error) {
	return listen(ctx, "127.0.0.1:0", cfg)
}

func listen(ctx context.Context, addr string, tlsCfg *tls.Config) (*Server, error) {
	s := &Server{paths: make(map[string]*path), tls: tlsCfg != nil}
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		var rtpPort int
		var ok bool
		if tlsCfg == nil {
			rtpPort, ok = freeUDPPair()
		}
		s.srv = &gortsplib.Server{
			Handler:     &handler{s},
			RTSPAddress: addr,
			TLSConfig:   tlsCfg,
			Listen: func(network, address string) (net.Listener, error) {
				l, err := net.Listen(network, address)
				if err == nil {
					s.addr = l.Addr().String()
				}
				return l, err
			},
		}
		if ok {
			s.srv.UDPRTPAddress = "127.0.0.1:" + strconv.Itoa(rtpPort)
			s.srv.UDPRTCPAddress = "127.0.0.1:" + strconv.Itoa(rtpPort+1)
		}
		if err = s.srv.Start(); err == nil {
			s.udp = ok
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("rtspserver: start: %w", err)
	}
	s.stop = context.AfterFunc(ctx, s.Close)
	return s, nil
}

// freeUDPPair returns an even UDP port whose successor was free a moment
// ago, or ok=false.
func freeUDPPair() (port int, ok bool) {
	for i := 0; i < 20; i++ {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return 0, false
		}
		p := c.LocalAddr().(*net.UDPAddr).Port
		c.Close()
		p &^= 1
		if p < 1024 || p > 65534 {
			continue
		}
		a, err1 := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(p))
		b, err2 := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(p+1))
		if a != nil {
			a.Close()
		}
		if b != nil {
			b.Close()
		}
		if err1 == nil && err2 == nil {
			return p, true
		}
	}
	return 0, false
}

// Addr returns the host:port the server listens on for RTSP.
func (s *Server) Addr() string { return s.addr }

// UDP reports whether the server accepts the UDP transport.
func (s *Server) UDP() bool { return s.udp }

// URL returns the rtsp:// URL of a path on the server, e.g.
// URL("cam") = "rtsp://127.0.0.1:41234/cam".
func (s *Server) URL(p string) string {
	scheme := "rtsp://"
	if s.tls {
		scheme = "rtsps://"
	}
	return scheme + s.addr + "/" + strings.TrimLeft(p, "/")
}

// Close stops the server, closing every connection. It may be called more
// than once.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	if s.stop != nil {
		s.stop()
	}
	s.srv.Close()
	s.mu.Lock()
	for k, p := range s.paths {
		p.stream.Close()
		delete(s.paths, k)
	}
	s.mu.Unlock()
}

// Pause stops relaying packets to readers, leaving every connection and
// session open: readers see a server that has hung. Packets published
// while paused are dropped.
func (s *Server) Pause() { s.paused.Store(true) }

// Resume restarts relaying packets after Pause.
func (s *Server) Resume() { s.paused.Store(false) }

// WaitPublished waits until a publisher is recording on the path, or ctx
// is done.
func (s *Server) WaitPublished(ctx context.Context, p string) error {
	key := pathKey(p)
	for {
		s.mu.Lock()
		st, ok := s.paths[key]
		s.mu.Unlock()
		if ok {
			select {
			case <-st.recording:
				return nil
			case <-ctx.Done():
				return fmt.Errorf("rtspserver: waiting for a publisher on %s: %w", key, ctx.Err())
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("rtspserver: waiting for a publisher on %s: %w", key, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// ReaderTransports returns the transport ("TCP", "UDP", ...) of every
// reader that has started playing, in order.
func (s *Server) ReaderTransports() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.transports...)
}

// pathKey normalises a path to the form gortsplib reports: one leading
// slash, no trailing slash.
func pathKey(p string) string { return "/" + strings.Trim(p, "/") }

// handler implements gortsplib's server callbacks for a Server.
type handler struct{ s *Server }

// OnSessionClose removes a path when its publisher leaves, which
// disconnects its readers.
func (h *handler) OnSessionClose(ctx *gortsplib.ServerHandlerOnSessionCloseCtx) {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, p := range s.paths {
		if p.publisher == ctx.Session {
			p.stream.Close()
			delete(s.paths, k)
		}
	}
}

// OnDescribe serves the description of a published path.
func (h *handler) OnDescribe(ctx *gortsplib.ServerHandlerOnDescribeCtx) (*base.Response, *gortsplib.ServerStream, error) {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.paths[pathKey(ctx.Path)]
	if !ok {
		return &base.Response{StatusCode: base.StatusNotFound}, nil, nil
	}
	return &base.Response{StatusCode: base.StatusOK}, p.stream, nil
}

// OnAnnounce creates the stream of a path, replacing an earlier publisher.
func (h *handler) OnAnnounce(ctx *gortsplib.ServerHandlerOnAnnounceCtx) (*base.Response, error) {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	key := pathKey(ctx.Path)
	if old, ok := s.paths[key]; ok {
		old.stream.Close()
		old.publisher.Close()
		delete(s.paths, key)
	}
	st := &gortsplib.ServerStream{Server: s.srv, Desc: ctx.Description}
	if err := st.Initialize(); err != nil {
		return &base.Response{StatusCode: base.StatusBadRequest}, err
	}
	s.paths[key] = &path{stream: st, publisher: ctx.Session, recording: make(chan struct{})}
	return &base.Response{StatusCode: base.StatusOK}, nil
}

// OnSetup accepts publishers' SETUPs and attaches readers to the stream.
func (h *handler) OnSetup(ctx *gortsplib.ServerHandlerOnSetupCtx) (*base.Response, *gortsplib.ServerStream, error) {
	if ctx.Session.State() == gortsplib.ServerSessionStatePreRecord {
		return &base.Response{StatusCode: base.StatusOK}, nil, nil
	}
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.paths[pathKey(ctx.Path)]
	if !ok {
		return &base.Response{StatusCode: base.StatusNotFound}, nil, nil
	}
	return &base.Response{StatusCode: base.StatusOK}, p.stream, nil
}

// OnPlay records the reader's transport.
func (h *handler) OnPlay(ctx *gortsplib.ServerHandlerOnPlayCtx) (*base.Response, error) {
	s := h.s
	tr := "unknown"
	if t := ctx.Session.Transport(); t != nil {
		tr = t.Protocol.String()
	}
	s.mu.Lock()
	s.transports = append(s.transports, tr)
	s.mu.Unlock()
	return &base.Response{StatusCode: base.StatusOK}, nil
}

// OnRecord relays the publisher's packets to the readers unless paused.
func (h *handler) OnRecord(ctx *gortsplib.ServerHandlerOnRecordCtx) (*base.Response, error) {
	s := h.s
	s.mu.Lock()
	p, ok := s.paths[pathKey(ctx.Path)]
	s.mu.Unlock()
	if !ok || p.publisher != ctx.Session {
		return &base.Response{StatusCode: base.StatusBadRequest}, errors.New("RECORD without ANNOUNCE")
	}
	st := p.stream
	ctx.Session.OnPacketRTPAny(func(medi *description.Media, _ format.Format, pkt *rtp.Packet) {
		if s.paused.Load() {
			return
		}
		if err := st.WritePacketRTP(medi, pkt); err != nil {
			slog.Debug("rtspserver: relaying a packet", "path", ctx.Path, "err", err)
		}
	})
	select {
	case <-p.recording:
	default:
		close(p.recording)
	}
	return &base.Response{StatusCode: base.StatusOK}, nil
}
