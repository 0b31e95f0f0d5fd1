// Command modes sweeps physd estimate over structures ringing in several
// modes at once (issue 46) and writes a Markdown report.
//
// Every scene is a free decay of a structure (sim.Structure, 320×240,
// 30 fps, 20 s, 1 % pixel noise) in several modes released together from
// rest — two well apart, three, a cable's harmonics, a pair 2.3
// half-power bandwidths apart and one half a bandwidth apart — rendered
// as each object kind (a block, a cable, a beam's edge, a mast),
// encoded by libx264 lossless and at CRF 23, and estimated by `physd
// estimate --json FILE` with no other flag, as a new user would. Every
// certified number it prints — the window's estimate and each separated
// mode's — is in the bar when some mode of the scene has |γ0 − γ0*| ≤
// 1 % of γ0* and |ζ − ζ*| ≤ 25 % of ζ* (the bar); a certified
// number outside the bar of every mode is a false certificate.
//
// Usage:
//
//	go run ./cmd/modes -bin bin/physd -out docs/modes-results.md [-seeds 2] [-quick]
//
// make modes runs it. The exit status is 0 when the report is written,
// whatever the estimates; 1 when it cannot be; 2 for a command-line
// mistake.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// config is what the command line sets.
type config struct {
	bin, out, keep string
	seeds          int
	quick          bool
	timeout        time.Duration
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("modes", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.StringVar(&cfg.bin, "bin", "bin/physd", "the physd binary to run")
	fs.StringVar(&cfg.out, "out", "docs/modes-results.md", "the Markdown report to write")
	fs.IntVar(&cfg.seeds, "seeds", 2, "seeds per cell")
	fs.StringVar(&cfg.keep, "keep", "", "keep the rendered clips in this directory (default: a temporary one, removed)")
	fs.BoolVar(&cfg.quick, "quick", false, "one seed and 8 s clips: a smoke run, not the report's figures")
	fs.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "limit on one estimate")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if cfg.seeds < 1 {
		fmt.Fprintln(stderr, "modes: -seeds must be at least 1")
		return 2
	}
	if _, err := os.Stat(cfg.bin); err != nil {
		fmt.Fprintf(stderr, "modes: the physd binary: %v (make build)\n", err)
		return 1
	}
	dir := cfg.keep
	if dir == "" {
		d, err := os.MkdirTemp("", "physd-modes-")
		if err != nil {
			fmt.Fprintln(stderr, "modes:", err)
			return 1
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(stderr, "modes:", err)
		return 1
	}
	start := time.Now()
	rows, err := sweep(ctx, cfg, dir, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "modes:", err)
		return 1
	}
	f, err := os.Create(cfg.out)
	if err != nil {
		fmt.Fprintln(stderr, "modes:", err)
		return 1
	}
	report(f, cfg, rows, time.Since(start))
	if err := f.Close(); err != nil {
		fmt.Fprintln(stderr, "modes:", err)
		return 1
	}
	fmt.Fprintf(stdout, "modes: wrote %s in %s\n", cfg.out, time.Since(start).Round(time.Second))
	return 0
}
