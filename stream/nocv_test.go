//go:build nocv

package stream

import (
	"context"
	"errors"
	"testing"
)

// TestNoOpenCV checks that a nocv build keeps the OpenCV-backed API, which
// fails with ErrNoOpenCV.
func TestNoOpenCV(t *testing.T) {
	if _, _, err := ReadFile(context.Background(), "x.mp4", FileOptions{}); !errors.Is(err, ErrNoOpenCV) {
		t.Errorf("ReadFile = %v", err)
	}
	if _, err := NewFileSource("x.mp4", FileSourceOptions{}); !errors.Is(err, ErrNoOpenCV) {
		t.Errorf("NewFileSource = %v", err)
	}
	if _, err := NewRTSPSource("rtsp://127.0.0.1/x", RTSPOptions{}); !errors.Is(err, ErrNoOpenCV) {
		t.Errorf("NewRTSPSource = %v", err)
	}
	if _, err := NewV4L2Source("0", V4L2Options{}); !errors.Is(err, ErrNoOpenCV) {
		t.Errorf("NewV4L2Source = %v", err)
	}
	// Options are still checked first.
	if _, err := NewRTSPSource("http://x", RTSPOptions{}); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("NewRTSPSource(http) = %v", err)
	}
}
