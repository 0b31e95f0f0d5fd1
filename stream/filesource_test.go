//go:build !nocv

package stream

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestFileSourceFastAndRealtime(t *testing.T) {
	path := testsrc20(t) // 40 frames, 20 fps, H.264 with B-frames
	want, _ := read(t, path, FileOptions{Preprocess: Preprocess{Size: 16}})

	src, err := NewFileSource(path, FileSourceOptions{Preprocess: Preprocess{Size: 16}})
	if err != nil {
		t.Fatal(err)
	}
	if src.Name() != "file:"+path {
		t.Errorf("Name = %q", src.Name())
	}
	start := time.Now()
	got, err := collect(t, context.Background(), src)
	fast := time.Since(start)
	if err != io.EOF {
		t.Fatalf("Run = %v, want io.EOF", err)
	}
	// The same frames and times as ReadFile, including the repaired tail.
	if len(got) != len(want) {
		t.Fatalf("%d frames, ReadFile gives %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Seq != want[i].Seq || got[i].Time != want[i].Time || !slices.Equal(got[i].Pix, want[i].Pix) {
			t.Fatalf("frame %d: Seq %d Time %v, ReadFile: Seq %d Time %v", i, got[i].Seq, got[i].Time, want[i].Seq, want[i].Time)
		}
		if got[i].Wall.Sub(got[0].Wall) != got[i].Time || want[i].Wall.Sub(want[0].Wall) != want[i].Time || want[i].Wall.IsZero() {
			t.Fatalf("frame %d: Wall does not follow Time", i)
		}
	}

	src, _ = NewFileSource(path, FileSourceOptions{Realtime: true})
	start = time.Now()
	got, err = collect(t, context.Background(), src)
	realtime := time.Since(start)
	t.Logf("2 s file: %v as fast as possible, %v in real time", fast, realtime)
	if err != io.EOF || len(got) != 40 {
		t.Fatalf("realtime: %d frames, %v", len(got), err)
	}
	// The last frame is at 1.95 s.
	if realtime < 1900*time.Millisecond || realtime > 6*time.Second {
		t.Errorf("realtime playback of 1.95 s took %v", realtime)
	}
	if fast > realtime/2 {
		t.Errorf("fast playback took %v, realtime %v", fast, realtime)
	}
}

func TestFileSourceLoop(t *testing.T) {
	path := testsrc20(t)
	src, err := NewFileSource(path, FileSourceOptions{Loop: true})
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("enough")
	var got []Frame
	err = src.Run(context.Background(), func(f Frame) error {
		got = append(got, f)
		if len(got) == 100 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("Run = %v, want emit's error", err)
	}
	// Seq and Time keep going across the seams at 40 and 80, 50 ms apart.
	checkEven(t, got, 100, 0, 50*time.Millisecond)
	// The content restarts at each seam.
	if !slices.Equal(got[40].Pix, got[0].Pix) || !slices.Equal(got[81].Pix, got[1].Pix) || slices.Equal(got[40].Pix, got[39].Pix) {
		t.Error("the loop does not restart the content")
	}

	// With an FPS override, Time is Seq/FPS across loops too.
	src, _ = NewFileSource(path, FileSourceOptions{Loop: true, FPS: 100})
	got = got[:0]
	_ = src.Run(context.Background(), func(f Frame) error {
		got = append(got, f)
		if len(got) == 90 {
			return stop
		}
		return nil
	})
	checkEven(t, got, 90, 0, 10*time.Millisecond)
}

func TestFileSourceCancel(t *testing.T) {
	path := testsrc20(t)
	src, err := NewFileSource(path, FileSourceOptions{Loop: true, Realtime: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var canceledAt time.Time
	err = src.Run(ctx, func(f Frame) error {
		if f.Seq == 3 {
			canceledAt = time.Now()
			cancel()
		}
		return nil
	})
	if err != context.Canceled {
		t.Fatalf("Run = %v, want ctx.Err()", err)
	}
	if d := time.Since(canceledAt); d > time.Second {
		t.Errorf("Run returned %v after cancel", d)
	}
	// Also while waiting for the next frame's time.
	ctx, cancel = context.WithTimeout(context.Background(), 120*time.Millisecond)
	defer cancel()
	slow, _ := NewFileSource(path, FileSourceOptions{Realtime: true, FPS: 0.5})
	start := time.Now()
	got, err := collect(t, ctx, slow)
	if !errors.Is(err, context.DeadlineExceeded) || len(got) != 1 || time.Since(start) > time.Second {
		t.Errorf("Run = %v with %d frames after %v", err, len(got), time.Since(start))
	}
}

func TestFileSourceErrors(t *testing.T) {
	dir := t.TempDir()
	video := testsrc20(t)
	for _, tc := range []struct {
		path   string
		opt    FileSourceOptions
		target error
	}{
		{filepath.Join(dir, "nope.mp4"), FileSourceOptions{}, fs.ErrNotExist},
		{dir, FileSourceOptions{}, ErrNotVideo},
		{video, FileSourceOptions{FPS: -1}, ErrInvalidOption},
		{video, FileSourceOptions{Preprocess: Preprocess{ROI: ROI{X: 60, W: 10, H: 10}}}, ErrInvalidOption},
	} {
		_, err := NewFileSource(tc.path, tc.opt)
		if !errors.Is(err, tc.target) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("NewFileSource(%q, %+v) = %v, want %v naming the path", tc.path, tc.opt, err, tc.target)
		}
	}
}
