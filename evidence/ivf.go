package evidence

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/physd/physd/stream"
)

// writeIVF writes a VP8 clip as IVF (the container libvpx's tools and
// FFmpeg read): a 32-byte header, then each frame's size, its time from
// the clip's first picture and its data. The time base is the clip's
// frame interval (FFmpeg reads the header's frame count as the duration
// in it). IVF has no
// edit list: the clip is shown from its first key picture, up to a group
// of pictures before From (Span says where the presentation starts).
func (c Clip) writeIVF(w io.Writer) error {
	var width, height uint16
	if d := c.Units[0].Data; len(d) >= 10 && d[3] == 0x9d && d[4] == 0x01 && d[5] == 0x2a {
		width = binary.LittleEndian.Uint16(d[6:8]) & 0x3fff
		height = binary.LittleEndian.Uint16(d[8:10]) & 0x3fff
	}
	h := make([]byte, 32)
	copy(h, "DKIF")
	binary.LittleEndian.PutUint16(h[4:], 0)  // version
	binary.LittleEndian.PutUint16(h[6:], 32) // header size
	copy(h[8:], "VP80")
	binary.LittleEndian.PutUint16(h[12:], width)
	binary.LittleEndian.PutUint16(h[14:], height)
	frame := frameTicks(c.decodeTimes())
	t0 := c.Units[0].PTS
	tick := func(pts int64) uint64 { return uint64((pts - t0 + frame/2) / frame) }
	binary.LittleEndian.PutUint32(h[16:], stream.ClockRate) // time base: frame/90000 s
	binary.LittleEndian.PutUint32(h[20:], uint32(frame))
	binary.LittleEndian.PutUint32(h[24:], uint32(tick(c.Units[len(c.Units)-1].PTS)+1))
	if _, err := w.Write(h); err != nil {
		return fmt.Errorf("evidence: ivf: %w", err)
	}
	fh := make([]byte, 12)
	for _, u := range c.Units {
		binary.LittleEndian.PutUint32(fh, uint32(len(u.Data)))
		binary.LittleEndian.PutUint64(fh[4:], tick(u.PTS))
		if _, err := w.Write(fh); err != nil {
			return fmt.Errorf("evidence: ivf: %w", err)
		}
		if _, err := w.Write(u.Data); err != nil {
			return fmt.Errorf("evidence: ivf: %w", err)
		}
	}
	return nil
}
