package stream

// H.265 NAL unit types (ITU-T H.265 Table 7-1) that the decoder treats
// specially.
const (
	h265BLAWLP    = 16 // first IRAP type
	h265CRA       = 21 // last IRAP type in use (22, 23 are reserved IRAP)
	h265VPS       = 32
	h265SPS       = 33
	h265PPS       = 34
	h265AUD       = 35
	h265PrefixSEI = 39
)

// h265Type returns the nal_unit_type of an H.265 NAL unit (its header's
// second to seventh bits); nal must not be empty.
func h265Type(nal []byte) int { return int(nal[0]>>1) & 0x3f }

// h265LayerID returns nuh_layer_id, which is 0 for the base layer; nal
// must hold its two-byte header.
func h265LayerID(nal []byte) int { return int(nal[0]&1)<<5 | int(nal[1]>>3) }

// h265Irap reports whether nal is a slice segment of an IRAP picture, a
// picture a decoder can start at, with forbidden_zero_bit clear.
func h265Irap(nal []byte) bool {
	t := h265Type(nal)
	return nal[0]&0x80 == 0 && t >= h265BLAWLP && t <= h265CRA
}

// h265ParamsOnly reports whether an Annex-B access unit holds NAL units
// and all of them are parameter sets or other non-picture data that
// belong with the next slice: VPS, SPS, PPS, AUD and prefix SEI.
func h265ParamsOnly(au []byte) bool {
	n, ok := 0, true
	forEachNAL(au, func(nal []byte) bool {
		n++
		switch h265Type(nal) {
		case h265VPS, h265SPS, h265PPS, h265AUD, h265PrefixSEI:
			ok = nal[0]&0x80 == 0 && len(nal) >= 2
		default:
			ok = false
		}
		return ok
	})
	return n > 0 && ok
}
