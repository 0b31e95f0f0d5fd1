//go:build !nocv

package stream

import (
	"image"
	"testing"

	"github.com/pion/webrtc/v4"
)

// BenchmarkFramePath is a live camera's steady-state per-frame path as
// the native RTSP and WebRTC readers run it: an H.264 640×480 access unit
// decoded, its luma cropped to a real camera's region (640×60, the
// springWars track the daemon bench measures), mapped from video to full
// range as it is read and resized to the preset's 64² pixels. allocs/op
// is per frame; the one left is the frame's pixels, which the windows
// keep.
func BenchmarkFramePath(b *testing.B) {
	c := decEncode(b, b.TempDir(), decClipSpec{mime: webrtc.MimeTypeH264, size: 480, scale: "640:480", seconds: 3, gop: 20,
		quality: []string{"-b:v", "1M"}})
	pre := Preprocess{ROI: ROI{X: 0, Y: 330, W: 640, H: 60}, Size: 64}
	// fresh is the path without reused buffers (a new picture, crop copy
	// and resize tables every frame), for comparison; reused is the
	// readers'.
	for _, reuse := range []bool{false, true} {
		name := "fresh"
		if reuse {
			name = "reused"
		}
		b.Run(name, func(b *testing.B) {
			d := decMustOpen(b, webrtc.MimeTypeH264)
			d.reuseLuma = reuse
			var gray image.Gray
			lv := videoLevels()
			scratch := &grayScratch{levels: lv}
			// Warm up: the decoder's and the scratch's buffers reach
			// their size.
			for _, au := range c.aus {
				if _, _, _, err := d.decode(au); err != nil {
					b.Fatal(err)
				}
			}
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				w, h, luma, err := d.decode(c.aus[n%len(c.aus)])
				if err != nil || w != 640 {
					b.Fatalf("frame %d: width %d, %v", n%len(c.aus), w, err)
				}
				if !reuse {
					scratch = &grayScratch{levels: lv}
				}
				gray.Pix, gray.Stride, gray.Rect = luma, w, image.Rect(0, 0, w, h)
				f, err := pre.applyGray(&gray, scratch)
				if err != nil || len(f.Pix) == 0 {
					b.Fatalf("frame %d: %v", n, err)
				}
				n++
			}
		})
	}
}
