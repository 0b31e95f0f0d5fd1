package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/physd/physd/config"
	"github.com/physd/physd/daemon"
	"github.com/physd/physd/wire"
)

// cmdRun is `physd run`: the daemon. With no --config it runs the built-in
// default (embedded NATS, one synthetic pendulum camera).
func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("physd run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "YAML configuration file (default: the built-in default: embedded NATS and a synthetic pendulum camera)")
	stateDir := fs.String("state-dir", "", "state directory (overrides $STATE_DIRECTORY and the config's state_dir)")
	forDur := fs.Duration("for", 0, "stop after this long (0: run until SIGINT/SIGTERM)")
	quiet := fs.Bool("quiet", false, "do not print certified estimates on stdout")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof); for measuring, not for production")
	memProfile := fs.String("memprofile", "", "write a heap profile to this file when the run is asked to stop, before the cameras close (the heap as of the last collection; go tool pprof); for measuring")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("run: %w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run: %w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	load := func() (*config.Config, error) {
		if *cfgPath == "" {
			return config.Default(), nil
		}
		return config.LoadWith(*cfgPath, daemon.Vocabulary())
	}
	cfg, err := load()
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	dir, err := config.StateDir(cfg, *stateDir)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	log := newLogger(cfg.Log, stderr)
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return fmt.Errorf("run: %w", err)
		}
		defer stop()
	}
	if len(cfg.Cameras) == 0 {
		log.Warn("no cameras configured")
	}
	// A soft heap limit keeps a small board's resident set flat: the
	// runtime collects harder near it instead of growing the heap. About
	// 75 MB of the resident set are the binary and Debian's OpenCV/FFmpeg
	// libraries (100 before `make build` stopped loading videoio at
	// start), so the Go heap is what there is to bound. It must stay above the live
	// heap, or the collector runs back to back: a 640×480 camera's live
	// heap peaks near 60 MB while a window is estimated (its frames, the
	// exposure-normalised copies the fits read, the replayed window), and
	// under the old 32 + 8 MiB a camera the daemon collected 60 times a
	// second and spent 25 % of its CPU doing it. Measured on one real
	// camera (docs/benchmarks.md): 72 MiB took 30–45 % off the CPU for
	// 4–24 MiB more resident set; 96 MiB saved little more and cost
	// 20–40 MiB. The heap a window holds is a line's, so the limit counts
	// lines: a camera with two zones estimates two windows, like two
	// cameras (under a camera's 24 MiB its two zones spent a fifth of
	// their CPU allocating and collecting; make bench's zones row). On a
	// live reload the limit stays as set at start. $GOMEMLIMIT overrides it.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(int64(48+24*lines(cfg)) << 20)
	}
	opt := daemon.Options{StateDir: dir, Logger: log, Notifier: daemon.Systemd{}}
	if !*quiet {
		printed := false
		opt.OnEstimate = func(e wire.Estimate) {
			if !printed {
				fmt.Fprintln(stdout, estimateHeader)
				printed = true
			}
			fmt.Fprintln(stdout, estimateRow(&e))
		}
	}
	d, err := daemon.New(cfg, opt)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if *forDur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *forDur)
		defer cancel()
	}
	// SIGHUP reloads the configuration; an invalid one is rejected and the
	// running one stays.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				next, err := load()
				if err != nil {
					log.Error("reload rejected; the running configuration stays", "err", err)
					continue
				}
				d.Reload(next)
			}
		}
	}()
	if iv := daemon.WatchdogInterval(); iv > 0 {
		go func() {
			t := time.NewTicker(iv)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					d.Ping()
				}
			}
		}()
	}
	var heapDone chan error
	if *memProfile != "" {
		heapDone = make(chan error, 1)
		go func() {
			<-ctx.Done()
			heapDone <- writeHeapProfile(*memProfile)
		}()
	}
	err = d.Run(ctx, nil)
	if heapDone != nil {
		if herr := <-heapDone; herr != nil && err == nil {
			err = herr
		}
	}
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	return nil
}

// writeHeapProfile writes the heap profile (as of the last collection) to
// path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("memprofile: %w", err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("memprofile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("memprofile: %w", err)
	}
	return nil
}

// startCPUProfile profiles the process's CPU to path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// newLogger is text on a terminal, JSON under systemd (config log.format).
func newLogger(c config.Log, w io.Writer) *slog.Logger {
	o := &slog.HandlerOptions{Level: c.SlogLevel()}
	if c.EffectiveFormat() == config.FormatJSON {
		return slog.New(slog.NewJSONHandler(w, o))
	}
	return slog.New(slog.NewTextHandler(w, o))
}

// cmdConfig is `physd config check FILE`.
func cmdConfig(args []string, stdout io.Writer) error {
	if len(args) != 2 || args[0] != "check" {
		return fmt.Errorf("config: %w: physd config check FILE", errUsage)
	}
	cfg, err := config.LoadWith(args[1], daemon.Vocabulary())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: ok (%d camera(s))\n", args[1], len(cfg.Cameras))
	return nil
}

// lines is how many lines the configuration's cameras run: one a camera,
// or one a zone of a camera with zones.
func lines(cfg *config.Config) int {
	n := 0
	for _, c := range cfg.Cameras {
		n += max(len(c.Zones), 1)
	}
	return n
}
