// Command bench prints physd's speed and memory figures on this machine:
// the wall time from a cold process start to a certified estimate of the
// underdamped pendulum (1.5π s, (50°, 0), 20 fps) with its errors and peak
// RSS, and the time of one training step of the paper preset on the same
// window. Figures are medians over repeated runs; compare them as ratios
// measured in the same run, since the machines are shared.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/physd/physd/estimator"
	"github.com/physd/physd/stream"
)

func main() {
	physd := flag.String("physd", "bin/physd", "the physd binary to measure")
	runs := flag.Int("runs", 5, "cold-start runs")
	steps := flag.Int("paper-runs", 3, "paper-step measurements")
	daemonFor := flag.Duration("daemon", 30*time.Second, "steady-state measurement of the daemon per camera count (0: skip)")
	flag.Parse()
	ctx := context.Background()
	err := run(ctx, *physd, *runs, *steps)
	if err == nil {
		err = benchRestart(ctx, *runs)
	}
	if err == nil && *daemonFor > 0 {
		err = benchDaemon(ctx, *physd, *daemonFor)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}

func run(ctx context.Context, physd string, runs, paperRuns int) error {
	dir, err := os.MkdirTemp("", "physd-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	clip := filepath.Join(dir, "pendulum.mp4")
	if out, err := exec.CommandContext(ctx, physd, "sim", "--system", "pendulum", "--regime", "underdamped",
		"--z0", "50", "--v0", "0", "--duration", "1.5pi", "--fps", "20", clip).CombinedOutput(); err != nil {
		return fmt.Errorf("sim: %v: %s", err, out)
	}
	const g1, g0 = 0.08, 4.0016
	var walls, rss []float64
	var last map[string]any
	for range runs {
		cmd := exec.CommandContext(ctx, physd, "estimate", "--json", clip)
		var out bytes.Buffer
		cmd.Stdout = &out
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		if err != nil {
			return fmt.Errorf("estimate: %v (stdout %s)", err, out.String())
		}
		if err := json.Unmarshal(out.Bytes(), &last); err != nil {
			return fmt.Errorf("estimate output: %w", err)
		}
		walls = append(walls, wall.Seconds())
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = append(rss, float64(ru.Maxrss)/1024) // KiB → MiB
		}
	}
	e0 := last["gamma0"].(float64) - g0
	e1 := last["gamma1"].(float64) - g1
	fmt.Printf("cold start → %s estimate (edge preset), underdamped pendulum 1.5π s, (50°, 0), 20 fps, %d runs\n", last["verdict"], runs)
	fmt.Printf("  wall time   median %.3f s   (min %.3f, max %.3f)   target < 2 s\n", median(walls), slices.Min(walls), slices.Max(walls))
	fmt.Printf("  peak RSS    median %.1f MiB (max %.1f)             target < 150 MB\n", median(rss), slices.Max(rss))
	fmt.Printf("  γ0 = %.5f (error %+.5f = %+.3f %%, limit 0.5 %%)\n", last["gamma0"], e0, 100*e0/g0)
	fmt.Printf("  γ1 = %.5f (error %+.5f, limit 0.004)\n", last["gamma1"], e1)

	// One paper-preset step: Fit with 2 steps minus Fit with 1, so frame
	// decoding and the final encode cancel.
	p, err := estimator.LookupPreset("paper")
	if err != nil {
		return err
	}
	frames, tm, err := stream.ReadFile(ctx, clip, stream.FileOptions{Preprocess: stream.Preprocess{Size: p.Size, Binarize: p.Binarize}})
	if err != nil {
		return err
	}
	c := estimator.Clip{W: p.Size, H: p.Size, Dt: 1 / tm.FPS}
	for _, f := range frames {
		c.Frames = append(c.Frames, f.Pix)
	}
	var stepT []float64
	for range paperRuns {
		var el [2]time.Duration
		for i, n := range []int{1, 2} {
			p.Steps = n
			r, err := estimator.Fit(ctx, []estimator.Clip{c}, estimator.Options{Preset: p, Seed: 1})
			if err != nil {
				return fmt.Errorf("paper preset: %w", err)
			}
			el[i] = r.Elapsed
		}
		stepT = append(stepT, math.Max(0, (el[1]-el[0]).Seconds()))
	}
	fmt.Printf("paper preset (CNN 32/64/128, %d frames of 64×64): one training step median %.2f s over %d runs\n", len(c.Frames), median(stepT), paperRuns)
	fmt.Printf("  the paper's 30000 steps would take %.1f h; the edge preset's whole cold start is %.0f× less wall time than ONE paper step\n",
		median(stepT)*30000/3600, median(stepT)/median(walls))
	return nil
}
