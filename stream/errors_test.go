package stream

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

// A recording's end stops whoever runs the source; a live stream's end,
// a stall or a failure is reopened.
func TestEnded(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{io.EOF, true},
		{fmt.Errorf("file x: %w", io.EOF), true},
		{fmt.Errorf("rtsp://cam: the stream ended after 3 frame(s): %w: %w", ErrInterrupted, io.EOF), false},
		{fmt.Errorf("rtsp://cam: %w", ErrStalled), false},
		{fmt.Errorf("rtsp://cam: %w", ErrUnavailable), false},
		{errors.New("boom"), false},
		{nil, false},
	} {
		if got := Ended(tc.err); got != tc.want {
			t.Errorf("Ended(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
