package stream

import (
	"errors"
	"io"
)

// Errors returned by this package wrap one of these, so callers can test
// with errors.Is. A missing file wraps fs.ErrNotExist instead.
var (
	// ErrInvalidOption reports an option or argument that is out of range.
	ErrInvalidOption = errors.New("invalid option")
	// ErrNotVideo reports a file that cannot be opened or decoded as video.
	ErrNotVideo = errors.New("not a readable video")
	// ErrEmptySegment reports a From/To segment that contains no frame.
	ErrEmptySegment = errors.New("no frames in the selected segment")
	// ErrTooManyFrames reports a segment longer than FileOptions.MaxFrames.
	ErrTooManyFrames = errors.New("too many frames")
	// ErrStalled reports a live source that delivered no frame within its
	// timeout (RTSPOptions.Timeout, V4L2Options.Timeout), or that did not
	// finish opening within its open timeout: a hung server or camera.
	ErrStalled = errors.New("stream stalled")
	// ErrUnavailable reports a live source that cannot be opened: nothing
	// listens at the address, the server refuses the path, or the device
	// is missing or busy.
	ErrUnavailable = errors.New("source unavailable")
	// ErrUntrusted reports an rtsps:// camera whose certificate did not
	// pass the CameraTLS check, or a stream physd could not check.
	ErrUntrusted = errors.New("camera certificate not trusted")
	// ErrInterrupted reports a live stream that ended: the camera or its
	// server closed it, and it may come back. It is wrapped together with
	// io.EOF; io.EOF alone is a recording's end (see Ended).
	ErrInterrupted = errors.New("live stream interrupted")
	// ErrNoOpenCV reports an OpenCV-backed feature (video files, RTSP,
	// V4L2) in a binary built with the nocv build tag.
	ErrNoOpenCV = errors.New("physd was built without OpenCV (tag nocv)")
)

// Ended says whether a source's Run error is its end: a recording or a
// finite stream that has no more frames (io.EOF), rather than a live
// stream that was interrupted (ErrInterrupted) or a failure. Whoever
// runs the source stops on it; anything else is reopened.
func Ended(err error) bool { return errors.Is(err, io.EOF) && !errors.Is(err, ErrInterrupted) }
