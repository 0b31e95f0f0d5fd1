// Package stream turns video sources into preprocessed grayscale frames with
// trustworthy frame times. It knows about cameras, containers and decoding,
// and nothing about physics.
//
// ReadFile decodes a whole video file (or a segment of it) with OpenCV's
// FFmpeg backend (gocv). The preprocessing (Preprocess) works on any 8-bit
// gocv.Mat (Apply) or *image.Gray (ApplyGray, pure Go), and AnalyzeTiming
// decides from a list of presentation times which frame rate the caller
// should assume.
//
// # Sources
//
// A Source delivers frames one at a time, in capture order, to a callback,
// until its context is done, it ends (io.EOF: see Ended; a live stream
// that ends wraps ErrInterrupted too, for it may come back) or it fails:
//
//   - NewFileSource: a video file, paced by its presentation times or as
//     fast as possible, optionally looping;
//   - NewRTSPSource: an RTSP camera; H.264, H.265 and VP8 over rtsp:// or
//     rtsps:// (certificate checked, see CameraTLS) through a gortsplib
//     client and the libavcodec decoder of the WebRTC sources, MJPEG
//     through the same client and image/jpeg (so corrupt frames are
//     counted and resolution changes followed), anything else (MPEG-4,
//     AV1, H.265 with interleaved NAL units) through OpenCV's FFmpeg
//     backend;
//   - NewV4L2Source: a local camera through OpenCV's V4L2 backend.
//
// The built-in synthetic camera (rendered physics with known (γ1, γ0)) is
// a Source too, but lives in package simcam, so that this package carries
// no physics; SleepUntil, IndexTime and MinFPS are exported for it.
//
// Every Frame carries Seq (increasing by 1 per decoded frame: a jump means
// dropped frames), Time (the presentation time from the stream start: a
// jump means a gap) and Wall (an estimate of the wall-clock capture time).
// Live sources hand frames over without a queue of their own: a consumer
// slower than the camera slows the reads, and FFmpeg's buffers fill.
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
// ReadFile therefore applies this rule, and so do FileSource and the live
// sources: a frame whose reported time is not finite, is negative, or is
// not later than the previous frame's time is "repaired". Its time becomes
// the previous time plus the median of the last reliable steps (or
// 1/declared rate if there are none yet). Repaired frames are counted in
// Timing.Repaired and left out of the timestamp analysis.
//
// Seeking (CAP_PROP_POS_MSEC or CAP_PROP_POS_FRAMES) is not used. OpenCV
// 4.6 converts a time into a frame number with the declared rate. On a file
// that declares 1000 fps, or on a variable-rate file, that lands on the
// wrong frame. ReadFile decodes from the start and selects frames by their
// times, and a looping FileSource reopens the file.
//
// # Live sources
//
// RTSP frame times come from the RTP timestamps (90 kHz for H.264 and
// VP8), carried through the decoder with each access unit so that a
// stream with B-frames gets each picture's own time; streams read by
// OpenCV use CAP_PROP_POS_MSEC, which FFmpeg derives from the same RTP
// timestamps. Both are rebased to 0 at the first decoded frame. The
// native client releases a frame when the next one begins (the jitter
// buffer's rule), one frame interval of latency. V4L2 frame times are the
// driver's buffer timestamps, rebased the same way. Wall is the arrival
// time of the first frame, then Wall of the previous frame plus the step in
// Time, clamped to the frame's arrival: it never lies in the future, and
// Wall − Time is constant except while frames arrive faster than real time.
// That happens right after an RTSP open: FFmpeg reads about a second of the
// stream to probe it (measured on loopback: first frame 1.3 s after Run
// starts, then the ~30 frames buffered meanwhile at once), and those frames get Wall ≈ arrival.
// A sender clock slower than the host's makes Wall lag arrival by the
// accumulated drift (parts per million for cameras).
//
// # Key frames
//
// Every Frame says whether it is a key frame (Frame.Key: an intra-coded
// picture, which re-codes the whole picture afresh) and where that comes
// from. Files read through libavformat and the RTSP and WebRTC decoders
// take it from libavcodec (the picture's key flag, or an I picture):
// Frame.KeyKnown. MJPEG over RTSP marks every picture a key frame.
// OpenCV's capture (V4L2 cameras, RTSP codecs read through OpenCV, files
// needing OpenCV's conversion) cannot tell, and there a key frame is
// guessed from the whole picture, before the crop (Frame.KeyGuessed): a
// picture in which nearly every 16×16 block changed by a gray level or
// more, where the recent pictures changed few, or whose brightness
// stepped in a stream that changes every block (see keyGuesser, which
// was checked against libavcodec's frame types). A moving object changes
// the blocks it covers, not the whole picture. The synthetic camera
// tells nothing.
//
// gocv v0.32.0 cannot pass open parameters to VideoCapture, so the package
// has its own small cgo wrapper (capture.cpp) around OpenCV 4.6's
// VideoCapture::open(filename, api, params). Each RTSP capture gets
// CAP_PROP_OPEN_TIMEOUT_MSEC = RTSPOptions.OpenTimeout and
// CAP_PROP_READ_TIMEOUT_MSEC = RTSPOptions.Timeout, which arm FFmpeg's
// interrupt callback: without them a read from a hung server blocks for
// FFmpeg's default 30 s. When the read timeout fires, OpenCV drains the
// decoder, and the stall shows as a failed read ~Timeout after the last
// frame (measured: Run returns ErrStalled 2.0 s after the server stops
// sending, with Timeout 2 s). A watchdog in Run (Timeout + 2 s) backs this
// up for backends without a read timeout (V4L2).
//
// FFmpeg demuxer options are a different matter: OpenCV 4.6 takes them only
// from the process-wide environment variable OPENCV_FFMPEG_CAPTURE_OPTIONS,
// read while a capture opens; when it is unset OpenCV asks FFmpeg to prefer
// TCP for RTSP. The default RTSP transport (TCP) therefore needs no
// environment change. UDP (or TCP when the variable is set in the process
// environment, to add rtsp_transport to the user's options) sets the
// variable for the duration of the open only, under a package-level
// RWMutex that every capture open holds for reading, so that OpenCV's getenv
// never races the change. That mutex is the package's only mutable
// package-level state.
//
// # Building without OpenCV
//
// With the build tag nocv (e.g. CGO_ENABLED=0 go build -tags nocv), the
// package builds in pure Go: Source, Frame (and so package simcam's
// synthetic camera), Preprocess.ApplyGray, AnalyzeTiming and the errors
// work, while ReadFile and the constructors of the file, RTSP and V4L2
// sources return errors wrapping ErrNoOpenCV, and Preprocess.Apply (which takes a gocv.Mat) does
// not exist.
package stream
