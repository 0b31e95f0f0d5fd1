//go:build !nocv

package stream

import (
	"image"
	"time"

	"gocv.io/x/gocv"
)

// offerMat makes a thumbnail of src (8-bit gray, BGR or BGRA) if one is
// due; other image types are ignored (Apply refuses them anyway).
func (t *Thumbnailer) offerMat(src gocv.Mat) {
	now := time.Now()
	if src.Empty() || !t.due(now) {
		return
	}
	code, convert, ok := grayConversion(src.Type())
	if !ok {
		return
	}
	w, h := src.Cols(), src.Rows()
	tw, th := t.size(w, h)
	gray := src
	if convert {
		gray = gocv.NewMat()
		defer gray.Close()
		gocv.CvtColor(src, &gray, code)
	}
	small := gocv.NewMat()
	defer small.Close()
	gocv.Resize(gray, &small, image.Pt(tw, th), 0, 0, gocv.InterpolationArea)
	pix := small.ToBytes() // a copy: the Mat is freed on return
	if len(pix) != tw*th {
		return
	}
	t.store(Thumbnail{W: tw, H: th, Pix: pix, SrcW: w, SrcH: h, Taken: now})
}
