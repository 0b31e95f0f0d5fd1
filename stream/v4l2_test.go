//go:build !nocv

package stream

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"
)

// TestV4L2MissingDevice checks that a camera that is not there fails Run
// at once with an error naming the device. (There is no camera on the
// test machine; reading frames is not tested.)
func TestV4L2MissingDevice(t *testing.T) {
	for _, dev := range []string{"/dev/video97", "97"} {
		if _, err := os.Stat("/dev/video97"); err == nil {
			t.Skip("/dev/video97 exists")
		}
		src, err := NewV4L2Source(dev, V4L2Options{Width: 640, Height: 480, FPS: 30})
		if err != nil {
			t.Fatal(err)
		}
		if src.Name() != "v4l2:/dev/video97" {
			t.Errorf("Name = %q", src.Name())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		start := time.Now()
		err = src.Run(ctx, func(Frame) error { return nil })
		took := time.Since(start)
		cancel()
		t.Logf("%s: %v after %v", dev, err, took)
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "/dev/video97") {
			t.Errorf("%s: Run = %v, want ErrUnavailable and fs.ErrNotExist naming /dev/video97", dev, err)
		}
		if took > 2*time.Second {
			t.Errorf("%s: took %v to fail", dev, took)
		}
	}
	// A path that is not a device.
	src, err := NewV4L2Source(os.DevNull+"-not-there-either", V4L2Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Run(context.Background(), func(Frame) error { return nil }); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Run = %v", err)
	}
	// A character device that is not a camera: OpenCV's V4L2 backend
	// refuses it, quickly.
	src, _ = NewV4L2Source(os.DevNull, V4L2Options{})
	start := time.Now()
	err = src.Run(context.Background(), func(Frame) error { return nil })
	t.Logf("%s: %v after %v", os.DevNull, err, time.Since(start))
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), os.DevNull) || time.Since(start) > 5*time.Second {
		t.Errorf("%s as a camera: %v", os.DevNull, err)
	}
	file := t.TempDir() + "/video0"
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	src, _ = NewV4L2Source(file, V4L2Options{})
	if err := src.Run(context.Background(), func(Frame) error { return nil }); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "character device") {
		t.Errorf("a regular file as device: %v", err)
	}
}

func TestV4L2OptionErrors(t *testing.T) {
	for _, tc := range []struct {
		dev string
		opt V4L2Options
	}{
		{"video0", V4L2Options{}},
		{"-1", V4L2Options{}},
		{"0", V4L2Options{Width: -1}},
		{"0", V4L2Options{FPS: -5}},
		{"0", V4L2Options{Timeout: time.Nanosecond}},
		{"0", V4L2Options{Preprocess: Preprocess{Threshold: 2}}},
	} {
		if _, err := NewV4L2Source(tc.dev, tc.opt); !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), "v4l2:") {
			t.Errorf("NewV4L2Source(%q, %+v) = %v, want ErrInvalidOption naming the device", tc.dev, tc.opt, err)
		}
	}
}
