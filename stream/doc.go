// Package stream turns video sources into preprocessed grayscale frames with
// trustworthy frame times. It knows about cameras, containers and decoding,
// and nothing about physics.
//
// ReadFile decodes a video file with OpenCV's FFmpeg backend (gocv). The
// preprocessing (Preprocess) works on any 8-bit gocv.Mat or *image.Gray, so live
// sources can reuse it, and AnalyzeTiming decides from a list of
// presentation times which frame rate the caller should assume.
//
// # Frame times from OpenCV 4.6
//
// Measured with OpenCV 4.6.0 and FFmpeg 5.1 (Debian 12) on mp4, mkv, webm,
// MPEG-TS and AVI files: read right after VideoCapture.Read, the property
// CAP_PROP_POS_MSEC holds the presentation time of the frame just returned,
// not of the next one. It is relative to the stream's start time, so the
// first frame reads 0 even when the container starts at 1.5 s or 5 s.
// There is one exception. Streams with decoder delay (H.264 with B-frames,
// the libx264 default) hand back their last frames while the decoder drains
// at end of file, and for those frames OpenCV reports 0 ms, one frame per
// frame of delay (two for libx264's defaults). VP8, MJPEG and H.264 without
// B-frames report every frame correctly.
//
// ReadFile therefore applies this rule: a frame whose reported time is not
// finite, is negative, or is not later than the previous frame's time is
// "repaired". Its time becomes the previous time plus the median of the
// last reliable steps (or 1/declared rate if there are none yet). Repaired
// frames are counted in Timing.Repaired and left out of the timestamp
// analysis.
//
// Seeking (CAP_PROP_POS_MSEC or CAP_PROP_POS_FRAMES) is not used. OpenCV
// 4.6 converts a time into a frame number with the declared rate. On a file
// that declares 1000 fps, or on a variable-rate file, that lands on the
// wrong frame. ReadFile decodes from the start and selects frames by their
// times.
package stream
