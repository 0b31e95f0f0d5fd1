package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/physd/physd/stream"
)

// An RTSP reader joins the loopback server after the publisher has
// started, so it misses the clip's first key frame and its first picture
// is the clip's second key frame (springWars: frame 250 of 409, 8.333 s;
// every picture after it equal to the file's, to the bit, at the same
// times). A file camera starts at frame 0. The two cameras then see the
// same pictures a third of a loop apart: other windows, another sequence
// of certified and refused ones, other training — the learning stage's
// cost follows its windows, so the comparison of the two paths was one
// of workloads, not of sources. The file cameras therefore replay the
// clip rotated to start at that key frame (rotateClip), and their
// measurement starts the same time after the first frame as an RTSP
// camera's (realStart).

// keyFrames lists the presentation times of clip's video key frames, in
// seconds as ffprobe prints them.
func keyFrames(ctx context.Context, clip string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ffprobe", "-v", "error", "-select_streams", "v:0",
		"-show_entries", "packet=pts_time,flags", "-of", "csv=p=0", clip).Output()
	if err != nil {
		return nil, fmt.Errorf("ffprobe %s: %w", clip, err)
	}
	var keys []string
	for _, line := range strings.Split(string(out), "\n") {
		t, flags, ok := strings.Cut(strings.TrimSpace(line), ",")
		if ok && strings.HasPrefix(flags, "K") {
			keys = append(keys, t)
		}
	}
	return keys, nil
}

// rotateClip writes into dir a copy of clip that starts at its second key
// frame and continues, after the clip's end, with its start up to that
// key frame: looped, the pictures an RTSP reader of the looped clip
// sees, in its order. It is a stream copy (no re-encoding), checked to
// hold the same pictures: every frame of the copy, area-resized to 128
// pixels, equals the original's at its rotated index to the bit. It
// returns the copy and the key frame's time.
func rotateClip(ctx context.Context, clip, dir string) (rotated, at string, err error) {
	keys, err := keyFrames(ctx, clip)
	if err != nil {
		return "", "", err
	}
	if len(keys) < 2 {
		return "", "", fmt.Errorf("%s has %d key frame(s): nothing to rotate to", clip, len(keys))
	}
	at = keys[1]
	pre := stream.Preprocess{Size: 128}
	orig, _, err := stream.ReadFile(ctx, clip, stream.FileOptions{Preprocess: pre})
	if err != nil {
		return "", "", err
	}
	sec, err := strconv.ParseFloat(at, 64)
	if err != nil {
		return "", "", fmt.Errorf("key frame time %q: %w", at, err)
	}
	// The key frame's index: the frames before it in presentation order
	// (a closed GOP: they are also the packets before it).
	k := 0
	for k < len(orig) && orig[k].Time.Seconds() < sec-1e-3 {
		k++
	}
	tail, head := filepath.Join(dir, "tail.mp4"), filepath.Join(dir, "head.mp4")
	list, rotated := filepath.Join(dir, "concat.txt"), filepath.Join(dir, "rotated.mp4")
	if err := os.WriteFile(list, []byte(fmt.Sprintf("file '%s'\nfile '%s'\n", tail, head)), 0o644); err != nil {
		return "", "", err
	}
	q := []string{"-hide_banner", "-nostdin", "-loglevel", "error", "-y"}
	for _, args := range [][]string{
		{"-ss", at, "-i", clip, "-map", "0:v:0", "-c", "copy", tail},
		{"-i", clip, "-map", "0:v:0", "-frames:v", strconv.Itoa(k), "-c", "copy", head},
		{"-f", "concat", "-safe", "0", "-i", list, "-c", "copy", rotated},
	} {
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		var stderr bytes.Buffer
		cmd := exec.CommandContext(cctx, "ffmpeg", append(q, args...)...)
		cmd.Stderr = &stderr
		err := cmd.Run()
		cancel()
		if err != nil {
			return "", "", fmt.Errorf("ffmpeg %s: %w: %s", strings.Join(args, " "), err, stderr.String())
		}
	}
	rot, _, err := stream.ReadFile(ctx, rotated, stream.FileOptions{Preprocess: pre})
	if err != nil {
		return "", "", err
	}
	if len(rot) != len(orig) {
		return "", "", fmt.Errorf("the rotated copy of %s has %d frames, the clip %d", clip, len(rot), len(orig))
	}
	for i, f := range rot {
		g := orig[(i+k)%len(orig)]
		if f.W != g.W || f.H != g.H || !slices.Equal(f.Pix, g.Pix) {
			return "", "", fmt.Errorf("the rotated copy of %s: frame %d is not the clip's frame %d", clip, i, (i+k)%len(orig))
		}
	}
	return rotated, at, nil
}
