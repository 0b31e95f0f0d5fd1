//go:build !nocv

package stream

import (
	"image"

	"gocv.io/x/gocv"
)

// picture is one decoded frame as a decoder hands it on: OpenCV's BGR Mat,
// or a copy of the decoder's luma plane (files read natively).
type picture struct {
	mat   gocv.Mat
	luma  bool        // gray holds the picture, not mat
	gray  *image.Gray // the luma plane, reused from frame to frame
	lv    *levels     // gray's mapping to full-range levels (nil: full range already)
	video *levels     // the video-range mapping, built once
	s     grayScratch // the luma path's working memory
	// key and keyKnown are the picture's frame type as the decoder told
	// it (Frame.Key, Frame.KeyKnown): files read natively know it,
	// OpenCV's capture does not.
	key, keyKnown bool
	// grayMat is mat in 8-bit gray for the key frame guess (lumaRows),
	// reused from frame to frame; empty until needed.
	grayMat gocv.Mat
}

func newPicture() *picture {
	return &picture{mat: gocv.NewMat(), grayMat: gocv.NewMat(), video: videoLevels()}
}

// empty reports whether the read that filled the picture returned no image.
func (p *picture) empty() bool { return !p.luma && p.mat.Empty() }

// apply preprocesses the picture with pre.
func (p *picture) apply(pre Preprocess) (Frame, error) {
	if p.luma {
		p.s.levels = p.lv
		return pre.applyGray(p.gray, &p.s)
	}
	return pre.Apply(p.mat)
}

// lumaRows returns the whole picture in 8-bit gray, h rows of w bytes
// stride apart, valid until the next read into p; ok is false when it
// cannot be had (an image type Apply refuses too).
func (p *picture) lumaRows() (pix []byte, w, h, stride int, ok bool) {
	if p.luma {
		return p.gray.Pix, p.gray.Rect.Dx(), p.gray.Rect.Dy(), p.gray.Stride, true
	}
	code, convert, known := grayConversion(p.mat.Type())
	if !known || p.mat.Empty() {
		return nil, 0, 0, 0, false
	}
	g := p.mat
	if convert {
		gocv.CvtColor(p.mat, &p.grayMat, code)
		g = p.grayMat
	}
	if !g.IsContinuous() {
		return nil, 0, 0, 0, false
	}
	pix, err := g.DataPtrUint8()
	w, h = g.Cols(), g.Rows()
	if err != nil || len(pix) < w*h {
		return nil, 0, 0, 0, false
	}
	return pix, w, h, w, true
}

// close releases the picture's Mats.
func (p *picture) close() {
	p.mat.Close()
	p.grayMat.Close()
}

// videoReader is what a decoder reads from: OpenCV's capture, or an
// avFile.
type videoReader interface {
	read(p *picture) bool
	get(prop gocv.VideoCaptureProperties) float64
	Close()
}

// read is Read into p's Mat.
func (c *capture) read(p *picture) bool {
	p.luma, p.key, p.keyKnown = false, false, false
	return c.Read(&p.mat)
}

// get is Get.
func (c *capture) get(prop gocv.VideoCaptureProperties) float64 { return c.Get(prop) }
