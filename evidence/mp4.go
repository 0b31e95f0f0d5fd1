package evidence

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/mp4"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/pmp4"
	"github.com/pion/webrtc/v4"
)

// writeMP4 writes an H.264 or H.265 clip as an MP4 file (progressive: one
// moov, then the samples), the pictures as the camera coded them. The
// parameter sets go in the sample entry (the first of the clip's, in
// band or from the session description); in-band parameter sets and
// access unit delimiters are left out of the samples, which an 'avc1'
// or 'hvc1' entry requires. Times are the RTP timestamps (90 kHz), and
// an edit list starts the presentation at the first picture shown.
func (c Clip) writeMP4(w io.Writer) error {
	h265 := strings.EqualFold(c.Codec, webrtc.MimeTypeH265)
	var vps, sps, pps []byte
	samples := make([]*pmp4.Sample, len(c.Units))
	dts := c.decodeTimes()
	frame := frameTicks(dts)
	for i, u := range c.Units {
		var nalus h264.AnnexB
		if err := nalus.Unmarshal(u.Data); err != nil {
			return fmt.Errorf("evidence: access unit %d: %w", i, err)
		}
		if i == 0 && len(u.Params) > 0 {
			var params h264.AnnexB
			if err := params.Unmarshal(u.Params); err == nil {
				nalus = append(append(h264.AnnexB{}, params...), nalus...)
			}
		}
		kept := nalus[:0:0]
		for _, n := range nalus {
			if len(n) == 0 {
				continue
			}
			switch kind := paramKind(n, h265); kind {
			case "vps":
				if vps == nil {
					vps = n
				}
			case "sps":
				if sps == nil {
					sps = n
				}
			case "pps":
				if pps == nil {
					pps = n
				}
			case "aud":
			default:
				kept = append(kept, n)
			}
		}
		payload, err := h264.AVCC(kept).Marshal()
		if err != nil {
			return fmt.Errorf("evidence: access unit %d: %w", i, err)
		}
		d := frame
		if i+1 < len(dts) {
			d = dts[i+1] - dts[i]
		}
		if d > math.MaxUint32 || u.PTS-dts[i] > math.MaxInt32 {
			return fmt.Errorf("evidence: access unit %d: time out of range", i)
		}
		samples[i] = &pmp4.Sample{
			Duration: uint32(d), PTSOffset: int32(u.PTS - dts[i]), IsNonSyncSample: !u.Key,
			PayloadSize: uint32(len(payload)), GetPayload: func() ([]byte, error) { return payload, nil },
		}
	}
	if sps == nil || pps == nil || (h265 && vps == nil) {
		return errors.New("evidence: the clip carries no parameter sets")
	}
	var codec mp4.Codec = &mp4.CodecH264{SPS: sps, PPS: pps}
	if h265 {
		codec = &mp4.CodecH265{VPS: vps, SPS: sps, PPS: pps}
	}
	// The edit list: media time of the first picture shown (its
	// presentation time from the first decoding time).
	start := c.Units[c.shown()].PTS - dts[0]
	if start < 0 || start > math.MaxInt32 {
		start = 0
	}
	p := pmp4.Presentation{Tracks: []*pmp4.Track{{ID: 1, TimeScale: 90000, TimeOffset: -int32(start), Codec: codec, Samples: samples}}}
	if err := p.Marshal(w); err != nil {
		return fmt.Errorf("evidence: mp4: %w", err)
	}
	return nil
}

// naluType is a NAL unit's type.
func naluType(n []byte, h265 bool) int {
	if h265 {
		return int(n[0]>>1) & 0x3f
	}
	return int(n[0]) & 0x1f
}

// paramKind names a parameter set or delimiter NAL unit ("vps", "sps",
// "pps", "aud"); "" for the rest.
func paramKind(n []byte, h265 bool) string {
	t := naluType(n, h265)
	if h265 {
		switch t {
		case 32:
			return "vps"
		case 33:
			return "sps"
		case 34:
			return "pps"
		case 35:
			return "aud"
		}
		return ""
	}
	switch t {
	case 7:
		return "sps"
	case 8:
		return "pps"
	case 9:
		return "aud"
	}
	return ""
}
