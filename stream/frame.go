package stream

import "time"

// Frame is one preprocessed frame.
type Frame struct {
	// Seq is the frame's index in the source, from 0, increasing by 1 per
	// decoded frame, so a consumer detects dropped frames by a jump in Seq
	// and gaps in the stream by a jump in Time. For files it counts every
	// frame decoded since the start, including those before From; a
	// looping FileSource keeps counting across loops.
	Seq int
	// Time is the presentation time relative to the start of the stream,
	// from the container or the camera, not the time of arrival or
	// decoding. With an FPS override it is Seq/FPS.
	Time time.Duration
	// Wall estimates the wall-clock time at which the frame was captured:
	// for files and the synthetic camera the time the source was opened
	// plus Time; for live cameras the arrival time of the first frame plus
	// Time, so that Wall − Time is constant over one Run.
	Wall time.Time
	// W and H are the frame's size in pixels after preprocessing.
	W, H int
	// Pix holds the gray levels in [0,1], row-major, len W*H.
	Pix []float64
}
