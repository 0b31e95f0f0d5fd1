package stream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"
)

// Errors of the WebRTC sources (WHIP and WHEP), for errors.Is. The WHIP
// HTTP handler maps them to status codes.
var (
	// ErrBadOffer reports an SDP offer or answer that does not parse.
	ErrBadOffer = errors.New("malformed SDP")
	// ErrNoVideo reports an offer without a video section physd can receive.
	ErrNoVideo = errors.New("no video to receive")
	// ErrBusy reports a second publisher for a camera that does not let a
	// new publisher replace the current one.
	ErrBusy = errors.New("camera already has a publisher")
	// ErrNoSession reports a WHIP session that does not exist (any more).
	ErrNoSession = errors.New("no such session")
)

// ICEOptions restricts where WebRTC media may flow: the interfaces and
// addresses ICE gathers candidates on, and optionally one shared UDP port.
// The zero value lets ICE use every interface except loopback, on
// ephemeral ports.
type ICEOptions struct {
	// Interfaces are the network interfaces ICE may use ("eth0", "wlan0",
	// "lo"); empty allows all.
	Interfaces []string
	// Addresses are the local addresses or prefixes ICE may use
	// ("192.168.1.0/24", "127.0.0.1"); empty allows all.
	Addresses []netip.Prefix
	// UDPPort, when > 0, carries every session's media on this one UDP
	// port (ICE multiplexing): one firewall rule for any number of
	// publishers.
	UDPPort int
	// Timeout is how long a connection may lose ICE connectivity before
	// it counts as failed (default 10 s).
	Timeout time.Duration
}

// loopback reports whether the options name loopback explicitly: ICE then
// offers loopback candidates, which pion leaves out by default.
func (o ICEOptions) loopback() bool {
	for _, n := range o.Interfaces {
		if n == "lo" {
			return true
		}
	}
	for _, p := range o.Addresses {
		if p.Addr().IsLoopback() {
			return true
		}
	}
	return false
}

func (o ICEOptions) keepInterface(name string) bool {
	if len(o.Interfaces) == 0 {
		return true
	}
	for _, n := range o.Interfaces {
		if n == name {
			return true
		}
	}
	return false
}

func (o ICEOptions) keepIP(ip net.IP) bool {
	if len(o.Addresses) == 0 {
		return true
	}
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return false
	}
	a = a.Unmap()
	for _, p := range o.Addresses {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// WebRTC is the shared WebRTC stack of a process: codecs, interceptors
// (NACK, RTCP reports) and the ICE restrictions. One value serves every
// WHIP and WHEP source; Close releases the shared UDP port.
type WebRTC struct {
	api *webrtc.API
	mux ice.UDPMux
}

// NewWebRTC builds the stack. It fails if the shared UDP port cannot be
// bound.
func NewWebRTC(o ICEOptions) (*WebRTC, error) {
	me := &webrtc.MediaEngine{}
	if err := registerVideoCodecs(me); err != nil {
		return nil, err
	}
	ir := &interceptor.Registry{}
	if err := webrtc.RegisterDefaultInterceptors(me, ir); err != nil {
		return nil, fmt.Errorf("webrtc: interceptors: %w", err)
	}
	var se webrtc.SettingEngine
	se.SetInterfaceFilter(o.keepInterface)
	se.SetIPFilter(o.keepIP)
	se.SetIncludeLoopbackCandidate(o.loopback())
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4, webrtc.NetworkTypeUDP6})
	failed := o.Timeout
	if failed <= 0 {
		failed = 10 * time.Second
	}
	se.SetICETimeouts(failed/2, failed, 2*time.Second)
	w := &WebRTC{}
	if o.UDPPort > 0 {
		opts := []ice.UDPMuxFromPortOption{ice.UDPMuxFromPortWithInterfaceFilter(o.keepInterface), ice.UDPMuxFromPortWithIPFilter(o.keepIP)}
		if o.loopback() {
			opts = append(opts, ice.UDPMuxFromPortWithLoopback())
		}
		mux, err := ice.NewMultiUDPMuxFromPort(o.UDPPort, opts...)
		if err != nil {
			return nil, fmt.Errorf("webrtc: UDP port %d: %w", o.UDPPort, err)
		}
		se.SetICEUDPMux(mux)
		w.mux = mux
	}
	w.api = webrtc.NewAPI(webrtc.WithMediaEngine(me), webrtc.WithInterceptorRegistry(ir), webrtc.WithSettingEngine(se))
	return w, nil
}

// Close releases the shared UDP port; sessions must be closed first.
func (w *WebRTC) Close() error {
	if w.mux != nil {
		return w.mux.Close()
	}
	return nil
}

// videoCodecs are the codecs physd receives, in its order of preference:
// VP8 first because every browser sends it and it costs less to decode;
// H.264 in the profiles browsers, OBS and GStreamer send.
func videoCodecs() []webrtc.RTPCodecParameters {
	fb := []webrtc.RTCPFeedback{{Type: "nack"}, {Type: "nack", Parameter: "pli"}, {Type: "ccm", Parameter: "fir"}, {Type: "goog-remb"}}
	c := []webrtc.RTPCodecParameters{{
		RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeVP8, ClockRate: 90000, RTCPFeedback: fb},
		PayloadType:        96,
	}}
	pt := webrtc.PayloadType(102)
	for _, profile := range []string{"42e01f", "42001f", "4d001f", "640032"} {
		c = append(c, webrtc.RTPCodecParameters{
			RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeH264, ClockRate: 90000,
				SDPFmtpLine:  "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=" + profile,
				RTCPFeedback: fb},
			PayloadType: pt,
		})
		pt++
	}
	return c
}

func registerVideoCodecs(me *webrtc.MediaEngine) error {
	for _, c := range videoCodecs() {
		if err := me.RegisterCodec(c, webrtc.RTPCodecTypeVideo); err != nil {
			return fmt.Errorf("webrtc: codec %s: %w", c.MimeType, err)
		}
	}
	// Opus is accepted and discarded: publishers such as OBS always send
	// audio, and some refuse an answer that declines it.
	opus := webrtc.RTPCodecParameters{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus,
		ClockRate: 48000, Channels: 2, SDPFmtpLine: "minptime=10;useinbandfec=1"}, PayloadType: 111}
	if err := me.RegisterCodec(opus, webrtc.RTPCodecTypeAudio); err != nil {
		return fmt.Errorf("webrtc: codec %s: %w", opus.MimeType, err)
	}
	return nil
}

// newReceiver opens a peer connection that receives one video track:
// the first video track arrives on the returned channel, other tracks
// (audio, a second video) are read and dropped. onState, if not nil,
// sees the connection's state changes.
func (w *WebRTC) newReceiver(onState func(webrtc.PeerConnectionState)) (*webrtc.PeerConnection, <-chan *webrtc.TrackRemote, error) {
	pc, err := w.api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, nil, err
	}
	if _, err := pc.AddTransceiverFromKind(webrtc.RTPCodecTypeVideo, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionRecvonly}); err != nil {
		_ = pc.Close()
		return nil, nil, err
	}
	tracks := make(chan *webrtc.TrackRemote, 1)
	pc.OnTrack(func(t *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		if t.Kind() == webrtc.RTPCodecTypeVideo {
			select {
			case tracks <- t:
				return
			default: // a second video track: physd watches one
			}
		}
		go discard(t)
	})
	if onState != nil {
		pc.OnConnectionStateChange(onState)
	}
	return pc, tracks, nil
}

// setLocal sets the local description and waits, bounded by
// gatherTimeout, for ICE gathering, so the description carries physd's
// candidates (no trickle needed).
func setLocal(ctx context.Context, pc *webrtc.PeerConnection, d webrtc.SessionDescription) error {
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(d); err != nil {
		return err
	}
	select {
	case <-gathered:
	case <-time.After(gatherTimeout):
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// discard reads and drops a track physd does not use (audio), so its
// packets do not pile up in pion's buffers.
func discard(t *webrtc.TrackRemote) {
	buf := make([]byte, 1500)
	for {
		if _, _, err := t.Read(buf); err != nil {
			return
		}
	}
}

// checkOffer parses a remote SDP and checks it offers video physd can
// receive, before any WebRTC state is created: a malformed offer wraps
// ErrBadOffer, one without a usable video section ErrNoVideo, and one
// whose video codecs are all unsupported ErrUnsupportedCodec; the errors
// name what was offered.
func checkOffer(raw string) error {
	var s sdp.SessionDescription
	if err := s.UnmarshalString(raw); err != nil {
		return fmt.Errorf("%w: %w", ErrBadOffer, err)
	}
	var offered []string
	video := false
	for _, m := range s.MediaDescriptions {
		if m.MediaName.Media != "video" || m.MediaName.Port.Value == 0 {
			continue
		}
		if _, recvonly := m.Attribute("recvonly"); recvonly {
			continue
		}
		if _, inactive := m.Attribute("inactive"); inactive {
			continue
		}
		video = true
		for _, a := range m.Attributes {
			if a.Key != "rtpmap" {
				continue
			}
			_, enc, _ := strings.Cut(a.Value, " ")
			name, _, _ := strings.Cut(enc, "/")
			switch strings.ToUpper(name) {
			case "VP8", "H264":
				return nil
			case "RTX", "RED", "ULPFEC", "FLEXFEC-03":
				continue
			}
			offered = append(offered, name)
		}
	}
	if !video {
		return fmt.Errorf("%w: the offer has no video section that sends (audio-only, recvonly or rejected)", ErrNoVideo)
	}
	if len(offered) == 0 {
		return fmt.Errorf("%w: the video section lists no codec", ErrUnsupportedCodec)
	}
	return fmt.Errorf("%w: offered %s; physd decodes VP8 and H264", ErrUnsupportedCodec, strings.Join(offered, ", "))
}
