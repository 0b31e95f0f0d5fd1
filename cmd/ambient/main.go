// Command ambient sweeps physd estimate --ambient over ambient records
// (issue 45) and writes a Markdown report.
//
// Every cell renders, for seeds 1 … N, a record of a dark block hanging
// over a band-limited texture (sim.Structure, 64×64 unless the cell says
// otherwise, 30 fps, 1 % pixel noise) driven continuously: each mode by
// its own stationary white noise (sim.ExcitationAmbient, the mode's
// amplitude its RMS in px), plus the cell's harmonic forcing or coloured
// noise, if any. sim.WriteStructureVideo streams it into libx264 at CRF
// 23, and `physd estimate --ambient --json FILE` is run on it with no
// other flag. An estimate is in the bar when |γ0 − γ0*| ≤ 1 % of γ0* and
// |ζ − ζ*| ≤ 30 % of ζ*; a certified one outside it is a false
// certificate, and so is every certificate of a cell with no single mode
// to find (a harmonic forcing, coloured noise, two close modes). The
// clips depend on nothing but the cell and the seed.
//
// Usage:
//
//	go run ./cmd/ambient -bin bin/physd -out docs/ambient-results.md [-seeds 20] [-only NAME] [-workers 1]
//
// make ambient runs it. The exit status is 0 when the report is written,
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
	bin, out, only string
	seeds, workers int
	timeout        time.Duration
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ambient", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.StringVar(&cfg.bin, "bin", "bin/physd", "the physd binary to run")
	fs.StringVar(&cfg.out, "out", "docs/ambient-results.md", "the Markdown report to write")
	fs.IntVar(&cfg.seeds, "seeds", 20, "seeds per cell (1 … N)")
	fs.StringVar(&cfg.only, "only", "", "run only the cells whose name contains this")
	fs.IntVar(&cfg.workers, "workers", 1, "clips rendered and estimated at once (1: one at a time, in order; rendering uses every core)")
	fs.DurationVar(&cfg.timeout, "timeout", 30*time.Minute, "limit on one estimate")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ambient: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if cfg.seeds < 1 {
		fmt.Fprintln(stderr, "ambient: -seeds must be at least 1")
		return 2
	}
	if cfg.workers < 1 {
		fmt.Fprintln(stderr, "ambient: -workers must be at least 1")
		return 2
	}
	if len(selected(cfg.only)) == 0 {
		fmt.Fprintf(stderr, "ambient: -only %q matches no cell\n", cfg.only)
		return 2
	}
	if _, err := os.Stat(cfg.bin); err != nil {
		fmt.Fprintf(stderr, "ambient: the physd binary: %v (make build)\n", err)
		return 1
	}
	start := time.Now()
	rows, err := sweep(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "ambient:", err)
		return 1
	}
	f, err := os.Create(cfg.out)
	if err != nil {
		fmt.Fprintln(stderr, "ambient:", err)
		return 1
	}
	report(f, cfg, rows, time.Since(start))
	if err := f.Close(); err != nil {
		fmt.Fprintln(stderr, "ambient:", err)
		return 1
	}
	fmt.Fprintf(stdout, "ambient: wrote %s in %s\n", cfg.out, time.Since(start).Round(time.Second))
	return 0
}
