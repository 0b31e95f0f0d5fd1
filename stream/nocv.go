//go:build nocv

package stream

import (
	"context"
	"fmt"
)

// haveOpenCV reports whether this build decodes video through OpenCV.
const haveOpenCV = false

// ReadFile would decode a video file with OpenCV's FFmpeg backend; this
// build has no OpenCV (tag nocv), so it returns an error wrapping
// ErrNoOpenCV.
func ReadFile(ctx context.Context, path string, opt FileOptions) ([]Frame, Timing, error) {
	return nil, Timing{}, fmt.Errorf("stream: read %q: %w", path, ErrNoOpenCV)
}

// probeFile is never reached: NewFileSource fails first.
func probeFile(string, Preprocess) error { return ErrNoOpenCV }

func (s *FileSource) run(context.Context, func(Frame) error) error { return s.wrap(ErrNoOpenCV) }

func (s *RTSPSource) run(context.Context, func(Frame) error) error { return s.wrap(ErrNoOpenCV) }

func (s *V4L2Source) run(context.Context, func(Frame) error) error { return s.wrap(ErrNoOpenCV) }
