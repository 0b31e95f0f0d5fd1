//go:build !nocv

package daemon

import (
	"context"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/physd/physd/config"
	"github.com/physd/physd/sim"
	"github.com/physd/physd/wire"
)

// whipConfig is the test configuration plus WHIP cameras on loopback.
func whipConfig(cams ...config.Camera) *config.Config {
	cfg := testConfig()
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.WebRTC.Interfaces = []string{"lo"}
	cfg.Cameras = append(cfg.Cameras, cams...)
	return cfg
}

func whipCamera(name, token string, exclusive bool) config.Camera {
	c := config.DefaultCamera()
	c.Name = name
	c.Source = config.Source{Kind: config.KindWHIP, Token: config.NewSecret(token), Exclusive: exclusive, Timeout: 3 * time.Second}
	return c
}

// latestOf reads /api/v1/cameras/{cam}/latest.
func latestOf(t *testing.T, base, cam, token string) latestInfo {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/cameras/"+cam+"/latest", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l latestInfo
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("latest: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestWHIPEndToEnd publishes ffmpeg-encoded video of the underdamped
// pendulum over WebRTC (pion as the publisher, like OBS): first VP8, then
// an H.264 publisher that replaces it. Each yields certified estimates
// within the estimator's accuracy on NATS; the replaced session is gone;
// DELETE ends the last and the camera goes offline.
func TestWHIPEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := whipConfig(whipCamera("phone", "tok", false))
	cfg.Cameras = cfg.Cameras[1:] // only the WHIP camera
	r := start(t, cfg, t.TempDir())
	base := "http://" + r.d.HTTPAddr()
	c := collect(t, r.d)
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)

	var prev *whipPublisher
	for _, codec := range []struct{ name, mime string }{{"vp8", webrtc.MimeTypeVP8}, {"h264", webrtc.MimeTypeH264}} {
		aus := encodedClip(ctx, t, codec.name, 10)
		since := time.Now()
		p := startPublisher(t, base, "phone", "tok", codec.mime)
		sctx, stop := context.WithCancel(ctx)
		sent := make(chan error, 1)
		go func() { sent <- p.send(sctx, aus) }()
		var got *wire.Estimate
		var all []*wire.Estimate
		defer func() {
			if got == nil {
				for _, m := range c.kind(wire.KindDiagnostic) {
					t.Logf("diag: %s", m.Data)
				}
			}
		}()
		waitFor(t, 60*time.Second, codec.name+" certified estimate", func() bool {
			all = all[:0]
			for _, e := range estimates(t, c) {
				if e.WindowStart.After(since) {
					all = append(all, e)
				}
			}
			if len(all) >= 4 {
				got = all[0]
				return true
			}
			return false
		})
		for _, e := range all {
			t.Logf("%s: γ0 %.5f ± %.5f γ1 %.5f ± %.5f (%d frames)", codec.name, e.Gamma0, e.Gamma0Sigma, e.Gamma1, e.Gamma1Sigma, e.Frames)
			checkAccuracy(t, codec.name, e, g0, g1)
		}
		if l := latestOf(t, base, "phone", "tok"); l.State != "online" || l.Estimate == nil || !l.Estimate.Certified {
			t.Errorf("%s: latest = %+v, want online with a certified estimate", codec.name, l)
		}
		if prev != nil {
			if code := prev.delete(t); code != http.StatusNotFound {
				t.Errorf("DELETE of the replaced session: %d, want 404", code)
			}
		}
		stop()
		if err := <-sent; err != nil && prev == nil {
			t.Errorf("%s publisher: %v", codec.name, err)
		}
		prev = p
		// Keep the session open (no media) until the next publisher
		// replaces it; Silence is 3 s, so replace quickly.
	}
	// The last publisher stops sending but keeps its connection: after
	// the source's timeout (3 s) the session is closed and the camera
	// reported offline with the reason.
	waitFor(t, 15*time.Second, "camera offline after the publisher went silent", func() bool {
		s := r.d.Statuses()["phone"]
		return s.State == "offline" && strings.Contains(s.Error, "no video for 3s")
	})
	if code := prev.delete(t); code != http.StatusNotFound {
		t.Errorf("DELETE of the silent session: %d, want 404 (closed by physd)", code)
	}
	// Two clean publishers: frames counted, no decode error, and the
	// counter is there for alerting on (it counts in stream's unit test).
	m := scrape(t, base)
	if v, ok := m[`physd_decode_errors_total{camera="phone"}`]; !ok || v != 0 {
		t.Errorf("physd_decode_errors_total for phone = %v (present %v), want 0", v, ok)
	}
	if v := m[`physd_frames_received_total{camera="phone"}`]; v < 100 {
		t.Errorf("physd_frames_received_total for phone = %v", v)
	}
}

// checkAccuracy holds a certified estimate from lossy video to the
// paper's bar or, when the window's own uncertainty is larger, to 3σ of
// it; a certified window must also be precise (σ0 within 2 % of γ0).
func checkAccuracy(t *testing.T, what string, e *wire.Estimate, g0, g1 float64) {
	t.Helper()
	if e.Gamma0Sigma > 0.02*g0 || math.Abs(e.Gamma0-g0) > math.Max(0.005*g0, 3*e.Gamma0Sigma) ||
		math.Abs(e.Gamma1-g1) > math.Max(0.004, 3*e.Gamma1Sigma) {
		t.Errorf("%s: estimate γ0 %.5f ± %.5f γ1 %.5f ± %.5f, want (%.4f, %.2f)", what, e.Gamma0, e.Gamma0Sigma, e.Gamma1, e.Gamma1Sigma, g0, g1)
	}
}

// TestWHIPBadInput sends what a broken or hostile client sends; each gets
// its status and message, and the synthetic camera beside keeps running.
func TestWHIPBadInput(t *testing.T) {
	cfg := whipConfig(whipCamera("phone", "tok", false), whipCamera("solo", "tok2", true))
	r := start(t, cfg, t.TempDir())
	base := "http://" + r.d.HTTPAddr()
	waitFor(t, 20*time.Second, "synthetic camera online", func() bool { return r.d.Statuses()["pendulum"].Frames > 0 })
	framesBefore := r.d.Statuses()["pendulum"].Frames

	def := func(me *webrtc.MediaEngine) error { return me.RegisterDefaultCodecs() }
	_, _, vp8Offer := offerFor(t, loopbackAPI(t, def), webrtc.RTPCodecTypeVideo, webrtc.MimeTypeVP8)
	_, _, audioOffer := offerFor(t, loopbackAPI(t, def), webrtc.RTPCodecTypeAudio, webrtc.MimeTypeOpus)
	_, _, vp9Offer := offerFor(t, loopbackAPI(t, codecOnly(webrtc.MimeTypeVP9, "profile-id=0")), webrtc.RTPCodecTypeVideo, webrtc.MimeTypeVP9)

	cases := []struct {
		name, path, token, ctype, body string
		code                           int
		msg                            string
	}{
		{"malformed SDP", "/whip/phone", "tok", "application/sdp", "v=0\r\nthis is not SDP\r\n", 400, "malformed SDP"},
		{"no video", "/whip/phone", "tok", "application/sdp", audioOffer, 422, "no video"},
		{"unsupported codec", "/whip/phone", "tok", "application/sdp", vp9Offer, 422, "VP9"},
		{"missing token", "/whip/phone", "", "application/sdp", vp8Offer, 401, "missing bearer token"},
		{"wrong token", "/whip/phone", "nope", "application/sdp", vp8Offer, 401, "invalid bearer token"},
		{"token of another camera", "/whip/phone", "tok2", "application/sdp", vp8Offer, 401, "invalid bearer token"},
		{"wrong content type", "/whip/phone", "tok", "text/plain", vp8Offer, 415, "application/sdp"},
		{"empty body", "/whip/phone", "tok", "application/sdp", "", 400, "empty body"},
		{"oversized body", "/whip/phone", "tok", "application/sdp", strings.Repeat("a=x\r\n", 20000), 413, "bytes"},
		// phone's token admits to phone only: any other camera, real or
		// not, answers 401 (TestHTTPUnknownCameraLikeKnown).
		{"unknown camera", "/whip/nosuch", "tok", "application/sdp", vp8Offer, 401, "invalid bearer token"},
		{"not a WHIP camera", "/whip/pendulum", "tok", "application/sdp", vp8Offer, 404, "does not take WHIP"},
	}
	for _, tc := range cases {
		code, body, _ := whipPost(t, base+tc.path, tc.token, tc.ctype, tc.body)
		if code != tc.code || !strings.Contains(body, tc.msg) {
			t.Errorf("%s: %d %q, want %d containing %q", tc.name, code, strings.TrimSpace(body), tc.code, tc.msg)
		}
	}

	// OBS sends audio (Opus) and H.264 video in one offer: physd accepts
	// both (the audio is read and dropped).
	{
		pc, err := loopbackAPI(t, def).NewPeerConnection(webrtc.Configuration{})
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		for _, mime := range []string{webrtc.MimeTypeOpus, webrtc.MimeTypeH264} {
			tr, err := webrtc.NewTrackLocalStaticSample(webrtc.RTPCodecCapability{MimeType: mime}, "obs", "obs")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pc.AddTransceiverFromTrack(tr, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendonly}); err != nil {
				t.Fatal(err)
			}
		}
		offer, _ := pc.CreateOffer(nil)
		gathered := webrtc.GatheringCompletePromise(pc)
		_ = pc.SetLocalDescription(offer)
		<-gathered
		code, answer, _ := whipPost(t, base+"/whip/phone", "tok", "application/sdp", pc.LocalDescription().SDP)
		if code != http.StatusCreated || strings.Contains(answer, "m=audio 0 ") || !strings.Contains(answer, "H264") {
			t.Errorf("audio+video offer: %d, want 201 with audio and H.264 accepted:\n%s", code, answer)
		} else if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
			t.Errorf("the publisher rejects physd's answer: %v", err)
		}
	}

	// ICE is restricted to loopback: the answer offers nothing else.
	code, answer, loc := whipPost(t, base+"/whip/phone", "tok", "application/sdp", vp8Offer)
	if code != http.StatusCreated || loc == "" {
		t.Fatalf("POST of a VP8 offer: %d %s", code, answer)
	}
	cands := 0
	for _, line := range strings.Split(answer, "\n") {
		if strings.HasPrefix(line, "a=candidate:") {
			cands++
			if f := strings.Fields(line); len(f) < 6 || !net.ParseIP(f[4]).IsLoopback() {
				t.Errorf("answer candidate outside webrtc.interfaces [lo]: %s", line)
			}
		}
	}
	if cands == 0 {
		t.Errorf("answer has no candidates:\n%s", answer)
	}

	// A second publisher replaces the first; on an exclusive camera it is
	// refused.
	first := startPublisher(t, base, "phone", "tok", webrtc.MimeTypeVP8)
	second := startPublisher(t, base, "phone", "tok", webrtc.MimeTypeVP8)
	if code := first.delete(t); code != http.StatusNotFound {
		t.Errorf("DELETE of the replaced session: %d, want 404", code)
	}
	startPublisher(t, base, "solo", "tok2", webrtc.MimeTypeVP8)
	_, _, offer := offerFor(t, loopbackAPI(t, def), webrtc.RTPCodecTypeVideo, webrtc.MimeTypeVP8)
	if code, body, _ := whipPost(t, base+"/whip/solo", "tok2", "application/sdp", offer); code != http.StatusConflict || !strings.Contains(body, "already has a publisher") {
		t.Errorf("second publisher on an exclusive camera: %d %q, want 409", code, body)
	}

	// PATCH: a stale ETag, a trickled candidate, an ICE restart.
	patch := func(ifMatch, frag string) (int, string) {
		req, _ := http.NewRequest(http.MethodPatch, base+second.resource, strings.NewReader(frag))
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("Content-Type", "application/trickle-ice-sdpfrag")
		if ifMatch != "" {
			req.Header.Set("If-Match", ifMatch)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b := make([]byte, 512)
		n, _ := resp.Body.Read(b)
		return resp.StatusCode, string(b[:n])
	}
	if code, _ := patch(`"stale"`, "a=end-of-candidates\r\n"); code != http.StatusPreconditionFailed {
		t.Errorf("PATCH with a stale If-Match: %d, want 412", code)
	}
	if code, body := patch("*", "a=mid:0\r\na=candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host\r\na=end-of-candidates\r\n"); code != http.StatusNoContent {
		t.Errorf("PATCH with a candidate: %d %s, want 204", code, body)
	}
	if code, body := patch("*", "a=ice-ufrag:restart\r\na=ice-pwd:0123456789012345678901\r\n"); code != http.StatusBadRequest || !strings.Contains(body, "ICE restart") {
		t.Errorf("PATCH restarting ICE: %d %s, want 400", code, body)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/whip/phone", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /whip/phone: %v, want 405", err)
	}

	waitFor(t, 10*time.Second, "the synthetic camera to keep running", func() bool {
		s := r.d.Statuses()["pendulum"]
		return s.State == "online" && s.Frames > framesBefore+20
	})
}
