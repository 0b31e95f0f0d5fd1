package stream

import (
	"context"
	"testing"
)

// collect runs src until it returns and returns its frames and error.
func collect(t *testing.T, ctx context.Context, src Source) ([]Frame, error) {
	t.Helper()
	var frames []Frame
	err := src.Run(ctx, func(f Frame) error {
		frames = append(frames, f)
		return nil
	})
	return frames, err
}
