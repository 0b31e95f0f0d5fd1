package stream

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pion/webrtc/v4"
)

// Errors of the WebRTC video decoder. They are declared here, outside the
// build-tagged files, so that both the libavcodec build and the nocv build
// return the same sentinels.
var (
	// ErrUnsupportedCodec reports a video codec (a MIME type other than
	// VP8, H.264 or H.265) or a picture format (anything but 8-bit luma, e.g.
	// 10-bit H.264) that the WebRTC decoder does not handle.
	ErrUnsupportedCodec = errors.New("unsupported video codec")
	// ErrCorruptFrame reports an access unit that the decoder rejected:
	// corrupt, truncated, empty, or depending on a reference picture that
	// was lost. The decoder stays usable; decoding resumes cleanly at the
	// next key frame.
	ErrCorruptFrame = errors.New("corrupt video frame")
)

// videoCodec identifies a codec that videoDecoder accepts.
type videoCodec int

// The codecs videoDecoder accepts.
const (
	codecVP8 videoCodec = iota + 1
	codecH264
	codecH265
)

// String returns the codec's name as used in error messages.
func (c videoCodec) String() string {
	switch c {
	case codecVP8:
		return "VP8"
	case codecH264:
		return "H.264"
	case codecH265:
		return "H.265"
	}
	return "unknown codec"
}

// parseVideoMime maps a WebRTC MIME type (case-insensitive, as SDP is) to a
// codec, or returns an error wrapping ErrUnsupportedCodec.
func parseVideoMime(mime string) (videoCodec, error) {
	switch {
	case strings.EqualFold(mime, webrtc.MimeTypeVP8):
		return codecVP8, nil
	case strings.EqualFold(mime, webrtc.MimeTypeH264):
		return codecH264, nil
	case strings.EqualFold(mime, webrtc.MimeTypeH265):
		return codecH265, nil
	}
	return 0, fmt.Errorf("stream: video decoder for %q: %w", mime, ErrUnsupportedCodec)
}

// H.264 NAL unit types used by isKeyFrame.
const nalTypeIDR = 5 // coded slice of an IDR picture

// isKeyFrame reports whether an access unit starts a decodable picture,
// that is, whether a decoder that lost its state (or never had one) can
// resume at au:
//
//   - VP8 (RFC 6386 §9.1): the frame tag's inverse key-frame bit (bit 0 of
//     the first byte) is 0, and the 10-byte key-frame header carries the
//     start code 0x9d 0x01 0x2a at bytes 3..5;
//   - H.264 in Annex-B form: au contains an IDR slice (NAL type 5). An SPS
//     or PPS alone does not count: it carries no picture.
//   - H.265 in Annex-B form: au contains a slice of an IRAP picture (NAL
//     types 16..21: BLA, IDR, CRA) of the base layer. A decoder starting at
//     a CRA drops the leading pictures that reference what came before it
//     (RASL), as the standard asks.
//
// Malformed input and unknown MIME types give false.
func isKeyFrame(mime string, au []byte) bool {
	c, err := parseVideoMime(mime)
	return err == nil && c.isKeyFrame(au)
}

// isKeyFrame is isKeyFrame for codec c.
func (c videoCodec) isKeyFrame(au []byte) bool {
	switch c {
	case codecVP8:
		return len(au) >= 10 && au[0]&1 == 0 && au[3] == 0x9d && au[4] == 0x01 && au[5] == 0x2a
	case codecH264:
		found := false
		forEachNAL(au, func(nal []byte) bool {
			// forbidden_zero_bit set means a broken NAL; an IDR slice
			// needs at least one byte of slice header after the NAL
			// header.
			found = len(nal) >= 2 && nal[0]&0x80 == 0 && nal[0]&0x1f == nalTypeIDR
			return !found
		})
		return found
	case codecH265:
		found := false
		forEachNAL(au, func(nal []byte) bool {
			found = len(nal) >= 3 && h265Irap(nal) && h265LayerID(nal) == 0
			return !found
		})
		return found
	}
	return false
}

// forEachNAL calls fn with each NAL unit (header byte onwards, start code
// and trailing zero bytes stripped) of an Annex-B byte stream, until fn
// returns false. Bytes before the first start code are ignored, so input
// without any start code (e.g. AVC length-prefixed NALs) yields nothing.
func forEachNAL(b []byte, fn func(nal []byte) bool) {
	start := -1 // index of the current NAL's first byte
	zeros := 0  // consecutive zero bytes just before i
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == 0:
			zeros++
			continue
		case b[i] == 1 && zeros >= 2:
			if start >= 0 {
				if end := i - zeros; end > start && !fn(b[start:end]) {
					return
				}
			}
			start = i + 1
		}
		zeros = 0
	}
	if start >= 0 {
		// A stream ending in zero bytes ends with trailing_zero_8bits,
		// which belong to no NAL.
		if end := len(b) - zeros; end > start {
			fn(b[start:end])
		}
	}
}

// paramSets returns how many kinds of parameter set a decoder of c needs
// before its first picture: SPS and PPS for H.264; VPS, SPS and PPS for
// H.265; none for VP8.
func (c videoCodec) paramSets() int {
	switch c {
	case codecH264:
		return 2
	case codecH265:
		return 3
	}
	return 0
}

// paramSet returns which of c's parameter sets the NAL unit nal (not
// empty) is, numbered as paramSets counts them in the order given there,
// or -1 when it is none.
func (c videoCodec) paramSet(nal []byte) int {
	switch c {
	case codecH264:
		switch nal[0] & 0x1f {
		case 7:
			return 0
		case 8:
			return 1
		}
	case codecH265:
		switch h265Type(nal) {
		case h265VPS:
			return 0
		case h265SPS:
			return 1
		case h265PPS:
			return 2
		}
	}
	return -1
}

// paramsOnly reports whether an Annex-B access unit of c holds only
// parameter sets and other NAL units that belong with the next picture.
func (c videoCodec) paramsOnly(au []byte) bool {
	switch c {
	case codecH264:
		return h264ParamsOnly(au)
	case codecH265:
		return h265ParamsOnly(au)
	}
	return false
}

// h264ParamsOnly reports whether an Annex-B access unit holds NAL units
// and all of them are parameter sets or other non-picture data that
// belong with the next slice: SEI (6), SPS (7), PPS (8), AUD (9), SPS
// extension (13), subset SPS (15).
func h264ParamsOnly(au []byte) bool {
	n, ok := 0, true
	forEachNAL(au, func(nal []byte) bool {
		n++
		switch nal[0] & 0x1f {
		case 6, 7, 8, 9, 13, 15:
			ok = nal[0]&0x80 == 0 // forbidden_zero_bit
		default:
			ok = false
		}
		return ok
	})
	return n > 0 && ok
}
