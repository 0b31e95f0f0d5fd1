package stream

import "github.com/physd/physd/frame"

// Frame is one preprocessed frame. It is frame.Frame, which lives in a
// leaf package of its own so that packages that only read frames need not
// link this one's decoders (cgo OpenCV, pion).
type Frame = frame.Frame
