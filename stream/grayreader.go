package stream

import "image"

// GrayReader preprocesses a sequence of gray pictures with one Preprocess
// (ApplyGray's result, frame for frame), keeping its working memory — the
// full-size float copy of the region, the resize's tables, the block new
// frames' pixels are cut from — from one picture to the next. A zone reads
// each of its camera's frames this way: ApplyGray alone allocates all of
// them for every frame. Not safe for concurrent use; one reader per
// goroutine.
type GrayReader struct {
	pre Preprocess
	s   grayScratch
}

// NewGrayReader returns a reader that applies p.
func NewGrayReader(p Preprocess) *GrayReader { return &GrayReader{pre: p} }

// Apply preprocesses img as p.ApplyGray(img) does.
func (r *GrayReader) Apply(img *image.Gray) (Frame, error) { return r.pre.applyGray(img, &r.s) }
