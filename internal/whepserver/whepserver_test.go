package whepserver

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/physd/physd/sim"
	"github.com/pion/rtp/codecs"
	"github.com/pion/webrtc/v4"
)

// clip is the y4m test clip TestMain renders once: 5 s of the simulator's
// 128×128 underdamped pendulum at 20 fps.
var clip string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "whepserver-test-")
	if err != nil {
		panic(err)
	}
	clip = filepath.Join(dir, "pendulum.y4m")
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	frames, _, err := sim.Render(context.Background(), sim.Scene{System: "pendulum",
		Gamma1: g1, Gamma0: g0, Z0: 50, Duration: 5, FPS: 20, Size: 128, Seed: 1})
	if err == nil {
		err = sim.WriteY4M(clip, frames, 20)
	}
	if err != nil {
		os.RemoveAll(dir)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// start starts a server for the test, stopped at cleanup, where an early
// exit of Janus, node or ffmpeg fails the test.
func start(t *testing.T, ctx context.Context, opt Options) *Server {
	t.Helper()
	t0 := time.Now()
	s, err := Start(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s server up in %v at %s", cmp.Or(opt.Codec, CodecVP8), time.Since(t0).Round(time.Millisecond), s.URL())
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL = %q, want http://127.0.0.1:PORT/...", s.URL())
	}
	return s
}

// client is a minimal WHEP client: one recvonly video transceiver, ICE on
// loopback only.
type client struct {
	pc       *webrtc.PeerConnection
	packets  atomic.Int64
	first    atomic.Int64 // UnixNano of the first packet
	mimeType atomic.Value // string, of the track received
	// decodable is set once a packet shows the stream can be decoded from
	// here on: a VP8 keyframe, or an H.264 IDR slice after SPS and PPS.
	decodable atomic.Bool
}

func newClient(t *testing.T) *client {
	t.Helper()
	var se webrtc.SettingEngine
	// Janus offers only 127.0.0.1 candidates; pion leaves loopback out
	// unless told, and other interfaces would only slow gathering.
	se.SetIncludeLoopbackCandidate(true)
	se.SetInterfaceFilter(func(name string) bool { return name == "lo" })
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	var me webrtc.MediaEngine
	if err := me.RegisterDefaultCodecs(); err != nil {
		t.Fatal(err)
	}
	api := webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(&me))
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	if _, err := pc.AddTransceiverFromKind(webrtc.RTPCodecTypeVideo,
		webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionRecvonly}); err != nil {
		t.Fatal(err)
	}
	c := &client{pc: pc}
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		mime := tr.Codec().MimeType
		c.mimeType.Store(mime)
		var nals [32]bool // H.264 NAL unit types seen
		for {
			pkt, _, err := tr.ReadRTP()
			if err != nil {
				return
			}
			if c.packets.Add(1) == 1 {
				c.first.Store(time.Now().UnixNano())
			}
			switch {
			case strings.EqualFold(mime, webrtc.MimeTypeVP8):
				if vp8Keyframe(pkt.Payload) {
					c.decodable.Store(true)
				}
			case strings.EqualFold(mime, webrtc.MimeTypeH264):
				for _, typ := range h264NALTypes(pkt.Payload) {
					nals[typ] = true
				}
				if nals[7] && nals[8] && nals[5] {
					c.decodable.Store(true)
				}
			}
		}
	})
	return c
}

// offer returns the local offer with every candidate in it.
func (c *client) offer(t *testing.T) string {
	t.Helper()
	o, err := c.pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(c.pc)
	if err := c.pc.SetLocalDescription(o); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gathered:
	case <-time.After(5 * time.Second):
		t.Fatal("ICE gathering did not complete in 5 s")
	}
	return c.pc.LocalDescription().SDP
}

// do sends one WHEP request and returns the response and its body.
func do(t *testing.T, ctx context.Context, method, u, token, contentType, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, u, err)
	}
	return resp, string(b)
}

// pull runs one WHEP session against s: POST the offer, apply the
// answer, wait for RTP packets of wantMime, DELETE the session.
func pull(t *testing.T, ctx context.Context, s *Server, token, wantMime string) {
	t.Helper()
	c := newClient(t)
	offer := c.offer(t)

	t0 := time.Now()
	resp, answer := do(t, ctx, http.MethodPost, s.URL(), token, "application/sdp", offer)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST offer: %s: %s%s", resp.Status, answer, s.output())
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/sdp") {
		t.Errorf("answer Content-Type = %q", ct)
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		t.Fatal("no Location in the answer")
	}
	if !strings.Contains(answer, "a=candidate:") || !strings.Contains(answer, " 127.0.0.1 ") {
		t.Errorf("the answer carries no 127.0.0.1 candidate:\n%s", answer)
	}
	if err := c.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatalf("SetRemoteDescription: %v\n%s", err, answer)
	}

	const want = 20 // about a second of the 20 fps clip
	deadline := time.Now().Add(15 * time.Second)
	for (c.packets.Load() < want || !c.decodable.Load()) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	n := c.packets.Load()
	if n < want || !c.decodable.Load() {
		t.Fatalf("%d RTP packets in 15 s, decodable start seen: %v (ICE %s, peer connection %s)%s",
			n, c.decodable.Load(), c.pc.ICEConnectionState(), c.pc.ConnectionState(), s.output())
	}
	mime, _ := c.mimeType.Load().(string)
	t.Logf("%d packets of %s within %v of the POST, the first after %v", n, mime,
		time.Since(t0).Round(time.Millisecond), time.Unix(0, c.first.Load()).Sub(t0).Round(time.Millisecond))
	if !strings.EqualFold(mime, wantMime) {
		t.Errorf("track codec %q, want %q", mime, wantMime)
	}

	base, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	rel, err := url.Parse(loc)
	if err != nil {
		t.Fatalf("Location %q: %v", loc, err)
	}
	resource := base.ResolveReference(rel).String()
	// Trickle is accepted, though Janus's answer already carries its
	// candidates and ours went in the offer.
	if resp, body := do(t, ctx, http.MethodPatch, resource, token, "application/trickle-ice-sdpfrag",
		"a=end-of-candidates\r\n"); resp.StatusCode != http.StatusNoContent {
		t.Errorf("PATCH %s: %s: %s, want 204", resource, resp.Status, body)
	}
	if resp, body := do(t, ctx, http.MethodDelete, resource, token, "", ""); resp.StatusCode/100 != 2 {
		t.Errorf("DELETE %s: %s: %s", resource, resp.Status, body)
	}
	// The session is gone: a second DELETE finds nothing.
	if resp, _ := do(t, ctx, http.MethodDelete, resource, token, "", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("second DELETE %s: %s, want 404", resource, resp.Status)
	}
}

// vp8Keyframe reports whether an RTP payload starts a VP8 keyframe (RFC
// 7741: start of partition 0, and the frame tag's inverse key frame bit
// clear).
func vp8Keyframe(payload []byte) bool {
	var p codecs.VP8Packet
	b, err := p.Unmarshal(payload)
	return err == nil && p.S == 1 && p.PID == 0 && len(b) > 0 && b[0]&1 == 0
}

// h264NALTypes returns the NAL unit types an RTP payload carries (RFC
// 6184: a single NAL unit, a STAP-A, or the start of an FU-A).
func h264NALTypes(payload []byte) []byte {
	if len(payload) == 0 {
		return nil
	}
	switch typ := payload[0] & 0x1f; typ {
	case 24: // STAP-A: 16-bit sizes, each followed by a NAL unit
		var types []byte
		for b := payload[1:]; len(b) > 2; {
			size := int(b[0])<<8 | int(b[1])
			if size == 0 || 2+size > len(b) {
				break
			}
			types = append(types, b[2]&0x1f)
			b = b[2+size:]
		}
		return types
	case 28: // FU-A
		if len(payload) > 1 && payload[1]&0x80 != 0 {
			return []byte{payload[1] & 0x1f}
		}
		return nil
	default:
		return []byte{typ}
	}
}

func TestPull(t *testing.T) {
	for _, tc := range []struct {
		codec, mime string
	}{
		{CodecVP8, webrtc.MimeTypeVP8},
		{CodecH264, webrtc.MimeTypeH264},
	} {
		t.Run(tc.codec, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			s := start(t, ctx, Options{Codec: tc.codec, Video: clip})
			pull(t, ctx, s, "", tc.mime)
		})
	}
}

func TestToken(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	s := start(t, ctx, Options{Codec: CodecVP8, Video: clip, Token: "s3cret"})
	offer := newClient(t).offer(t)
	for _, tok := range []string{"", "wrong"} {
		if resp, body := do(t, ctx, http.MethodPost, s.URL(), tok, "application/sdp", offer); resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST with token %q: %s: %s, want 403", tok, resp.Status, body)
		}
	}
	pull(t, ctx, s, "s3cret", webrtc.MimeTypeVP8)
}

func TestStartErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Start(ctx, Options{Codec: "av1", Video: clip}); err == nil || !strings.Contains(err.Error(), "codec") {
		t.Errorf("codec av1: %v", err)
	}
	if _, err := Start(ctx, Options{Video: filepath.Join(t.TempDir(), "none.y4m")}); err == nil {
		t.Error("a missing clip: no error")
	}
	// A file ffmpeg cannot read fails Start with ffmpeg's complaint.
	bad := filepath.Join(t.TempDir(), "bad.y4m")
	if err := os.WriteFile(bad, []byte("not a video"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Start(ctx, Options{Video: bad})
	if err == nil {
		s.Close()
		t.Fatal("an unreadable clip: no error")
	}
	if !strings.Contains(err.Error(), "ffmpeg") {
		t.Errorf("an unreadable clip: %v", err)
	}
}

// checkStopped fails the test unless every process of s is gone, its
// directory removed and its URL dead, within 5 s.
func checkStopped(t *testing.T, s *Server, pids []int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for {
			_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
			if err != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("process %d still exists", pid)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// When ctx ended the server, Close runs on its own goroutine and
	// removes the files after the processes are gone.
	for {
		_, err := os.Stat(s.dir)
		if os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%s still exists: %v", s.dir, err)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if resp, err := http.Get(s.URL()); err == nil {
		resp.Body.Close()
		t.Errorf("%s still answers", s.URL())
	}
}

// pids returns the process IDs of s's children.
func pids(s *Server) []int {
	var ids []int
	for _, p := range s.procs {
		ids = append(ids, p.cmd.Process.Pid)
	}
	return ids
}

func TestCloseStopsEverything(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Start(ctx, Options{Video: clip})
	if err != nil {
		t.Fatal(err)
	}
	ids := pids(s)
	if len(ids) != 3 {
		t.Errorf("%d processes, want janus, node and ffmpeg", len(ids))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	checkStopped(t, s, ids)
}

func TestContextEndCloses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Start(ctx, Options{Video: clip})
	if err != nil {
		t.Fatal(err)
	}
	ids := pids(s)
	cancel()
	checkStopped(t, s, ids)
	if err := s.Close(); err != nil {
		t.Errorf("Close after ctx ended: %v", err)
	}
}
