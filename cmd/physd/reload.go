package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"syscall"

	"github.com/physd/physd/config"
	"github.com/physd/physd/daemon"
)

// cmdReload is `physd reload --config FILE PID`, the unit's ExecReload: it
// validates the configuration the daemon is about to read and only then
// sends the daemon SIGHUP. The package needs no kill(1) (procps is not in
// a minimal Debian root), and `systemctl reload physd` fails, naming the
// file and the field, when the configuration is invalid, instead of
// succeeding while the daemon logs that it kept the running one.
func cmdReload(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("physd reload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "the configuration file the daemon reads (checked before the signal; empty: not checked)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("reload: %w: %w", errUsage, err)
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("reload: %w: physd reload [--config FILE] PID", errUsage)
	}
	pid, err := strconv.Atoi(fs.Arg(0))
	// kill(2) with 0 or a negative pid signals a process group, and pid 1
	// is init: never what a reload means (an empty $MAINPID lands here).
	if err != nil || pid <= 1 {
		return fmt.Errorf("reload: %w: PID %q: want the daemon's process id, a number above 1", errUsage, fs.Arg(0))
	}
	if *cfgPath != "" {
		cfg, err := config.LoadWith(*cfgPath, daemon.Vocabulary())
		if err != nil {
			return fmt.Errorf("reload: not signalled, the running configuration stays: %w", err)
		}
		fmt.Fprintf(stdout, "%s: ok (%d camera(s))\n", *cfgPath, len(cfg.Cameras))
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("reload: process %d: no such process", pid)
		}
		return fmt.Errorf("reload: SIGHUP to process %d: %w", pid, err)
	}
	fmt.Fprintf(stdout, "reload: SIGHUP sent to process %d\n", pid)
	return nil
}
