package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/physd/physd/fleet"
	"github.com/physd/physd/wire"
)

const estimateHeader = "CAMERA           WINDOW END (UTC)          γ0 ± σ                γ1 ± σ                f_n Hz           ζ                  REGIME      AMPLITUDE (RMS NOISE)"

// estimateRow is one estimate as a row; a zone's camera column reads
// "<camera>.<zone>", as its subject does. The amplitude comes last, as
// long as it needs (amplitudeText), and an ambient estimate's record
// after it.
func estimateRow(e *wire.Estimate) string {
	row := fmt.Sprintf("%-16s %-25s %-21s %-21s %-16s %-18s %-11s %s", e.Key(), e.WindowEnd.UTC().Format("2006-01-02 15:04:05.000"),
		fmt.Sprintf("%.5f ± %.5f", e.Gamma0, e.Gamma0Sigma), fmt.Sprintf("%.5f ± %.5f", e.Gamma1, e.Gamma1Sigma),
		fmt.Sprintf("%.4f ± %.4f", e.Fn, e.FnSigma), fmt.Sprintf("%.4f ± %.4f", e.Zeta, e.ZetaSigma), e.Regime, amplitudeText(e.Amplitude))
	if a := e.Ambient; a != nil {
		row += fmt.Sprintf(", ambient record %.0f s (%d frames)", a.Record, a.Frames)
	}
	if m := e.Mode; m != nil {
		row += fmt.Sprintf(", mode %d (%d of %d in the window)", m.Label, m.Index, m.Of)
	}
	return row
}

// amplitudeText is an amplitude and its noise floor in a few words:
// "4.00 px (noise 0.100)", and with a scale
// "4.00 px (noise 0.100) = 2.00 mm (noise 0.0500)", and ", codec held 43%"
// after either when the stream's codec held the moving pixels still in
// some frames; "-" when the estimate has none.
func amplitudeText(a *wire.Amplitude) string {
	if a == nil {
		return "-"
	}
	s := fmt.Sprintf("%s px (noise %s)", sig3(a.Px), sig3(a.NoisePx))
	if a.MM != nil && a.NoiseMM != nil {
		s += fmt.Sprintf(" = %s mm (noise %s)", sig3(*a.MM), sig3(*a.NoiseMM))
	}
	if a.HeldShare > 0 {
		s += fmt.Sprintf(", codec held %.0f%%", 100*a.HeldShare)
	}
	return s
}

// sig3 writes v with three significant digits and no exponent between
// 0.0001 and 10⁶ (1.23, 0.0450, 120, 4560).
func sig3(v float64) string {
	a := math.Abs(v)
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) || a < 1e-4 || a >= 1e6 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', max(0, 2-int(math.Floor(math.Log10(a)))), 64)
}

// watchHeader is estimateHeader with the board first: physd watch on a
// hub sees every board's cameras, and two boards may name a camera alike.
const watchHeader = "BOARD            " + estimateHeader

// watchRow is estimateRow with the board (the message's node) first.
func watchRow(e *wire.Estimate) string {
	node := e.Node
	if node == "" {
		node = "-"
	}
	return fmt.Sprintf("%-16s %s", node, estimateRow(e))
}

// cmdWatch is `physd watch [camera]`: print estimates (and alerts) as
// they arrive. With --fleet, pointed at a hub, it reads the hub's
// aggregate stream (physd fleet) from its newest message on: every
// board's, which reach the hub only by that stream's sourcing (the
// boards' subjects do not cross their leaf node connections).
func cmdWatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("physd watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("nats", nats.DefaultURL, "NATS server URL")
	prefix := fs.String("prefix", "physd", "subject prefix")
	creds := fs.String("creds", "", "NATS credentials file")
	var auth boardAuth
	auth.flags(fs)
	diag := fs.Bool("diag", false, "also print every window's verdict")
	count := fs.Int("n", 0, "exit after this many estimates (0: run until interrupted)")
	board := fs.String("board", "", "only this board's messages (its node.name)")
	fleetMode := fs.Bool("fleet", false, "read a hub's aggregate stream (physd fleet): every board's estimates and alerts")
	stream := fs.String("stream", fleet.DefaultStream, "with --fleet: the aggregate stream")
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
	if *fleetMode && *diag {
		return fmt.Errorf("watch: %w: --diag and --fleet: the aggregate stream holds estimates and alerts only", errUsage)
	}
	if *board != "" && !fleet.ValidName(*board) {
		return fmt.Errorf("watch: %w: --board %q: not a node name", errUsage, *board)
	}
	opts := []nats.Option{nats.Name("physd watch"), nats.Timeout(5 * time.Second)}
	if *creds != "" {
		opts = append(opts, nats.UserCredentials(*creds))
	}
	nc, _, err := auth.connect(*url, *creds, opts...)
	if err != nil {
		return fmt.Errorf("watch: connect to %s: %w", *url, err)
	}
	defer nc.Close()
	msgs := make(chan *nats.Msg, 256)
	var subjects []string
	for _, cam := range names {
		subjects = append(subjects, wire.Subject(*prefix, cam, wire.KindEstimate), wire.Subject(*prefix, cam, wire.KindAlert),
			// Modes beyond the first (wire.ModeSubject).
			wire.ModeFilter(*prefix, cam, wire.KindEstimate), wire.ModeFilter(*prefix, cam, wire.KindAlert),
			// A raised alert's evidence, once its clip is written.
			wire.Subject(*prefix, cam, wire.KindEvidence))
		if *diag {
			subjects = append(subjects, wire.Subject(*prefix, cam, wire.KindDiagnostic))
		}
	}
	if *fleetMode {
		boardTok := *board
		if boardTok == "" {
			boardTok = "*"
		}
		for i, subj := range subjects {
			subjects[i] = fleet.Subject(boardTok, subj)
		}
		// Cancelled at return, so that a callback waiting to hand over a
		// message returns.
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop, err := consumeNew(cctx, nc, *stream, subjects, msgs, stderr)
		if err != nil {
			return err
		}
		defer stop()
	} else {
		for _, s := range subjects {
			sub, err := nc.ChanSubscribe(s, msgs)
			if err != nil {
				return fmt.Errorf("watch: subscribe %s: %w", s, err)
			}
			defer sub.Unsubscribe()
		}
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
			subj := m.Subject
			if *fleetMode {
				// The board is the one in the subject (its credentials'
				// on a hub with accounts); a message claiming another is
				// refused.
				if err := fleet.CheckClaim(subj, m.Header.Get(nats.MsgIdHdr), m.Data); err != nil {
					fmt.Fprintf(stderr, "refused: %v\n", err)
					continue
				}
				if _, s, ok := fleet.ParseSubject(subj); ok {
					subj = s
				}
			}
			_, _, kind, err := wire.ParseSubject(*prefix, subj)
			switch {
			case err != nil:
				fmt.Fprintf(stderr, "%v\n", err)
			case kind == wire.KindEstimate:
				e, err := wire.DecodeEstimate(m.Data)
				if err != nil {
					fmt.Fprintf(stderr, "%s: %v\n", m.Subject, err)
					continue
				}
				fmt.Fprintln(stdout, watchRow(e))
				n++
				if *count > 0 && n >= *count {
					return nil
				}
			case kind == wire.KindAlert:
				fmt.Fprintf(stdout, "ALERT %s: %s\n", m.Subject, m.Data)
			case kind == wire.KindEvidence:
				fmt.Fprintln(stdout, evidenceRow(m.Subject, m.Data))
			default:
				fmt.Fprintf(stdout, "diag  %s: %s\n", m.Subject, m.Data)
			}
		}
	}
}

// evidenceRow is an evidence message in one line: its alert, and each
// file with its sha256 (the message as it came when it does not decode).
func evidenceRow(subject string, data []byte) string {
	var ev wire.Evidence
	if err := json.Unmarshal(data, &ev); err != nil || ev.Schema != wire.SchemaEvidence {
		return fmt.Sprintf("EVIDENCE %s: %s", subject, data)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "EVIDENCE %s: alert %s", subject, ev.Alert)
	for _, f := range ev.Files {
		fmt.Fprintf(&b, "; %s %s (%d B, sha256 %s)", f.Kind, f.Name, f.Bytes, f.SHA256)
	}
	if ev.Note != "" {
		fmt.Fprintf(&b, "; %s", ev.Note)
	}
	return b.String()
}

// messageNode is the "node" field of a message ("" if it has none).
func messageNode(data []byte) string {
	var m struct {
		Node string `json:"node"`
	}
	_ = json.Unmarshal(data, &m) // not JSON: no node
	return m.Node
}

// consumeNew sends the messages that arrive in stream on subjects, from
// now on, to msgs, through an ordered consumer (which recreates itself
// after a hub outage, without gaps); stop ends it. What it retries it
// says on stderr.
func consumeNew(ctx context.Context, nc *nats.Conn, stream string, subjects []string, msgs chan<- *nats.Msg, stderr io.Writer) (stop func(), err error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("watch: jetstream: %w", err)
	}
	// A hub that does not answer in time (its stream's leader being
	// elected, a node away) is asked again for a minute; a stream that is
	// not there is an error at once.
	var cons jetstream.Consumer
	for giveUp := time.Now().Add(time.Minute); ; {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		cons, err = js.OrderedConsumer(cctx, stream, jetstream.OrderedConsumerConfig{FilterSubjects: subjects, DeliverPolicy: jetstream.DeliverNewPolicy})
		cancel()
		if err == nil {
			break
		}
		if errors.Is(err, jetstream.ErrStreamNotFound) || ctx.Err() != nil || time.Now().After(giveUp) {
			return nil, fmt.Errorf("watch: stream %s: %w", stream, err)
		}
		fmt.Fprintf(stderr, "watch: stream %s: %v; asking again\n", stream, err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("watch: stream %s: %w", stream, ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		select {
		case msgs <- &nats.Msg{Subject: m.Subject(), Header: m.Headers(), Data: m.Data()}:
		case <-ctx.Done():
		}
	})
	if err != nil {
		return nil, fmt.Errorf("watch: stream %s: %w", stream, err)
	}
	return cc.Stop, nil
}
