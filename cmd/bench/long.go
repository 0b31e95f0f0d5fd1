package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// longCase is one whole 'physd estimate' on a long real-footage window,
// with the target issue 22 set for its median wall time.
type longCase struct {
	name, file, flags string
	target            float64 // seconds
}

// longCases are the long windows of the real-footage dev set (truth.tsv's
// flags): springWars' 8 s at 30 fps of 640×480 with its ROI and without
// any (whole frame), and pendulum_ball's 1,275 frames at 60 fps.
var longCases = []longCase{
	{"springWars 8 s, 640×480 @30 fps, ROI", "springWars.mp4", "--from 1.667 --to 9.667 --roi 0,330,640,60", 1},
	{"springWars 8 s, 640×480 @30 fps, whole frame", "springWars.mp4", "--from 1.667 --to 9.667", 1},
	{"pendulum_ball 21.3 s, 1275 frames @60 fps, ROI", "pendulum_ball.mp4", "--from 4.337 --to 25.614 --roi 177,77,205,87", 4},
}

// benchLong times runs whole 'physd estimate --json' processes per long
// case, one at a time, and prints the median wall and CPU time with the
// estimate and verdict of the last run (they do not vary between runs).
// It is skipped when dir (the dev set) is missing.
func benchLong(ctx context.Context, physd, dir string, runs int) error {
	if _, err := os.Stat(filepath.Join(dir, "truth.tsv")); err != nil {
		fmt.Printf("long windows: skipped (no real-footage dev set at %s)\n", dir)
		return nil
	}
	fmt.Printf("long windows: whole 'physd estimate --json' processes, %d runs each, one at a time (wall includes process start and decoding)\n", runs)
	for _, c := range longCases {
		var walls, cpus []float64
		var last map[string]any
		for range runs {
			args := append([]string{"estimate", "--json"}, strings.Fields(c.flags)...)
			cmd := exec.CommandContext(ctx, physd, append(args, filepath.Join(dir, c.file))...)
			var out bytes.Buffer
			cmd.Stdout = &out
			start := time.Now()
			err := cmd.Run()
			wall := time.Since(start)
			// Exit status 3 is an estimate that was not certified.
			var ee *exec.ExitError
			if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 3) {
				return fmt.Errorf("long window %s: %w (stdout %s)", c.name, err, out.String())
			}
			if err := json.Unmarshal(out.Bytes(), &last); err != nil {
				return fmt.Errorf("long window %s: %w", c.name, err)
			}
			walls = append(walls, wall.Seconds())
			st := cmd.ProcessState
			cpus = append(cpus, (st.UserTime() + st.SystemTime()).Seconds())
		}
		fmt.Printf("  %-48s wall median %.2f s (min %.2f, max %.2f), CPU median %.2f s   target < %g s   γ0 %.4f γ1 %.4f %v\n",
			c.name, median(walls), slices.Min(walls), slices.Max(walls), median(cpus), c.target, last["gamma0"], last["gamma1"], last["verdict"])
	}
	return nil
}
