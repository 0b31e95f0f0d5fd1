// Command subpixel sweeps physd estimate over sub-pixel vibration and
// compressed video (issue 44) and writes a Markdown report.
//
// Every cell renders free decays of a structure (sim.Structure: a dark
// block hanging over a band-limited texture, 320×240, 30 fps, 20 s, 1 %
// pixel noise) with f drawn in [1, 3] Hz and ζ in [0.5, 2] % per seed,
// encodes them with libx264 at the cell's CRF and keyframe interval
// (sim.WriteVideo), and runs `physd estimate --json FILE` on each with no
// other flag, as a new user would. A certified estimate is in the bar
// when |γ0 − γ0*| ≤ 1 % of γ0* and |γ1 − γ1*| ≤ 20 % of γ1* + 0.02; a
// certified one outside it is a false certificate. The choice of f, ζ and
// seed looks at nothing but the seed.
//
// Usage:
//
//	go run ./cmd/subpixel -bin bin/physd -out docs/subpixel-results.md [-seeds 5] [-quick]
//
// make subpixel runs it. The exit status is 0 when the report is
// written, whatever the estimates; 1 when it cannot be; 2 for a
// command-line mistake.
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
	fs := flag.NewFlagSet("subpixel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.StringVar(&cfg.bin, "bin", "bin/physd", "the physd binary to run")
	fs.StringVar(&cfg.out, "out", "docs/subpixel-results.md", "the Markdown report to write")
	fs.IntVar(&cfg.seeds, "seeds", 5, "seeds per cell")
	fs.StringVar(&cfg.keep, "keep", "", "keep the rendered clips in this directory (default: a temporary one, removed)")
	fs.BoolVar(&cfg.quick, "quick", false, "one seed and 8 s clips: a smoke run, not the report's figures")
	fs.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "limit on one estimate")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if cfg.seeds < 1 {
		fmt.Fprintln(stderr, "subpixel: -seeds must be at least 1")
		return 2
	}
	if _, err := os.Stat(cfg.bin); err != nil {
		fmt.Fprintf(stderr, "subpixel: the physd binary: %v (make build)\n", err)
		return 1
	}
	dir := cfg.keep
	if dir == "" {
		d, err := os.MkdirTemp("", "physd-subpixel-")
		if err != nil {
			fmt.Fprintln(stderr, "subpixel:", err)
			return 1
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(stderr, "subpixel:", err)
		return 1
	}
	start := time.Now()
	rows, err := sweep(ctx, cfg, dir, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "subpixel:", err)
		return 1
	}
	f, err := os.Create(cfg.out)
	if err != nil {
		fmt.Fprintln(stderr, "subpixel:", err)
		return 1
	}
	report(f, cfg, rows, time.Since(start))
	if err := f.Close(); err != nil {
		fmt.Fprintln(stderr, "subpixel:", err)
		return 1
	}
	fmt.Fprintf(stdout, "subpixel: wrote %s in %s\n", cfg.out, time.Since(start).Round(time.Second))
	return 0
}
