package stream

import "time"

// AccessUnit is one compressed picture as the camera sent it, before
// decoding: what an alert's evidence clip is cut from without a
// re-encode (package evidence). A source hands them to its Tap
// (RTSPOptions, WHIPOptions, WHEPOptions) as it decodes them; only
// access units the decoder accepted are handed on, so a clip never holds
// the damaged pictures physd itself skipped.
type AccessUnit struct {
	// Codec is the stream's MIME type (webrtc.MimeTypeH264, …H265, …VP8).
	Codec string
	// Data is the picture: Annex-B NAL units for H.264 and H.265, the
	// frame for VP8. It is the receiver's to keep.
	Data []byte
	// Params are the parameter sets the session description carried
	// (RTSP's sprop-parameter-sets, Annex-B: SPS and PPS, VPS first for
	// H.265), for streams that send them only there; nil otherwise.
	Params []byte
	// PTS is the picture's presentation time on the sender's clock, in
	// 1/90000 s from the session's first access unit (RTP timestamps,
	// unwrapped).
	PTS int64
	// Key reports a picture that decodes on its own (an IDR, a VP8 key
	// frame): a clip starts at one.
	Key bool
	// Wall is when it arrived.
	Wall time.Time
	// Session counts the source's sessions (reconnections): the RTP
	// clock and the parameter sets start again with each.
	Session int64
}

// ClockRate is the RTP clock of video, the unit of AccessUnit.PTS.
const ClockRate = 90000
