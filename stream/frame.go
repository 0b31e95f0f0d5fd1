package stream

import "time"

// Frame is one preprocessed frame.
type Frame struct {
	// Seq is the frame's index in the source, from 0. For files it counts
	// every frame decoded since the start, including those before From.
	Seq int
	// Time is the presentation time from the container, not the time of
	// arrival or decoding. With FileOptions.FPS set it is Seq/FPS.
	Time time.Duration
	// W and H are the frame's size in pixels after preprocessing.
	W, H int
	// Pix holds the gray levels in [0,1], row-major, len W*H.
	Pix []float64
}
