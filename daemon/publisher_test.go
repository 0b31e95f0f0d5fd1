//go:build !nocv

package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"
	"github.com/pion/webrtc/v4/pkg/media/h264reader"
	"github.com/pion/webrtc/v4/pkg/media/ivfreader"

	"github.com/physd/physd/sim"
)

// encodedClip renders the underdamped pendulum from 50° for seconds at
// 20 fps, 128×128, and encodes it with ffmpeg as a WebRTC publisher would:
// VP8 (libvpx, realtime) or H.264 (x264 constrained baseline, zero
// latency), a key frame every second. It returns the access units.
func encodedClip(ctx context.Context, t *testing.T, codec string, seconds float64) [][]byte {
	t.Helper()
	y4m := pendulumY4M(ctx, t, seconds)
	out := filepath.Join(t.TempDir(), "clip."+codec)
	args := []string{"-hide_banner", "-loglevel", "error", "-y", "-i", y4m}
	switch codec {
	case "vp8":
		args = append(args, "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "1M", "-g", "20", "-f", "ivf", out)
	case "h264":
		args = append(args, "-c:v", "libx264", "-profile:v", "baseline", "-tune", "zerolatency", "-preset", "veryfast", "-crf", "18",
			"-g", "20", "-threads", "1", "-pix_fmt", "yuv420p", "-bsf:v", "h264_mp4toannexb", "-f", "h264", out)
	}
	if b, err := exec.CommandContext(ctx, "ffmpeg", args...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var aus [][]byte
	switch codec {
	case "vp8":
		r, _, err := ivfreader.NewWith(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for {
			f, _, err := r.ParseNextFrame()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			aus = append(aus, f)
		}
	case "h264":
		r, err := h264reader.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var au []byte
		for {
			nal, err := r.NextNAL()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			au = append(au, 0, 0, 0, 1)
			au = append(au, nal.Data...)
			// x264 writes one slice per picture: a picture's slice ends it.
			if nal.UnitType == h264reader.NalUnitTypeCodedSliceNonIdr || nal.UnitType == h264reader.NalUnitTypeCodedSliceIdr {
				aus = append(aus, au)
				au = nil
			}
		}
	}
	if len(aus) < int(seconds*20)-1 {
		t.Fatalf("%s: %d access units for %.0f s at 20 fps", codec, len(aus), seconds)
	}
	return aus
}

// pendulumY4M writes the underdamped pendulum released from 50°, 20 fps,
// 128×128, as a y4m: what the test cameras and publishers show.
func pendulumY4M(ctx context.Context, t *testing.T, seconds float64) string {
	t.Helper()
	g1, g0 := sim.GroundTruth(sim.RegimeUnderdamped)
	fs, _, err := sim.Render(ctx, sim.Scene{System: sim.SystemPendulum, Gamma1: g1, Gamma0: g0, Z0: 50, Duration: seconds, FPS: 20, Size: 128, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	y4m := filepath.Join(t.TempDir(), "pendulum.y4m")
	if err := sim.WriteY4M(y4m, fs, 20); err != nil {
		t.Fatal(err)
	}
	return y4m
}

// loopbackAPI is a pion stack for test publishers: loopback only.
func loopbackAPI(t *testing.T, register func(*webrtc.MediaEngine) error) *webrtc.API {
	t.Helper()
	me := &webrtc.MediaEngine{}
	if err := register(me); err != nil {
		t.Fatal(err)
	}
	var se webrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetInterfaceFilter(func(n string) bool { return n == "lo" })
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	return webrtc.NewAPI(webrtc.WithMediaEngine(me), webrtc.WithSettingEngine(se))
}

// codecOnly registers a single video codec.
func codecOnly(mime, fmtp string) func(*webrtc.MediaEngine) error {
	return func(me *webrtc.MediaEngine) error {
		return me.RegisterCodec(webrtc.RTPCodecParameters{
			RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: mime, ClockRate: 90000, SDPFmtpLine: fmtp},
			PayloadType:        96}, webrtc.RTPCodecTypeVideo)
	}
}

// whipPublisher is a WHIP client built on pion, like OBS or a browser.
type whipPublisher struct {
	pc       *webrtc.PeerConnection
	track    *webrtc.TrackLocalStaticSample
	resource string
	token    string
	base     string
}

// offerFor returns a complete offer (candidates gathered) from a peer
// connection with one sending track of kind.
func offerFor(t *testing.T, api *webrtc.API, kind webrtc.RTPCodecType, mime string) (*webrtc.PeerConnection, *webrtc.TrackLocalStaticSample, string) {
	t.Helper()
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	track, err := webrtc.NewTrackLocalStaticSample(webrtc.RTPCodecCapability{MimeType: mime}, "video", "physd-test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.AddTransceiverFromTrack(track, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendonly}); err != nil {
		t.Fatal(err)
	}
	_ = kind
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gathered:
	case <-time.After(5 * time.Second):
		t.Fatal("ICE gathering did not complete")
	}
	return pc, track, pc.LocalDescription().SDP
}

// whipPost posts an offer and returns the status, the body and the
// Location.
func whipPost(t *testing.T, url, token, contentType, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Location")
}

// startPublisher negotiates a WHIP session for one video track.
func startPublisher(t *testing.T, base, camera, token, mime string) *whipPublisher {
	t.Helper()
	api := loopbackAPI(t, func(me *webrtc.MediaEngine) error { return me.RegisterDefaultCodecs() })
	pc, track, offer := offerFor(t, api, webrtc.RTPCodecTypeVideo, mime)
	code, body, loc := whipPost(t, base+"/whip/"+camera, token, "application/sdp", offer)
	if code != http.StatusCreated {
		t.Fatalf("WHIP POST: %d %s", code, body)
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: body}); err != nil {
		t.Fatal(err)
	}
	return &whipPublisher{pc: pc, track: track, resource: loc, token: token, base: base}
}

// send writes the access units at 20 fps in real time, looping, until ctx
// ends or the connection fails.
func (p *whipPublisher) send(ctx context.Context, aus [][]byte) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if err := p.track.WriteSample(media.Sample{Data: aus[i%len(aus)], Duration: 50 * time.Millisecond}); err != nil {
			return fmt.Errorf("write sample: %w", err)
		}
		if s := p.pc.ConnectionState(); s == webrtc.PeerConnectionStateFailed || s == webrtc.PeerConnectionStateClosed {
			return fmt.Errorf("publisher connection %s", s)
		}
	}
}

// delete ends the session and returns the status.
func (p *whipPublisher) delete(t *testing.T) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, p.base+p.resource, nil)
	req.Header.Set("Authorization", "Bearer "+p.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
