// Command real runs physd estimate on the real-footage dev set — the
// camera clips and truth table in ../shared/realvid (see
// internal/realvid) — and writes a Markdown report with a figure per run.
//
// Every case of truth.tsv is run twice, as separate processes: once with
// its listed flags, and once with --roi removed (physd then finds the
// region where the scene oscillates, or uses the whole frame). Each
// run's wall time, from process start to exit, is measured; runs are
// sequential by default (-jobs 1) so the times are honest.
//
// Usage:
//
//	go run ./cmd/real -bin bin/physd -dir ../shared/realvid -out docs/real-results.md -plots docs/real-plots [-only NAME[,NAME]] [-jobs N]
//
// make real runs it. The exit status is 0 when the report is written,
// whatever the estimates; 1 when it cannot be (no table, no binary, an
// unwritable output), 2 for a command-line mistake.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/physd/physd/internal/realvid"
)

// listFlag collects a repeatable, comma-separated flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			*l = append(*l, n)
		}
	}
	return nil
}

// config is what the command line sets.
type config struct {
	bin, dir, out, plots string
	only                 []string
	jobs                 int
	timeout              time.Duration
	args                 []string // the command line, for the report
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("real", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	var only listFlag
	fs.StringVar(&cfg.bin, "bin", "bin/physd", "the physd binary to run")
	fs.StringVar(&cfg.dir, "dir", "../shared/realvid", "the dev set: truth.tsv and the clips it names")
	fs.StringVar(&cfg.out, "out", "docs/real-results.md", "the Markdown report to write")
	fs.StringVar(&cfg.plots, "plots", "docs/real-plots", "the directory for each run's figure (CASE.png, CASE-noroi.png)")
	fs.Var(&only, "only", "run only the case `NAME` (repeatable, or a comma-separated list)")
	fs.IntVar(&cfg.jobs, "jobs", 1, "runs at a time (estimate is CPU-bound: more than 1 skews the wall times)")
	fs.DurationVar(&cfg.timeout, "timeout", 20*time.Minute, "limit on one run")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "real: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if cfg.jobs < 1 {
		fmt.Fprintf(stderr, "real: -jobs %d: need at least 1\n", cfg.jobs)
		return 2
	}
	cfg.only, cfg.args = only, args
	if err := realRun(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "real:", err)
		return 1
	}
	return 0
}

func realRun(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	all, err := realvid.ParseFile(filepath.Join(cfg.dir, "truth.tsv"))
	if err != nil {
		return err
	}
	cases, err := realvid.Select(all, cfg.only)
	if err != nil {
		return err
	}
	if _, err := os.Stat(cfg.bin); err != nil {
		return fmt.Errorf("-bin: %w (make build first)", err)
	}
	if err := os.MkdirAll(cfg.plots, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(cfg.out), 0o755); err != nil {
		return err
	}

	var runs []*runResult
	for _, c := range cases {
		for _, m := range []mode{modeListed, modeNoROI} {
			runs = append(runs, &runResult{Case: c, Mode: m})
		}
	}
	start := time.Now()
	var mu sync.Mutex
	work := make(chan *runResult)
	var wg sync.WaitGroup
	for range min(cfg.jobs, len(runs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				execute(ctx, cfg, r)
				mu.Lock()
				fmt.Fprintln(stderr, progressLine(r))
				mu.Unlock()
			}
		}()
	}
	for _, r := range runs {
		if ctx.Err() != nil {
			break
		}
		work <- r
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}

	rep := report{
		Cases: cases, Runs: runs, Took: time.Since(start),
		Command: "go run ./cmd/real " + shellJoin(cfg.args),
		Version: gitDescribe(ctx), Date: start.UTC(), Jobs: cfg.jobs,
		Out: cfg.out, ViaMake: os.Getenv("MAKELEVEL") != "",
	}
	s := rep.summarise()
	if err := writeFile(cfg.out, rep.markdown(s)); err != nil {
		return err
	}
	for _, l := range s.lines() {
		fmt.Fprintln(stdout, l)
	}
	fmt.Fprintf(stdout, "wrote %s and %d figures to %s in %s\n", cfg.out, rep.plots(), cfg.plots, rep.Took.Round(time.Second))
	return nil
}

// writeFile replaces path with data, through a temporary file in the same
// directory so a failed run leaves the previous report whole.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".real-*.md")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func progressLine(r *runResult) string {
	if r.Err != "" {
		return fmt.Sprintf("%-32s %-12s error in %5.1f s: %s", r.Case.Name, r.Mode, r.Wall.Seconds(), r.Err)
	}
	j := r.judgement()
	exp := "as expected"
	switch {
	case j.FalseCertificate:
		exp = "FALSE CERTIFICATE"
	case !j.AsExpected:
		exp = "not as expected"
	}
	verdict := r.Est.Verdict
	if r.outcome().Imprecise() {
		verdict += " (identified, imprecise)"
	}
	return fmt.Sprintf("%-32s %-12s %-20s γ0 %.4f ± %.4f  γ1 %.4f ± %.4f  %5.1f s  %s",
		r.Case.Name, r.Mode, verdict, r.Est.Gamma0, r.Est.Sigma0, r.Est.Gamma1, r.Est.Sigma1, r.Wall.Seconds(), exp)
}

// shellJoin quotes args for a POSIX shell where needed.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,=:+@") == "" {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// machine describes where the report was made.
func machine() string {
	return fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
}
