package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/physd/physd/fleet"
)

// cmdFleet is `physd fleet init|add|rm|ls|revoke`: the hub's accounts and
// its aggregate stream of every board's estimates and alerts (package
// fleet, docs/fleet.md).
func cmdFleet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("fleet: %w: want init, creds, add, rm, ls or revoke", errUsage)
	}
	sub := args[0]
	switch sub {
	case "init":
		return cmdFleetInit(args[1:], stdout, stderr)
	case "revoke":
		return cmdFleetRevoke(ctx, args[1:], stdout, stderr)
	case "creds":
		return cmdFleetCreds(args[1:], stdout, stderr)
	case "add", "rm", "ls":
	default:
		return fmt.Errorf("fleet: %w: %q: want init, creds, add, rm, ls or revoke", errUsage, sub)
	}
	fs := flag.NewFlagSet("physd fleet "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	urls := fs.String("nats", nats.DefaultURL, "the hub's NATS URL(s), comma-separated")
	creds := fs.String("creds", "", "NATS credentials file (default with --keys: the operator's, KEYS/operator.creds)")
	keys := fs.String("keys", "", "add: the operator's keys (physd fleet init): also issue each board's credentials, unless it has some")
	caFile := fs.String("tls-ca", "", "CA certificate file to verify the hub")
	certFile := fs.String("tls-cert", "", "client certificate file (with --tls-key)")
	keyFile := fs.String("tls-key", "", "client key file (with --tls-cert)")
	stream := fs.String("stream", fleet.DefaultStream, "the hub's aggregate stream")
	replicas := fs.Int("replicas", 3, "replicas of the aggregate stream when add creates it (3 on a 3-node hub)")
	maxAge := fs.Duration("max-age", 0, "how long the aggregate stream keeps messages when add creates it (0: forever)")
	domain := fs.String("domain", "", "add: the board's JetStream domain (default its name; one board only)")
	boardStream := fs.String("board-stream", fleet.DefaultBoardStream, "add: the boards' stream (nats.jetstream.stream)")
	prefix := fs.String("prefix", fleet.DefaultPrefix, "add: the boards' subject prefix (nats.subject_prefix)")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("fleet %s: %w: %w", sub, errUsage, err)
	}
	switch {
	case sub == "ls" && fs.NArg() > 0:
		return fmt.Errorf("fleet ls: %w: unexpected argument %q", errUsage, fs.Arg(0))
	case sub != "ls" && fs.NArg() == 0:
		return fmt.Errorf("fleet %s: %w: name one or more boards", sub, errUsage)
	case *domain != "" && (sub != "add" || fs.NArg() != 1):
		return fmt.Errorf("fleet %s: %w: --domain goes with add and one board", sub, errUsage)
	case *replicas < 1 || *replicas > 5:
		return fmt.Errorf("fleet %s: %w: --replicas %d: want 1 to 5", sub, errUsage, *replicas)
	case (*certFile == "") != (*keyFile == ""):
		return fmt.Errorf("fleet %s: %w: --tls-cert and --tls-key go together", sub, errUsage)
	}
	var boards []fleet.Board
	for _, name := range fs.Args() {
		if !fleet.ValidName(name) {
			return fmt.Errorf("fleet %s: %w: board %q: want 1 to 64 of A-Z a-z 0-9 _ - (its node.name)", sub, errUsage, name)
		}
		boards = append(boards, fleet.Board{Name: name, Domain: *domain, Stream: *boardStream, Prefix: *prefix})
	}
	if *keys != "" {
		if sub != "add" {
			return fmt.Errorf("fleet %s: %w: --keys goes with add", sub, errUsage)
		}
		is, err := fleet.LoadIssuer(*keys)
		if err != nil {
			return err
		}
		// The credentials first: a board can be given them before the
		// hub is up.
		for _, b := range boards {
			if path, ok := is.BoardCreds(b.Name); ok {
				fmt.Fprintf(stdout, "%s: credentials %s (issued before; physd fleet creds issues new ones)\n", b.Name, path)
				continue
			}
			path, err := is.IssueBoard(b.Name, b.Domain)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s: credentials %s (copy to the board; nats.embedded.leafnodes.credentials_file)\n", b.Name, path)
		}
		if *creds == "" {
			*creds = filepath.Join(*keys, fleet.OperatorCreds)
		}
	}
	opts := []nats.Option{nats.Name("physd fleet"), nats.Timeout(5 * time.Second)}
	opts = append(opts, clientAuth(*creds, *caFile, *certFile, *keyFile)...)
	nc, err := nats.Connect(*urls, opts...)
	if err != nil {
		return fmt.Errorf("fleet %s: connect to %s: %w", sub, redactURL(*urls), err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("fleet %s: jetstream: %w", sub, err)
	}
	hub := fleet.New(js, fleet.Options{Stream: *stream, Replicas: *replicas, MaxAge: *maxAge})
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	switch sub {
	case "add":
		if err := hub.Add(ctx, boards...); err != nil {
			return err
		}
		for _, b := range boards {
			fmt.Fprintf(stdout, "%s: sourcing %s from domain %s as %s\n", *stream, b.Stream, orName(b.Domain, b.Name), fleet.Subject(b.Name, b.Prefix+".>"))
		}
	case "rm":
		if err := hub.Remove(ctx, fs.Args()...); err != nil {
			return err
		}
		for _, name := range fs.Args() {
			fmt.Fprintf(stdout, "%s: no longer sourcing board %s (its messages so far stay)\n", *stream, name)
		}
	case "ls":
		list, state, err := hub.List(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%-20s %-20s %-20s %8s %12s  %s\n", "BOARD", "DOMAIN", "STREAM", "LAG", "ACTIVE", "ERROR")
		for _, b := range list {
			active := "never"
			if b.Active >= 0 {
				active = b.Active.Round(time.Millisecond).String() + " ago"
			}
			fmt.Fprintf(stdout, "%-20s %-20s %-20s %8d %12s  %s\n", b.Name, b.Domain, b.Stream, b.Lag, active, b.Error)
		}
		fmt.Fprintf(stdout, "%s: %d boards, %d messages\n", *stream, len(list), state.Msgs)
	}
	return nil
}

// cmdFleetInit is `physd fleet init --keys DIR`: the operator's keys, the
// hub's accounts and the first credentials.
func cmdFleetInit(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("physd fleet init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keys := fs.String("keys", "", "a new directory for the operator's keys and the credentials it issues (keep it off the hub and the boards)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("fleet init: %w: %w", errUsage, err)
	}
	if *keys == "" || fs.NArg() > 0 {
		return fmt.Errorf("fleet init: %w: want --keys DIR and nothing else", errUsage)
	}
	is, err := fleet.Init(*keys)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "operator keys in %s (0600); account %s %s\n", is.Dir, fleet.FleetAccountName, is.FleetAccount())
	fmt.Fprintf(stdout, "hub nodes: include %s and a full resolver (docs/fleet.md)\n", filepath.Join(is.Dir, fleet.HubAccountsConf))
	fmt.Fprintf(stdout, "operator: %s; subscribers (read-only): %s; account updates: %s\n",
		filepath.Join(is.Dir, fleet.OperatorCreds), filepath.Join(is.Dir, fleet.SubscriberCreds), filepath.Join(is.Dir, fleet.SysCreds))
	return nil
}

// cmdFleetCreds is `physd fleet creds --keys DIR BOARD...`: each board's
// credentials, issued without touching the hub (physd fleet add --keys
// issues them too); --subscriber FILE issues read-only credentials.
func cmdFleetCreds(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("physd fleet creds", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keys := fs.String("keys", "", "the operator's keys (physd fleet init)")
	domain := fs.String("domain", "", "the board's JetStream domain (default its name; one board only)")
	subscriber := fs.String("subscriber", "", "instead: read-only credentials for the aggregate stream, written to this file")
	stream := fs.String("stream", fleet.DefaultStream, "with --subscriber: the aggregate stream")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("fleet creds: %w: %w", errUsage, err)
	}
	switch {
	case *keys == "":
		return fmt.Errorf("fleet creds: %w: want --keys DIR", errUsage)
	case *subscriber == "" && fs.NArg() == 0:
		return fmt.Errorf("fleet creds: %w: name one or more boards, or --subscriber FILE", errUsage)
	case *subscriber != "" && fs.NArg() > 0:
		return fmt.Errorf("fleet creds: %w: --subscriber or boards, not both", errUsage)
	case *domain != "" && fs.NArg() != 1:
		return fmt.Errorf("fleet creds: %w: --domain goes with one board", errUsage)
	}
	is, err := fleet.LoadIssuer(*keys)
	if err != nil {
		return err
	}
	if *subscriber != "" {
		path, err := is.IssueSubscriber(*stream, *subscriber)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "subscriber (read-only, %s): credentials %s\n", *stream, path)
		return nil
	}
	for _, b := range fs.Args() {
		path, err := is.IssueBoard(b, *domain)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: credentials %s (copy to the board; nats.embedded.leafnodes.credentials_file)\n", b, path)
	}
	return nil
}

// cmdFleetRevoke is `physd fleet revoke --keys DIR --nats HUB BOARD...`:
// every user issued to the boards revoked in the FLEET account's JWT,
// pushed to the hub's resolver (no restart; the boards' leaf node
// connections are closed and refused from then on).
func cmdFleetRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("physd fleet revoke", flag.ContinueOnError)
	fs.SetOutput(stderr)
	urls := fs.String("nats", nats.DefaultURL, "the hub's NATS URL(s), comma-separated")
	keys := fs.String("keys", "", "the operator's keys (physd fleet init)")
	sysCreds := fs.String("sys-creds", "", "the system user's credentials (default KEYS/sys.creds)")
	caFile := fs.String("tls-ca", "", "CA certificate file to verify the hub")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("fleet revoke: %w: %w", errUsage, err)
	}
	if *keys == "" || fs.NArg() == 0 {
		return fmt.Errorf("fleet revoke: %w: want --keys DIR and one or more boards", errUsage)
	}
	if *sysCreds == "" {
		*sysCreds = filepath.Join(*keys, fleet.SysCreds)
	}
	is, err := fleet.LoadIssuer(*keys)
	if err != nil {
		return err
	}
	var token string
	for _, b := range fs.Args() {
		if token, err = is.Revoke(b); err != nil {
			return err
		}
	}
	nc, err := nats.Connect(*urls, append([]nats.Option{nats.Name("physd fleet revoke"), nats.Timeout(5 * time.Second)}, clientAuth(*sysCreds, *caFile, "", "")...)...)
	if err != nil {
		return fmt.Errorf("fleet revoke: connect to %s: %w (the revocation is in %s; run again to push it)", redactURL(*urls), err, *keys)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	msg, err := fleet.Push(ctx, nc, token)
	if err != nil {
		return err
	}
	for _, b := range fs.Args() {
		fmt.Fprintf(stdout, "%s: revoked (%s)\n", b, msg)
	}
	return nil
}

// orName returns domain, or name when domain is empty (a board's domain
// defaults to its name).
func orName(domain, name string) string {
	if domain == "" {
		return name
	}
	return domain
}

// clientAuth is the connection options of a command-line client (physd
// alerts, physd fleet): a credentials file, a CA to verify the server
// and a client certificate, each when given.
func clientAuth(creds, caFile, certFile, keyFile string) []nats.Option {
	var opts []nats.Option
	if creds != "" {
		opts = append(opts, nats.UserCredentials(creds))
	}
	if caFile != "" {
		opts = append(opts, nats.RootCAs(caFile))
	}
	if certFile != "" {
		opts = append(opts, nats.ClientCert(certFile, keyFile))
	}
	return opts
}
