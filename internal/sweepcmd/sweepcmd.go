// Package sweepcmd is what the sweep commands (cmd/subpixel, cmd/modes)
// share: their command line, the directory their clips are rendered in,
// the report's file, and one run of `physd estimate --json`.
package sweepcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Config is what a sweep's command line sets.
type Config struct {
	// Bin is the physd binary run; Out the Markdown report written; Keep
	// the directory the clips are kept in ("": a temporary one, removed).
	Bin, Out, Keep string
	// Seeds is how many seeds a cell runs; Quick one seed and short
	// clips, a smoke run.
	Seeds int
	Quick bool
	// Timeout bounds one estimate.
	Timeout time.Duration
}

// Main is the command name: it parses args (the report defaulting to
// out, seeds per cell to seeds), runs sweep — which renders and estimates
// the clips in dir, logging each to log — and writes its rows' report
// (report, given the sweep's wall time). The exit status is 0 when the
// report is written, whatever the estimates; 1 when it cannot be; 2 for
// a command-line mistake.
func Main[R any](ctx context.Context, name, out string, seeds int, args []string, stdout, stderr io.Writer,
	sweep func(ctx context.Context, cfg Config, dir string, log io.Writer) (R, error),
	report func(w io.Writer, cfg Config, rows R, took time.Duration)) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg Config
	fs.StringVar(&cfg.Bin, "bin", "bin/physd", "the physd binary to run")
	fs.StringVar(&cfg.Out, "out", out, "the Markdown report to write")
	fs.IntVar(&cfg.Seeds, "seeds", seeds, "seeds per cell")
	fs.StringVar(&cfg.Keep, "keep", "", "keep the rendered clips in this directory (default: a temporary one, removed)")
	fs.BoolVar(&cfg.Quick, "quick", false, "one seed and 8 s clips: a smoke run, not the report's figures")
	fs.DurationVar(&cfg.Timeout, "timeout", 5*time.Minute, "limit on one estimate")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments %q\n", name, fs.Args())
		return 2
	}
	if cfg.Seeds < 1 {
		fmt.Fprintf(stderr, "%s: -seeds must be at least 1\n", name)
		return 2
	}
	if _, err := os.Stat(cfg.Bin); err != nil {
		fmt.Fprintf(stderr, "%s: the physd binary: %v (make build)\n", name, err)
		return 1
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	dir := cfg.Keep
	if dir == "" {
		d, err := os.MkdirTemp("", "physd-"+name+"-")
		if err != nil {
			return fail(err)
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	start := time.Now()
	rows, err := sweep(ctx, cfg, dir, stderr)
	if err != nil {
		return fail(err)
	}
	f, err := os.Create(cfg.Out)
	if err != nil {
		return fail(err)
	}
	report(f, cfg, rows, time.Since(start))
	if err := f.Close(); err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "%s: wrote %s in %s\n", name, cfg.Out, time.Since(start).Round(time.Second))
	return 0
}

// Estimate runs `cfg.Bin estimate --json path` within cfg.Timeout and
// decodes what it prints into an E: "" when it printed an estimate
// (certified or not), else what went wrong — a run that prints no
// estimate is a row of the report, not a failure of the sweep.
func Estimate[E any](ctx context.Context, cfg Config, path string) (E, string) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, cfg.Bin, "estimate", "--json", path)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A child the binary started (ffmpeg) may hold its pipes past a kill.
	cmd.WaitDelay = time.Second
	runErr := cmd.Run()
	var e E
	if err := json.Unmarshal(stdout.Bytes(), &e); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if runErr != nil {
			msg = fmt.Sprintf("%v: %s", runErr, msg)
		}
		return e, msg
	}
	return e, ""
}

// Note is msg as the tail of a sweep's log line: "" for none.
func Note(msg string) string {
	if msg == "" {
		return ""
	}
	return " error: " + msg
}
