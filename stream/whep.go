package stream

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pion/webrtc/v4"
)

// maxSDP bounds an SDP body read from the network.
const maxSDP = 64 << 10

// WHEPOptions configures a WHEPSource.
type WHEPOptions struct {
	Preprocess
	// Token is the bearer token the media server wants; empty sends none.
	Token string
	// Silence is how long the stream may send no video before Run returns
	// an error wrapping ErrStalled (0 = DefaultSilence).
	Silence time.Duration
	// Tap, when set, is handed each access unit the decoder accepted, in
	// decoding order, from the source's goroutine (it must not block):
	// an alert's evidence is cut from them (package evidence).
	Tap func(AccessUnit)
	// Timeout bounds the HTTP exchange and the wait for the first video
	// track (0 = 15 s).
	Timeout time.Duration
	// Client is the HTTP client (nil = a client with Timeout).
	Client *http.Client
}

// WHEPSource pulls a stream from a media server (MediaMTX, go2rtc, Janus)
// over WHEP: it posts a receive-only offer to the endpoint, reads the
// video track of the answer's session, and deletes the session when Run
// returns. Frame times come from RTP timestamps.
type WHEPSource struct {
	url string
	rtc *WebRTC
	opt WHEPOptions

	decodeErrs atomic.Int64
	sessions   atomic.Int64 // for AccessUnit.Session
}

var _ Source = (*WHEPSource)(nil)

// NewWHEPSource returns a source for the WHEP endpoint at rawURL (http or
// https) on the stack rtc.
func NewWHEPSource(rawURL string, rtc *WebRTC, opt WHEPOptions) (*WHEPSource, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("whep %s: want an http:// or https:// URL: %w", redactURL(rawURL), ErrInvalidOption)
	}
	if rtc == nil {
		return nil, fmt.Errorf("whep %s: no WebRTC stack: %w", redactURL(rawURL), ErrInvalidOption)
	}
	if err := opt.Preprocess.Validate(); err != nil {
		return nil, fmt.Errorf("whep %s: %w", redactURL(rawURL), err)
	}
	if opt.Timeout <= 0 {
		opt.Timeout = mediaTimeout
	}
	if opt.Client == nil {
		opt.Client = &http.Client{Timeout: opt.Timeout}
	}
	return &WHEPSource{url: rawURL, rtc: rtc, opt: opt}, nil
}

// DecodeErrors is how many received access units the decoder rejected,
// over all sessions since the source was made.
func (s *WHEPSource) DecodeErrors() int64 { return s.decodeErrs.Load() }

// Name returns "whep:" and the URL without credentials.
func (s *WHEPSource) Name() string { return "whep:" + redactURL(s.url) }

// Run connects, reads the video until ctx ends or the stream fails, and
// ends the session on the server.
func (s *WHEPSource) Run(ctx context.Context, emit func(Frame) error) error {
	failed := make(chan webrtc.PeerConnectionState, 1)
	pc, tracks, err := s.rtc.newReceiver(func(st webrtc.PeerConnectionState) {
		if st == webrtc.PeerConnectionStateFailed {
			select {
			case failed <- st:
			default:
			}
		}
	})
	if err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	defer pc.Close()
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	if err := setLocal(ctx, pc, offer); err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	answer, resource, err := s.post(ctx, pc.LocalDescription().SDP)
	if err != nil {
		return err
	}
	if resource != "" {
		defer s.deleteSession(resource)
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		return fmt.Errorf("%s: the server's answer: %w: %w", s.Name(), ErrBadOffer, err)
	}
	var track *webrtc.TrackRemote
	select {
	case <-ctx.Done():
		return ctx.Err()
	case st := <-failed:
		return fmt.Errorf("%s: connection %s: %w", s.Name(), st, ErrUnavailable)
	case <-time.After(s.opt.Timeout):
		return fmt.Errorf("%s: no video within %v: %w", s.Name(), s.opt.Timeout, ErrStalled)
	case track = <-tracks:
	}
	r := newTrackReader(s.Name(), track, s.opt.Preprocess, s.opt.Silence, pc.WriteRTCP)
	r.tap, r.session = s.opt.Tap, s.sessions.Add(1)
	r.decodeErrs = &s.decodeErrs
	return r.readRemote(ctx, track, emit)
}

// post sends the offer and returns the answer and the session's URL.
func (s *WHEPSource) post(ctx context.Context, offer string) (answer, resource string, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(offer))
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", s.Name(), err)
	}
	req.Header.Set("Content-Type", "application/sdp")
	req.Header.Set("Accept", "application/sdp")
	if s.opt.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.opt.Token)
	}
	resp, err := s.opt.Client.Do(req)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w: %w", s.Name(), scrubURL(err), ErrUnavailable)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSDP+1))
	if err != nil {
		return "", "", fmt.Errorf("%s: reading the answer: %w: %w", s.Name(), err, ErrUnavailable)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(bytes.ToValidUTF8(body[:min(len(body), 200)], nil)))
		return "", "", fmt.Errorf("%s: server answered %s: %q: %w", s.Name(), resp.Status, msg, ErrUnavailable)
	}
	if len(body) > maxSDP {
		return "", "", fmt.Errorf("%s: the answer is over %d bytes: %w", s.Name(), maxSDP, ErrBadOffer)
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		base, _ := url.Parse(s.url)
		if ref, err := url.Parse(loc); err == nil {
			resource = base.ResolveReference(ref).String()
		}
	}
	return string(body), resource, nil
}

// deleteSession ends the session on the server, best effort: the server
// also times it out.
func (s *WHEPSource) deleteSession(resource string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, resource, nil)
	if err != nil {
		return
	}
	if s.opt.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.opt.Token)
	}
	if resp, err := s.opt.Client.Do(req); err == nil {
		resp.Body.Close()
	}
}

// scrubURL drops the URL (which may hold credentials) from an HTTP
// client error.
func scrubURL(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
