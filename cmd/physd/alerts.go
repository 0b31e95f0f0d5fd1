package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/physd/physd/alertsub"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// parseDurations reads a comma-separated list of durations ≥ 0.
func parseDurations(s string) ([]time.Duration, error) {
	var out []time.Duration
	if strings.TrimSpace(s) == "" {
		return []time.Duration{}, nil
	}
	for _, p := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%q is not a duration ≥ 0 (e.g. 1s,5s,30s)", p)
		}
		out = append(out, d)
	}
	return out, nil
}

// cmdAlerts is `physd alerts`: a durable JetStream consumer of alerts that
// hands each one to a command or a webhook (package alertsub).
func cmdAlerts(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("physd alerts", flag.ContinueOnError)
	fs.SetOutput(stderr)
	urls := fs.String("nats", nats.DefaultURL, "NATS server URL(s), comma-separated")
	creds := fs.String("creds", "", "NATS credentials file")
	var auth boardAuth
	auth.flags(fs)
	caFile := fs.String("tls-ca", "", "CA certificate file to verify the NATS server")
	certFile := fs.String("tls-cert", "", "client certificate file (with --tls-key)")
	keyFile := fs.String("tls-key", "", "client key file (with --tls-cert)")
	prefix := fs.String("prefix", "physd", "subject prefix, for the default --filter")
	stream := fs.String("stream", alertsub.DefaultStream, "JetStream stream physd publishes to")
	durable := fs.String("durable", alertsub.DefaultDurable, "durable consumer name: its position and handled ids outlive this process")
	var filters listFlag
	fs.Var(&filters, "filter", "subject to consume, repeatable (default PREFIX.*.alert and PREFIX.*.*.alert)")
	execLine := fs.String("exec", "", "command line run by /bin/sh -c per alert, the alert's JSON on stdin")
	webhook := fs.String("webhook", "", "URL to POST each alert's JSON to")
	timeout := fs.Duration("timeout", 30*time.Second, "time limit of one run of the command or request")
	maxDeliver := fs.Int("max-deliver", alertsub.DefaultMaxDeliver, "attempts per alert before it goes to --dead-letter")
	backoff := fs.String("backoff", "1s,5s,30s", "delays before the 2nd, 3rd, … attempt; the last repeats")
	deadLetter := fs.String("dead-letter", alertsub.DefaultDeadLetter, "subject for alerts given up on and messages that are not alerts")
	ackWait := fs.Duration("ack-wait", alertsub.DefaultAckWait, "redelivery delay after a subscriber died mid-alert")
	deliver := fs.String("deliver", "all", "where a new durable starts: all (the stream's oldest alert) or new")
	bucket := fs.String("bucket", alertsub.DefaultBucket, "JetStream key-value bucket of handled alert ids")
	handledTTL := fs.Duration("handled-ttl", alertsub.DefaultHandledTTL, "how long a handled id is remembered")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("alerts: %w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("alerts: %w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	var action alertsub.Action
	switch {
	case (*execLine == "") == (*webhook == ""):
		return fmt.Errorf("alerts: %w: want exactly one of --exec and --webhook", errUsage)
	case *execLine != "":
		action = alertsub.Command{Line: *execLine, Timeout: *timeout}
	default:
		u, err := url.Parse(*webhook)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("alerts: %w: --webhook %q: want an http:// or https:// URL", errUsage, redactURL(*webhook))
		}
		action = alertsub.Webhook{URL: *webhook, Timeout: *timeout}
	}
	if *timeout <= 0 {
		return fmt.Errorf("alerts: %w: --timeout %v: want > 0", errUsage, *timeout)
	}
	delays, err := parseDurations(*backoff)
	if err != nil {
		return fmt.Errorf("alerts: %w: --backoff: %w", errUsage, err)
	}
	if *deliver != "all" && *deliver != "new" {
		return fmt.Errorf("alerts: %w: --deliver %q: want all or new", errUsage, *deliver)
	}
	if (*certFile == "") != (*keyFile == "") {
		return fmt.Errorf("alerts: %w: --tls-cert and --tls-key go together", errUsage)
	}
	if len(filters) == 0 {
		filters = alertsub.DefaultFilters(*prefix)
	}
	if *maxDeliver < 1 {
		return fmt.Errorf("alerts: %w: --max-deliver %d: want ≥ 1", errUsage, *maxDeliver)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg := alertsub.Config{Stream: *stream, Durable: *durable, Filters: filters, Action: action, MaxDeliver: *maxDeliver,
		Backoff: delays, AckWait: *ackWait, DeadLetter: *deadLetter, Bucket: *bucket, HandledTTL: *handledTTL,
		DeliverNew: *deliver == "new", Logger: log}
	if err := cfg.Check(); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}

	opts := []nats.Option{nats.Name("physd alerts"), nats.Timeout(5 * time.Second), nats.MaxReconnects(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("nats disconnected", "err", err) }),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Info("nats reconnected", "url", nc.ConnectedUrlRedacted()) }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { log.Warn("nats error", "err", err) }),
	}
	opts = append(opts, clientAuth(*creds, *caFile, *certFile, *keyFile)...)
	nc, used, err := auth.connect(*urls, *creds, opts...)
	if err != nil {
		return fmt.Errorf("alerts: connect to %s: %w", redactURL(*urls), err)
	}
	if used != "" {
		log.Info("nats: authenticated with an nkey seed", "file", used)
	}
	defer nc.Close()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	sub, err := alertsub.New(sctx, nc, cfg)
	cancel()
	if err != nil {
		return err
	}
	err = sub.Run(ctx)
	st := sub.Stats()
	log.Info("stopped", "handled", st.Handled, "duplicates", st.Duplicates, "failures", st.Failures, "dead_lettered", st.DeadLettered)
	return err
}

// redactURL hides the password of each URL in a comma-separated list.
func redactURL(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil {
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}
