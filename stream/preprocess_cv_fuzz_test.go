//go:build !nocv

package stream

import (
	"image"

	"gocv.io/x/gocv"
)

// With OpenCV, FuzzPreprocess also runs Apply on each image and compares.
func init() {
	fuzzApplyCV = func(p Preprocess, img *image.Gray) (Frame, error) {
		b := img.Bounds()
		w, h := b.Dx(), b.Dy()
		buf := make([]byte, 0, w*h)
		for y := range h {
			off := img.PixOffset(b.Min.X, b.Min.Y+y)
			buf = append(buf, img.Pix[off:off+w]...)
		}
		m, err := gocv.NewMatFromBytes(h, w, gocv.MatTypeCV8UC1, buf)
		if err != nil {
			return Frame{}, err
		}
		defer m.Close()
		p.Thumb = nil
		return p.Apply(m)
	}
}
