package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/physd/physd/daemon"
)

const estimateHeader = "CAMERA           WINDOW END (UTC)          γ0 ± σ                γ1 ± σ                f_n Hz           ζ                  REGIME"

// estimateRow is one estimate as a row; a zone's camera column reads
// "<camera>.<zone>", as its subject does.
func estimateRow(e *daemon.Estimate) string {
	name := e.Camera
	if e.Zone != "" {
		name += "." + e.Zone
	}
	return fmt.Sprintf("%-16s %-25s %-21s %-21s %-16s %-18s %s", name, e.WindowEnd.UTC().Format("2006-01-02 15:04:05.000"),
		fmt.Sprintf("%.5f ± %.5f", e.Gamma0, e.Gamma0Sigma), fmt.Sprintf("%.5f ± %.5f", e.Gamma1, e.Gamma1Sigma),
		fmt.Sprintf("%.4f ± %.4f", e.Fn, e.FnSigma), fmt.Sprintf("%.4f ± %.4f", e.Zeta, e.ZetaSigma), e.Regime)
}

// watchHeader is estimateHeader with the board first: physd watch on a
// hub sees every board's cameras, and two boards may name a camera alike.
const watchHeader = "BOARD            " + estimateHeader

// watchRow is estimateRow with the board (the message's node) first.
func watchRow(e *daemon.Estimate) string {
	node := e.Node
	if node == "" {
		node = "-"
	}
	return fmt.Sprintf("%-16s %s", node, estimateRow(e))
}

// cmdWatch is `physd watch [camera]`: print estimates (and alerts) as
// they arrive. Pointed at a hub, it shows every board's: the boards'
// embedded servers, leaf nodes of the hub, forward what is subscribed to.
func cmdWatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("physd watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("nats", nats.DefaultURL, "NATS server URL")
	prefix := fs.String("prefix", "physd", "subject prefix")
	creds := fs.String("creds", "", "NATS credentials file")
	diag := fs.Bool("diag", false, "also print every window's verdict")
	count := fs.Int("n", 0, "exit after this many estimates (0: run until interrupted)")
	board := fs.String("board", "", "only this board's messages (its node.name), on a hub")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("watch: %w: %w", errUsage, err)
	}
	// Every camera and zone; one camera and its zones; or one zone.
	names := []string{"*", "*.*"}
	if fs.NArg() > 1 {
		return fmt.Errorf("watch: %w: at most one camera", errUsage)
	}
	if fs.NArg() == 1 {
		cam := fs.Arg(0)
		parts := strings.Split(cam, ".")
		if len(parts) > 2 || strings.ContainsAny(cam, "*> ") || slices.Contains(parts, "") {
			return fmt.Errorf("watch: %w: camera %q: not a camera name, nor CAMERA.ZONE", errUsage, cam)
		}
		names = []string{cam}
		if len(parts) == 1 {
			names = append(names, cam+".*")
		}
	}
	opts := []nats.Option{nats.Name("physd watch"), nats.Timeout(5 * time.Second)}
	if *creds != "" {
		opts = append(opts, nats.UserCredentials(*creds))
	}
	nc, err := nats.Connect(*url, opts...)
	if err != nil {
		return fmt.Errorf("watch: connect to %s: %w", *url, err)
	}
	defer nc.Close()
	msgs := make(chan *nats.Msg, 256)
	var subjects []string
	for _, cam := range names {
		subjects = append(subjects, daemon.Subject(*prefix, cam, daemon.KindEstimate), daemon.Subject(*prefix, cam, daemon.KindAlert))
		if *diag {
			subjects = append(subjects, daemon.Subject(*prefix, cam, daemon.KindDiagnostic))
		}
	}
	for _, s := range subjects {
		sub, err := nc.ChanSubscribe(s, msgs)
		if err != nil {
			return fmt.Errorf("watch: subscribe %s: %w", s, err)
		}
		defer sub.Unsubscribe()
	}
	fmt.Fprintf(stderr, "watching %s on %s\n", strings.Join(subjects, ", "), *url)
	fmt.Fprintln(stdout, watchHeader)
	n := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-msgs:
			if *board != "" && messageNode(m.Data) != *board {
				continue
			}
			switch {
			case strings.HasSuffix(m.Subject, "."+daemon.KindEstimate):
				e, err := daemon.DecodeEstimate(m.Data)
				if err != nil {
					fmt.Fprintf(stderr, "%s: %v\n", m.Subject, err)
					continue
				}
				fmt.Fprintln(stdout, watchRow(e))
				n++
				if *count > 0 && n >= *count {
					return nil
				}
			case strings.HasSuffix(m.Subject, "."+daemon.KindAlert):
				fmt.Fprintf(stdout, "ALERT %s: %s\n", m.Subject, m.Data)
			default:
				fmt.Fprintf(stdout, "diag  %s: %s\n", m.Subject, m.Data)
			}
		}
	}
}

// messageNode is the "node" field of a message ("" if it has none).
func messageNode(data []byte) string {
	var m struct {
		Node string `json:"node"`
	}
	_ = json.Unmarshal(data, &m) // not JSON: no node
	return m.Node
}
