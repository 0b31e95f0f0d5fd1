//go:build !nocv

package stream

import (
	"image"
	"image/draw"
	"testing"
	"time"

	"gocv.io/x/gocv"
)

// TestThumbnailerApply: OpenCV's Apply offers BGR, BGRA and gray frames
// whole; the thumbnail is gray and matches the pure-Go one closely.
func TestThumbnailerApply(t *testing.T) {
	// A plain image: ImageGrayToMatGray ignores a bounds offset.
	sub := gradient(640, 480)
	img := image.NewGray(image.Rect(0, 0, 640, 480))
	draw.Draw(img, img.Rect, sub, sub.Rect.Min, draw.Src)
	gray, err := gocv.ImageGrayToMatGray(img)
	if err != nil {
		t.Fatal(err)
	}
	defer gray.Close()
	bgr, bgra := gocv.NewMat(), gocv.NewMat()
	defer bgr.Close()
	defer bgra.Close()
	gocv.CvtColor(gray, &bgr, gocv.ColorGrayToBGR)
	gocv.CvtColor(gray, &bgra, gocv.ColorGrayToBGRA)
	ref := &Thumbnailer{}
	ref.offerGray(img, nil)
	want, _ := ref.Latest()
	for name, m := range map[string]gocv.Mat{"gray": gray, "bgr": bgr, "bgra": bgra} {
		th := &Thumbnailer{Interval: time.Hour}
		p := Preprocess{ROI: ROI{X: 10, Y: 10, W: 300, H: 300}, Size: 32, Thumb: th}
		if _, err := p.Apply(m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, ok := th.Latest()
		if !ok || got.W != want.W || got.H != want.H || got.SrcW != 640 || got.SrcH != 480 {
			t.Fatalf("%s: thumbnail %d×%d of %d×%d", name, got.W, got.H, got.SrcW, got.SrcH)
		}
		worst := 0
		for i := range got.Pix {
			worst = max(worst, absInt(int(got.Pix[i])-int(want.Pix[i])))
		}
		// An integer factor (4): both are exact block means.
		if worst > 1 {
			t.Errorf("%s: OpenCV and pure-Go thumbnails differ by up to %d levels at %d pixels", name, worst, countOff(got.Pix, want.Pix, 1))
		}
	}
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func countOff(a, b []byte, tol int) int {
	n := 0
	for i := range a {
		if absInt(int(a[i])-int(b[i])) > tol {
			n++
		}
	}
	return n
}
