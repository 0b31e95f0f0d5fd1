//go:build !nocv

package stream

import (
	"context"
	"os"
	"testing"
)

// BenchmarkReadFile is `physd estimate`'s reading of a long window: the
// 8 s segment of ../shared/realvid/springWars.mp4 (640×480, 30 fps
// H.264) that make real certifies, its 640×60 region resized to about
// 64² pixels.
func BenchmarkReadFile(b *testing.B) {
	const path = "../../shared/realvid/springWars.mp4"
	if _, err := os.Stat(path); err != nil {
		b.Skipf("%s: %v", path, err)
	}
	opt := FileOptions{Preprocess: Preprocess{ROI: ROI{X: 0, Y: 330, W: 640, H: 60}, Size: 64}, From: 1.667, To: 9.667}
	b.ReportAllocs()
	for b.Loop() {
		frames, _, err := ReadFile(context.Background(), path, opt)
		if err != nil || len(frames) != 240 {
			b.Fatalf("%d frames, %v", len(frames), err)
		}
	}
}
