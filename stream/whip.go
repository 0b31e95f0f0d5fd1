package stream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/webrtc/v4"
)

// Timeouts of a WHIP session.
const (
	// gatherTimeout bounds gathering physd's own candidates for an answer.
	gatherTimeout = 2 * time.Second
	// mediaTimeout is how long a session may take from its answer to its
	// first video track before it is closed.
	mediaTimeout = 15 * time.Second
)

// errReplaced ends a session whose camera got a new publisher.
var errReplaced = fmt.Errorf("replaced by a new publisher: %w", ErrUnavailable)

// WHIPOptions configures a WHIPSource.
type WHIPOptions struct {
	Preprocess
	// Silence is how long a publisher may send no video before its session
	// is closed and the camera reported offline (0 = DefaultSilence).
	Silence time.Duration
	// Tap, when set, is handed each access unit the decoder accepted, in
	// decoding order, from the source's goroutine (it must not block):
	// an alert's evidence is cut from them (package evidence).
	Tap func(AccessUnit)
	// Exclusive refuses a second publisher with ErrBusy while one is
	// connected; by default the new publisher replaces the old one (a
	// phone that reconnects after a network change must not be locked out
	// by its own stale session).
	Exclusive bool
}

// WHIPSource is a camera that publishers push to over WHIP (RFC 9725): a
// browser, OBS or GStreamer's whipsink. The HTTP endpoint calls Publish,
// Trickle and End; Run waits for a publisher and delivers its video. When
// the publisher leaves, goes silent or is replaced, Run returns an error
// wrapping ErrUnavailable or ErrStalled, and the next Run waits for the
// next publisher. Frame times come from RTP timestamps.
type WHIPSource struct {
	name string
	rtc  *WebRTC
	opt  WHIPOptions
	wake chan struct{}

	mu       sync.Mutex
	cur      *whipSession
	consumed bool // Run has taken cur

	decodeErrs atomic.Int64
	sessions   atomic.Int64 // for AccessUnit.Session
}

var _ Source = (*WHIPSource)(nil)

// NewWHIPSource returns a WHIP camera named name on the stack rtc.
func NewWHIPSource(name string, rtc *WebRTC, opt WHIPOptions) (*WHIPSource, error) {
	if rtc == nil {
		return nil, fmt.Errorf("whip %s: no WebRTC stack: %w", name, ErrInvalidOption)
	}
	if err := opt.Preprocess.Validate(); err != nil {
		return nil, fmt.Errorf("whip %s: %w", name, err)
	}
	if opt.Silence < 0 {
		return nil, fmt.Errorf("whip %s: option Silence = %v: must be ≥ 0: %w", name, opt.Silence, ErrInvalidOption)
	}
	return &WHIPSource{name: name, rtc: rtc, opt: opt, wake: make(chan struct{}, 1)}, nil
}

// DecodeErrors is how many received access units the decoder rejected,
// over all publishers since the source was made.
func (s *WHIPSource) DecodeErrors() int64 { return s.decodeErrs.Load() }

// Name returns "whip:" and the camera's name.
func (s *WHIPSource) Name() string { return "whip:" + s.name }

// whipSession is one publisher's peer connection.
type whipSession struct {
	id     string
	etag   string
	pc     *webrtc.PeerConnection
	tracks <-chan *webrtc.TrackRemote
	done   chan struct{}
	once   sync.Once
	reason error
	media  atomic.Bool // Run took the video track
}

func (w *whipSession) close(reason error) {
	w.once.Do(func() {
		w.reason = reason
		close(w.done)
		_ = w.pc.Close()
	})
}

func (w *whipSession) closed() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Publish negotiates a publisher's session from its SDP offer and returns
// the SDP answer (with physd's candidates, so trickle is optional), the
// session's id and its ETag. Errors wrap ErrBadOffer, ErrNoVideo,
// ErrUnsupportedCodec or ErrBusy and leave the current publisher alone.
func (s *WHIPSource) Publish(ctx context.Context, offer string) (answer, id, etag string, err error) {
	if err := checkOffer(offer); err != nil {
		return "", "", "", err
	}
	if s.opt.Exclusive && s.active() {
		return "", "", "", ErrBusy
	}
	sess := &whipSession{id: newID(), done: make(chan struct{})}
	pc, tracks, err := s.rtc.newReceiver(func(st webrtc.PeerConnectionState) {
		if st == webrtc.PeerConnectionStateFailed || st == webrtc.PeerConnectionStateClosed {
			sess.close(fmt.Errorf("connection %s: %w", st, ErrUnavailable))
		}
	})
	if err != nil {
		return "", "", "", fmt.Errorf("whip %s: %w", s.name, err)
	}
	sess.pc, sess.tracks = pc, tracks
	ok := false
	defer func() {
		if !ok {
			sess.close(err)
		}
	}()
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}); err != nil {
		return "", "", "", fmt.Errorf("%w: %w", ErrBadOffer, err)
	}
	ans, err := pc.CreateAnswer(nil)
	if err != nil {
		return "", "", "", fmt.Errorf("%w: %w", ErrUnsupportedCodec, err)
	}
	if err := setLocal(ctx, pc, ans); err != nil {
		return "", "", "", fmt.Errorf("whip %s: %w", s.name, err)
	}
	local := pc.LocalDescription()
	if err := answerHasVideo(local.SDP); err != nil {
		return "", "", "", err
	}
	sess.etag = `"` + newID()[:16] + `"`

	s.mu.Lock()
	old := s.cur
	if s.opt.Exclusive && old != nil && !old.closed() {
		s.mu.Unlock()
		return "", "", "", ErrBusy
	}
	s.cur, s.consumed = sess, false
	s.mu.Unlock()
	if old != nil {
		old.close(errReplaced)
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	// A session that never delivers video is not left open, whether or
	// not Run has taken it yet.
	time.AfterFunc(mediaTimeout, func() {
		if !sess.media.Load() && len(sess.tracks) == 0 {
			sess.close(fmt.Errorf("no video within %v of the answer: %w", mediaTimeout, ErrStalled))
		}
	})
	ok = true
	return local.SDP, sess.id, sess.etag, nil
}

// answerHasVideo checks the answer accepted the video section: pion
// rejects it (port 0) when no codec matched.
func answerHasVideo(sdpText string) error {
	for _, line := range strings.Split(sdpText, "\n") {
		if strings.HasPrefix(line, "m=video ") && !strings.HasPrefix(line, "m=video 0 ") {
			return nil
		}
	}
	return fmt.Errorf("%w: no offered video codec matched VP8 or H264", ErrUnsupportedCodec)
}

func (s *WHIPSource) active() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur != nil && !s.cur.closed()
}

// session returns the open session with this id.
func (s *WHIPSource) session(id string) (*whipSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil || s.cur.id != id || s.cur.closed() {
		return nil, ErrNoSession
	}
	return s.cur, nil
}

// Trickle adds the ICE candidates of a trickle-ice-sdpfrag (RFC 8840) to
// session id. A fragment that restarts ICE (new ufrag) is refused.
func (s *WHIPSource) Trickle(id, frag string) error {
	sess, err := s.session(id)
	if err != nil {
		return err
	}
	remote := sess.pc.RemoteDescription()
	mid := "0"
	var cands []string
	for _, line := range strings.Split(frag, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "a=ice-ufrag:"):
			if remote != nil && !strings.Contains(remote.SDP, line) {
				return fmt.Errorf("%w: ICE restart (a new ice-ufrag) is not supported; publish again", ErrBadOffer)
			}
		case strings.HasPrefix(line, "a=mid:"):
			mid = strings.TrimPrefix(line, "a=mid:")
		case strings.HasPrefix(line, "a=candidate:"):
			cands = append(cands, strings.TrimPrefix(line, "a="))
		}
	}
	for _, c := range cands {
		m := mid
		if err := sess.pc.AddICECandidate(webrtc.ICECandidateInit{Candidate: c, SDPMid: &m}); err != nil {
			return fmt.Errorf("%w: candidate %q: %w", ErrBadOffer, c, err)
		}
	}
	return nil
}

// End closes session id (the publisher's DELETE).
func (s *WHIPSource) End(id string) error {
	sess, err := s.session(id)
	if err != nil {
		return err
	}
	sess.close(fmt.Errorf("the publisher ended the session: %w", ErrUnavailable))
	return nil
}

// ETag returns the entity tag of session id, for If-Match.
func (s *WHIPSource) ETag(id string) (string, error) {
	sess, err := s.session(id)
	if err != nil {
		return "", err
	}
	return sess.etag, nil
}

// Close ends the current session, if any.
func (s *WHIPSource) Close() {
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	if cur != nil {
		cur.close(fmt.Errorf("physd is shutting down: %w", ErrUnavailable))
	}
}

// Run waits for a publisher, then reads its video until the session ends.
func (s *WHIPSource) Run(ctx context.Context, emit func(Frame) error) error {
	var sess *whipSession
	for sess == nil {
		s.mu.Lock()
		if s.cur != nil && !s.consumed && !s.cur.closed() {
			sess, s.consumed = s.cur, true
		}
		s.mu.Unlock()
		if sess != nil {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.wake:
		}
	}
	var track *webrtc.TrackRemote
	select {
	case <-ctx.Done():
		sess.close(ctx.Err())
		return ctx.Err()
	case <-sess.done:
		return fmt.Errorf("%s: %w", s.Name(), sess.reason)
	case track = <-sess.tracks:
		sess.media.Store(true)
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-sess.done:
			cancel()
		case <-rctx.Done():
		}
	}()
	r := newTrackReader(s.Name(), track, s.opt.Preprocess, s.opt.Silence, sess.pc.WriteRTCP)
	r.tap, r.session = s.opt.Tap, s.sessions.Add(1)
	r.decodeErrs = &s.decodeErrs
	err := r.readRemote(rctx, track, emit)
	if ctx.Err() != nil {
		sess.close(ctx.Err())
		return ctx.Err()
	}
	if sess.closed() {
		return fmt.Errorf("%s: %w", s.Name(), sess.reason)
	}
	// Silence, a broken track, or emit's own error: the session is over.
	sess.close(err)
	return err
}

// AwaitsPublisher says that Run waits for a publisher rather than
// opening a camera: until one connects the source is waiting, not
// failing, and when a session ends Run may be called again at once.
func (s *WHIPSource) AwaitsPublisher() bool { return true }
