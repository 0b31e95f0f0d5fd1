// Command physd watches vibrating objects through a camera and reports the
// coefficients (γ1, γ0) of z” + γ1 z' + γ0 z = 0, with a certificate of
// uniqueness.
//
// Usage:
//
//	physd run [flags]                the daemon
//	physd watch [flags] [CAMERA]     print estimates as they arrive
//	physd alerts [flags]             hand each alert to a command or webhook
//	physd fleet init|creds|add|rm|ls|revoke [flags] [BOARD...]  a hub's accounts and its aggregate stream of every board
//	physd config check FILE          validate a configuration file
//	physd sim [flags] OUT.mp4...     render synthetic videos with known physics
//	physd estimate [flags] VIDEO...  estimate (γ1, γ0) from one or more videos
//	physd version
//
// Exit status: 0 success (for estimate: certified), 3 estimate made but not
// certified, 1 error, 2 usage.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes.
const (
	exitOK           = 0
	exitError        = 1
	exitUsage        = 2
	exitNotCertified = 3
)

// version is set at link time (-ldflags "-X main.version=…").
var version = "dev"

// errUsage marks a command-line mistake (exit 2).
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	var err error
	code := exitOK
	switch args[0] {
	case "sim":
		err = cmdSim(ctx, args[1:], stdout, stderr)
	case "estimate":
		code, err = cmdEstimate(ctx, args[1:], stdout, stderr, log)
	case "run":
		err = cmdRun(ctx, args[1:], stdout, stderr)
	case "watch":
		err = cmdWatch(ctx, args[1:], stdout, stderr)
	case "alerts":
		err = cmdAlerts(ctx, args[1:], stderr)
	case "fleet":
		err = cmdFleet(ctx, args[1:], stdout, stderr)
	case "config":
		err = cmdConfig(args[1:], stdout)
	case "reload":
		err = cmdReload(args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "physd", version)
	case "help", "-h", "--help":
		usage(stdout)
	default:
		fmt.Fprintf(stderr, "physd: unknown command %q\n", args[0])
		usage(stderr)
		return exitUsage
	}
	switch {
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "physd:", err)
		return exitUsage
	case err != nil:
		fmt.Fprintln(stderr, "physd:", err)
		return exitError
	}
	return code
}

func usage(w io.Writer) {
	fmt.Fprint(w, `physd — physics (γ1, γ0) of z'' + γ1 z' + γ0 z = 0 from video, certified unique

Commands:
  physd run [--config FILE] [--state-dir DIR] [--for DURATION]
                                   the daemon: cameras → windows → certified estimates on NATS
  physd watch [--nats URL] [--fleet] [CAMERA]
                                   print estimates and alerts as they arrive (--fleet: every board, from a hub)
  physd alerts [--nats URL] --exec CMD | --webhook URL
                                   hand each alert to a command or webhook, exactly once, retried, dead-lettered
  physd fleet init|creds|add|rm|ls|revoke [--nats HUB] [--keys DIR] [BOARD...]
                                   on a hub: accounts, board credentials, revocation, and the aggregate
                                   stream sourcing every board's stream (docs/fleet.md)
  physd config check FILE          validate a configuration file
  physd reload [--config FILE] PID check FILE, then send the daemon (PID) SIGHUP: the unit's ExecReload
  physd sim [flags] OUT.mp4...     render synthetic videos with known physics (H.264)
  physd estimate [flags] VIDEO...  estimate (γ1, γ0) from one video, or a multi-trajectory fit from several
  physd version                    print the version

Run 'physd COMMAND -h' for a command's flags.
Exit status: 0 ok/certified, 3 estimate not certified, 1 error, 2 usage.
`)
}
