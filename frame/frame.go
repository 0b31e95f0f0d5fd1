// Package frame holds Frame, one preprocessed video frame, on its own: a
// leaf with no cgo and no third-party imports, so that packages that only
// read frames (window) need not link the decoders of package stream,
// which delivers them (stream.Frame is an alias of Frame).
package frame

import (
	"image"
	"time"
)

// Frame is one preprocessed frame.
type Frame struct {
	// Seq is the frame's index in the source, from 0, increasing by 1 per
	// decoded frame, so a consumer detects dropped frames by a jump in Seq
	// and gaps in the stream by a jump in Time. For files it counts every
	// frame decoded since the start, including those before the
	// segment's start (stream.FileOptions.From); a looping stream.FileSource
	// keeps counting across loops.
	Seq int
	// Time is the presentation time relative to the start of the stream,
	// from the container or the camera, not the time of arrival or
	// decoding. With an FPS override it is Seq/FPS.
	Time time.Duration
	// Wall estimates the wall-clock time at which the frame was captured.
	// For files and the synthetic camera it is the time the source was
	// opened plus Time. For live cameras it follows Time from the arrival
	// of the first frame, clamped so that it is never later than the
	// frame's arrival: Wall − Time is constant except while frames arrive
	// faster than real time (see "Live sources" in package stream's
	// documentation).
	Wall time.Time
	// W and H are the frame's size in pixels after preprocessing.
	W, H int
	// SrcW and SrcH are the decoded picture's size before the crop and the
	// resize (0 when the source does not report it). A change between two
	// frames is a resolution change mid-stream: the same latent no longer
	// describes the same motion, so windows restart.
	SrcW, SrcH int
	// Pix holds the gray levels in [0,1], row-major, len W*H.
	Pix []float64
	// Gray is the whole decoded picture in 8-bit gray with stream.Preprocess.Gray
	// (then Pix is nil), shared by the zones that cut their frames from it:
	// read it, never write it.
	Gray *image.Gray
	// Ref is the patch of stream.Preprocess.Reference, RefW×RefH gray levels in
	// [0,1], row-major; nil without a reference.
	Ref        []float64
	RefW, RefH int
	// Key reports a key frame: an intra-coded picture (an IDR or other I
	// picture, a VP8 key frame), which re-codes every block of the picture
	// afresh. Its difference from the frame before is a step in the
	// codec's quantisation noise, and sometimes in brightness ("keyframe
	// pumping"), over the whole picture: no motion of the scene. Key is
	// the decoder's answer when KeyKnown, the guess when KeyGuessed, and
	// false when neither.
	Key bool
	// KeyKnown reports that the source told the frame's type: files read
	// through libavformat and the RTSP and WebRTC decoders (libavcodec)
	// do; OpenCV's capture (V4L2 cameras, RTSP codecs read through
	// OpenCV, files needing OpenCV's conversion) and the synthetic camera
	// do not. In an intra-only stream (MJPEG, raw video) every frame is a
	// key frame.
	KeyKnown bool
	// KeyGuessed reports a frame of a source that does not tell frame
	// types (KeyKnown false) that looks like a key frame: nearly every
	// block of the picture changed from the frame before, where the
	// frames before changed few, or the whole picture's brightness
	// stepped (see package stream). Key is then true.
	KeyGuessed bool
	// Decode and Preprocess are what decoding the picture and turning it
	// into this frame took, for the daemon's per-stage accounting; 0 when
	// the source does not measure them.
	Decode, Preprocess time.Duration
}
