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
// mistake (internal/sweepcmd).
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/physd/physd/internal/sweepcmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// config is what the command line sets.
type config = sweepcmd.Config

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return sweepcmd.Main(ctx, "modes", "docs/modes-results.md", 2, args, stdout, stderr, sweep, report)
}
