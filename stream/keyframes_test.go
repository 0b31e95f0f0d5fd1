//go:build !nocv

package stream

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/physd/physd/sim"
)

// gopClip renders a 4 s, 12 px, 2 Hz free decay of sim's structure
// (320×240, 30 fps: 120 frames) and writes it as H.264 at CRF 38 with a
// key frame every gop frames, the compressed camera; phase, when
// not nil, splices in from frame 75 on the same decay shifted in phase by
// it (the object jumps: position and velocity change at once).
func gopClip(t *testing.T, gop int, phase *float64) string {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not installed")
	}
	ctx := context.Background()
	s := sim.Structure{Duration: 4, Seed: 1, Modes: []sim.Mode{{Fn: 2, Zeta: 0.01, AmplitudePx: 12}}}
	frames, _, err := sim.RenderStructure(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if phase != nil {
		s.Modes[0].Phase = *phase
		other, _, err := sim.RenderStructure(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames[:75:75], other[75:]...)
	}
	path := filepath.Join(t.TempDir(), "gop.mp4")
	if err := sim.WriteVideo(ctx, path, frames, 30, sim.Encoding{CRF: 38, GOP: gop}); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			t.Skip("ffmpeg not installed")
		}
		t.Fatal(err)
	}
	return path
}

// keysOf lists the frames marked Key, and counts those whose type is
// known and those guessed.
func keysOf(frames []Frame) (keys []int, known, guessed int) {
	for i, f := range frames {
		if f.Key {
			keys = append(keys, i)
		}
		if f.KeyKnown {
			known++
		}
		if f.KeyGuessed {
			guessed++
		}
	}
	return keys, known, guessed
}

// A file read natively tells every frame's type: with GOP 30 the key
// frames are frames 0, 30, 60 and 90 and no others, through ReadFile,
// a segment of it and FileSource alike.
func TestReadFileKeyFrames(t *testing.T) {
	path := gopClip(t, 30, nil)
	pre := Preprocess{Size: 32}
	frames, _ := read(t, path, FileOptions{Preprocess: pre})
	keys, known, guessed := keysOf(frames)
	if want := []int{0, 30, 60, 90}; len(frames) != 120 || !slices.Equal(keys, want) || known != len(frames) || guessed != 0 {
		t.Errorf("ReadFile: key frames %v of %d (%d known, %d guessed), want %v of 120, all known", keys, len(frames), known, guessed, want)
	}
	seg, _ := read(t, path, FileOptions{Preprocess: pre, From: 1})
	if keys, _, _ := keysOf(seg); !slices.Equal(keys, []int{0, 30, 60}) || seg[0].Seq != 30 {
		t.Errorf("ReadFile from 1 s: key frames %v from Seq %d, want [0 30 60] from Seq 30", keys, seg[0].Seq)
	}
	src, err := NewFileSource(path, FileSourceOptions{Preprocess: pre})
	if err != nil {
		t.Fatal(err)
	}
	var got []Frame
	if err := src.Run(context.Background(), func(f Frame) error { got = append(got, f); return nil }); !Ended(err) {
		t.Fatalf("FileSource: %v", err)
	}
	if keys, known, _ := keysOf(got); !slices.Equal(keys, []int{0, 30, 60, 90}) || known != len(got) {
		t.Errorf("FileSource: key frames %v, %d of %d known", keys, known, len(got))
	}
}

// A file OpenCV reads (a rotated one: libavformat's reader leaves the
// rotation to OpenCV) tells no frame types, and the key frames are
// guessed from the pictures: frames 30, 60 and 90 — frame 0 has no
// predecessor to differ from — and no others.
func TestReadFileKeyFramesGuessed(t *testing.T) {
	plain := gopClip(t, 30, nil)
	rotated := filepath.Join(t.TempDir(), "rotated.mp4")
	run := func(args ...string) error {
		return exec.Command("ffmpeg", append([]string{"-v", "error", "-nostdin", "-y"}, args...)...).Run()
	}
	if run("-display_rotation", "180", "-i", plain, "-c", "copy", rotated) != nil {
		if err := run("-i", plain, "-c", "copy", "-metadata:s:v", "rotate=180", rotated); err != nil {
			t.Fatalf("ffmpeg cannot rotate: %v", err)
		}
	}
	if f, err := openAVFile(rotated); err == nil {
		f.Close()
		t.Fatal("the rotated file is read natively, not through OpenCV")
	}
	frames, _ := read(t, rotated, FileOptions{Preprocess: Preprocess{Size: 32}})
	keys, known, guessed := keysOf(frames)
	if want := []int{30, 60, 90}; !slices.Equal(keys, want) || known != 0 || guessed != len(want) {
		t.Errorf("key frames %v (%d known, %d guessed), want %v guessed", keys, known, guessed, want)
	}
}

// The guess, run on the luma of files whose frame types libavcodec
// tells, marks the key frames that follow another frame and nothing
// else, also when the object jumps mid-clip (a knock, far harder than a
// real one: position and velocity change in one frame).
func TestKeyGuesserAgainstDecoder(t *testing.T) {
	half := 1.5
	for _, c := range []struct {
		name  string
		gop   int
		phase *float64
	}{{"GOP 30", 30, nil}, {"GOP 250, object jumps at frame 75", 250, &half}, {"GOP 30, object jumps at frame 75", 30, &half}} {
		f, err := openAVFile(gopClip(t, c.gop, c.phase))
		if err != nil {
			t.Fatal(err)
		}
		var g keyGuesser
		var keys, guesses []int
		pic := newPicture()
		for k := 0; f.read(pic); k++ {
			if pic.key && k > 0 {
				keys = append(keys, k)
			}
			pix, w, h, stride, ok := pic.lumaRows()
			if !ok {
				t.Fatalf("%s: frame %d: no luma", c.name, k)
			}
			if g.observe(k, pix, w, h, stride) {
				guesses = append(guesses, k)
			}
		}
		pic.close()
		f.Close()
		t.Logf("%s: key frames %v, guessed %v", c.name, keys, guesses)
		if !slices.Equal(guesses, keys) {
			t.Errorf("%s: guessed %v, want the key frames after the first, %v", c.name, guesses, keys)
		}
	}
}

// The RTSP reader tells each frame's type from libavcodec: a clip with a
// key frame every 10 frames, published in a loop, reads Key on every
// 10th frame from the first (the reader starts at a key frame), all
// known.
func TestRTSPKeyFrames(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	frames, _, err := sim.RenderStructure(ctx, sim.Structure{W: 96, H: 64, FPS: 20, Duration: 3, Seed: 1,
		Modes: []sim.Mode{{Fn: 1, Zeta: 0.01, AmplitudePx: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "gop10.mp4")
	if err := sim.WriteVideo(ctx, file, frames, 20, sim.Encoding{CRF: 30, GOP: 10}); err != nil {
		t.Fatal(err)
	}
	srv := startPublished(t, ctx, file)
	src, err := NewRTSPSource(srv.URL("cam"), RTSPOptions{Preprocess: Preprocess{Size: 16}, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const n = 35
	var got []Frame
	err = src.Run(ctx, func(f Frame) error {
		if got = append(got, f); len(got) == n {
			return errStopDecoding
		}
		return nil
	})
	if len(got) < n {
		t.Fatalf("%d frames, then %v", len(got), err)
	}
	var keys []int
	for i, f := range got {
		if f.Seq != got[0].Seq+i {
			t.Fatalf("frame %d has Seq %d after %d: frames lost", i, f.Seq, got[0].Seq)
		}
		if !f.KeyKnown || f.KeyGuessed {
			t.Fatalf("frame %d: KeyKnown %v, KeyGuessed %v, want known", i, f.KeyKnown, f.KeyGuessed)
		}
		if f.Key {
			keys = append(keys, i)
		}
	}
	if want := []int{0, 10, 20, 30}; !slices.Equal(keys, want) {
		t.Errorf("key frames %v of %d, want %v", keys, n, want)
	}
}
