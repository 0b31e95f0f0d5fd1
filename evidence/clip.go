package evidence

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/physd/physd/stream"
)

// ErrCodec is returned (wrapped) for a clip whose codec has no container
// here.
var ErrCodec = errors.New("evidence: no container for the codec")

// Clip is the access units of an alert's video: Units in decoding order
// from a key picture, of which those that arrived in [From, To] are
// presented.
type Clip struct {
	Codec    string
	From, To time.Time
	Units    []stream.AccessUnit
}

// Ext is the file extension of the clip's container: ".mp4" (H.264,
// H.265) or ".ivf" (VP8); "" for a codec without one.
func (c Clip) Ext() string {
	switch strings.ToLower(c.Codec) {
	case strings.ToLower(webrtc.MimeTypeH264), strings.ToLower(webrtc.MimeTypeH265):
		return ".mp4"
	case strings.ToLower(webrtc.MimeTypeVP8):
		return ".ivf"
	}
	return ""
}

// Write writes the clip in its container (Ext) to w.
func (c Clip) Write(w io.Writer) error {
	if len(c.Units) == 0 {
		return errors.New("evidence: an empty clip")
	}
	switch c.Ext() {
	case ".mp4":
		return c.writeMP4(w)
	case ".ivf":
		return c.writeIVF(w)
	}
	return fmt.Errorf("%s: %w", c.Codec, ErrCodec)
}

// shown is the index of the first unit presented: the first that arrived
// at or after From (the units before it are the pictures it decodes
// from).
func (c Clip) shown() int {
	for i, u := range c.Units {
		if !u.Wall.Before(c.From) {
			return i
		}
	}
	return len(c.Units) - 1
}

// Span is the presentation's start and end: the arrival of the first
// unit shown and of the last, plus one frame interval.
func (c Clip) Span() (start, end time.Time) {
	if len(c.Units) == 0 {
		return
	}
	d := frameTicks(c.decodeTimes())
	return c.Units[c.shown()].Wall, c.Units[len(c.Units)-1].Wall.Add(time.Duration(d) * time.Second / stream.ClockRate)
}

// decodeTimes are the units' decoding times, in 90 kHz ticks from the
// first: the units arrive in decoding order and carry presentation
// times, so the i-th decoding time is the i-th smallest presentation
// time, less the largest amount by which that would come after a unit's
// own presentation time (the reordering delay; 0 without B-frames):
//
//	DTS_i = sort(PTS)_i − D,  D = max(0, max_i sort(PTS)_i − PTS_i),
//
// which keeps DTS increasing and never after PTS.
func (c Clip) decodeTimes() []int64 {
	pts := make([]int64, len(c.Units))
	for i, u := range c.Units {
		pts[i] = u.PTS
	}
	sorted := slices.Clone(pts)
	slices.Sort(sorted)
	var d int64
	for i := range sorted {
		d = max(d, sorted[i]-pts[i])
	}
	for i := range sorted {
		sorted[i] -= d
	}
	return sorted
}

// frameTicks is the median interval of the decoding times dts in 90 kHz
// ticks (3000, 30 fps, when it cannot tell).
func frameTicks(dts []int64) int64 {
	var steps []int64
	for i := 1; i < len(dts); i++ {
		if s := dts[i] - dts[i-1]; s > 0 {
			steps = append(steps, s)
		}
	}
	if len(steps) == 0 {
		return stream.ClockRate / 30
	}
	slices.Sort(steps)
	return steps[len(steps)/2]
}
