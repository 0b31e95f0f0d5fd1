package stream

import (
	"image"
	"sync"
	"time"
)

// Defaults of a Thumbnailer.
const (
	// DefaultThumbSide bounds a thumbnail's longer side: enough to see
	// where the region of interest lies, small enough to copy once a
	// second on a board.
	DefaultThumbSide = 160
	// DefaultThumbInterval is the least time between two thumbnails.
	DefaultThumbInterval = time.Second
)

// Thumbnail is a small grayscale copy of a whole source frame, before the
// region of interest is cut out of it.
type Thumbnail struct {
	// W and H are the thumbnail's size; Pix holds W·H gray levels, row-major.
	W, H int
	Pix  []byte
	// SrcW and SrcH are the size of the source frame it was made from, the
	// coordinate system of Preprocess.ROI.
	SrcW, SrcH int
	// Taken is the wall-clock time it was made.
	Taken time.Time
}

// Thumbnailer keeps the latest Thumbnail of the frames a Preprocess sees
// (set Preprocess.Thumb), at most one per Interval, so an operator can see
// the whole camera picture and where the region of interest lies in it
// although the estimator only ever gets the cropped, resized frame. It is
// safe for concurrent use; a nil *Thumbnailer does nothing.
type Thumbnailer struct {
	// MaxSide bounds the thumbnail's longer side (0: DefaultThumbSide); a
	// smaller frame is kept at its size.
	MaxSide int
	// Interval is the least time between two thumbnails (0:
	// DefaultThumbInterval). Frames in between cost one clock read.
	Interval time.Duration

	mu   sync.Mutex
	next time.Time // no thumbnail before this
	last *Thumbnail
}

// Latest returns the newest thumbnail, or false if none was made yet. The
// returned Pix is never modified afterwards.
func (t *Thumbnailer) Latest() (Thumbnail, bool) {
	if t == nil {
		return Thumbnail{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.last == nil {
		return Thumbnail{}, false
	}
	return *t.last, true
}

// due reports whether a thumbnail should be made now and, if so, reserves
// the slot, so that only one of several concurrent frames does the work.
func (t *Thumbnailer) due(now time.Time) bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if now.Before(t.next) {
		return false
	}
	iv := t.Interval
	if iv <= 0 {
		iv = DefaultThumbInterval
	}
	t.next = now.Add(iv)
	return true
}

// size is the thumbnail size of a w×h frame: the longer side at most
// MaxSide, the aspect ratio kept, never enlarged.
func (t *Thumbnailer) size(w, h int) (int, int) {
	side := t.MaxSide
	if side <= 0 {
		side = DefaultThumbSide
	}
	if w <= side && h <= side {
		return w, h
	}
	if w >= h {
		return side, max(1, (h*side+w/2)/w)
	}
	return max(1, (w*side+h/2)/h), side
}

// store keeps a finished thumbnail.
func (t *Thumbnailer) store(th Thumbnail) {
	t.mu.Lock()
	t.last = &th
	t.mu.Unlock()
}

// offerGray makes a thumbnail of img, its pixels mapped by lv (nil: as
// they are), if one is due. img must have passed ApplyGray's bounds
// checks.
func (t *Thumbnailer) offerGray(img *image.Gray, lv *levels) {
	now := time.Now()
	if !t.due(now) {
		return
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	tw, th := t.size(w, h)
	pix := boxDown(img, tw, th, lv)
	t.store(Thumbnail{W: tw, H: th, Pix: pix, SrcW: w, SrcH: h, Taken: now})
}

// boxDown shrinks img to tw×th (tw ≤ width, th ≤ height) by averaging the
// block of source pixels under each output pixel: blocks of uneven size
// where the factor is not an integer, which a thumbnail does not mind.
func boxDown(img *image.Gray, tw, th int, lv *levels) []byte {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	out := make([]byte, tw*th)
	for oy := range th {
		y0, y1 := oy*h/th, max((oy+1)*h/th, oy*h/th+1)
		for ox := range tw {
			x0, x1 := ox*w/tw, max((ox+1)*w/tw, ox*w/tw+1)
			sum, n := 0, 0
			for y := y0; y < y1; y++ {
				row := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):]
				for _, v := range row[x0:x1] {
					if lv != nil {
						v = lv[v]
					}
					sum += int(v)
				}
				n += x1 - x0
			}
			out[oy*tw+ox] = byte((sum + n/2) / n)
		}
	}
	return out
}
