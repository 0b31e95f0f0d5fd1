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
}

func newPicture() *picture { return &picture{mat: gocv.NewMat(), video: videoLevels()} }

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

// close releases the picture's Mat.
func (p *picture) close() { p.mat.Close() }

// videoReader is what a decoder reads from: OpenCV's capture, or an
// avFile.
type videoReader interface {
	read(p *picture) bool
	get(prop gocv.VideoCaptureProperties) float64
	Close()
}

// read is Read into p's Mat.
func (c *capture) read(p *picture) bool {
	p.luma = false
	return c.Read(&p.mat)
}

// get is Get.
func (c *capture) get(prop gocv.VideoCaptureProperties) float64 { return c.Get(prop) }
