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
	return sweepcmd.Main(ctx, "subpixel", "docs/subpixel-results.md", 5, args, stdout, stderr, sweep, report)
}
