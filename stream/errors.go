package stream

import "errors"

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
)
