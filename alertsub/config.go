package alertsub

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/physd/physd/wire"
)

// Defaults of Config.
const (
	DefaultStream     = "PHYSD_ESTIMATES"
	DefaultDurable    = "physd-alerts"
	DefaultDeadLetter = "physd.alerts.dead"
	DefaultBucket     = wire.AlertsBucket // the one the board's server lets it keep
	DefaultMaxDeliver = 5
	DefaultAckWait    = time.Minute
	DefaultHandledTTL = 30 * 24 * time.Hour
)

// DefaultBackoff returns the retry delays Config.Backoff defaults to: 1 s
// after the first failure, 5 s after the second, 30 s after each later one.
func DefaultBackoff() []time.Duration {
	return []time.Duration{time.Second, 5 * time.Second, 30 * time.Second}
}

// DefaultFilters are the alert subjects of every camera and zone under
// prefix: prefix.*.alert and prefix.*.*.alert, and those of their modes
// beyond the first, prefix.modes.*.alert.* and prefix.modes.*.*.alert.*
// (wire.ModeSubject).
func DefaultFilters(prefix string) []string {
	return []string{wire.Subject(prefix, "*", wire.KindAlert), wire.Subject(prefix, "*.*", wire.KindAlert),
		wire.ModeFilter(prefix, "*", wire.KindAlert), wire.ModeFilter(prefix, "*.*", wire.KindAlert)}
}

// Config configures a Subscriber.
type Config struct {
	// Stream is the JetStream stream physd publishes to.
	Stream string
	// Durable names the consumer; its position and its record of handled
	// alerts outlive the subscriber.
	Durable string
	// Filters are the subjects consumed (wildcards allowed).
	Filters []string
	// Action takes each alert.
	Action Action
	// MaxDeliver is the number of attempts of the action per alert before
	// it goes to DeadLetter.
	MaxDeliver int
	// Backoff are the delays before the 2nd, 3rd, … attempt; the last
	// repeats. Empty retries at once.
	Backoff []time.Duration
	// AckWait is how long the server waits for an answer before it
	// redelivers (a subscriber that died); a running action keeps it
	// alive.
	AckWait time.Duration
	// DeadLetter is the subject an alert goes to after MaxDeliver failed
	// attempts, or at once when it is not a valid alert.
	DeadLetter string
	// Bucket is the key-value bucket of handled alert ids.
	Bucket string
	// HandledTTL is how long an id is remembered; longer than any
	// redelivery or re-publication of an alert (the stream keeps 30 days).
	HandledTTL time.Duration
	// DeliverNew starts a consumer that does not exist yet at the next
	// alert rather than at the stream's oldest.
	DeliverNew bool
	// Logger receives what happens to each alert; nil discards.
	Logger *slog.Logger
}

var (
	validName    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	validSubject = regexp.MustCompile(`^[^\s.*>]+(\.[^\s.*>]+)*$`)
	validFilter  = regexp.MustCompile(`^([^\s.*>]+|\*)(\.([^\s.*>]+|\*))*(\.>)?$|^>$`)
)

// Check reports what is wrong with c (after the defaults are filled in),
// naming each field; nil when New would accept it.
func (c Config) Check() error {
	_, err := c.withDefaults()
	return err
}

// withDefaults fills unset fields and checks the result; an error names
// the field.
func (c Config) withDefaults() (Config, error) {
	if c.Stream == "" {
		c.Stream = DefaultStream
	}
	if c.Durable == "" {
		c.Durable = DefaultDurable
	}
	if len(c.Filters) == 0 {
		c.Filters = DefaultFilters("physd")
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = DefaultMaxDeliver
	}
	if c.Backoff == nil {
		c.Backoff = DefaultBackoff()
	}
	if c.AckWait == 0 {
		c.AckWait = DefaultAckWait
	}
	if c.DeadLetter == "" {
		c.DeadLetter = DefaultDeadLetter
	}
	if c.Bucket == "" {
		c.Bucket = DefaultBucket
	}
	if c.HandledTTL == 0 {
		c.HandledTTL = DefaultHandledTTL
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("alerts: %s: %s", field, fmt.Sprintf(format, a...)))
	}
	if !validName.MatchString(c.Stream) {
		bad("stream", "%q is not a stream name (1 to 64 of A-Z a-z 0-9 _ -)", c.Stream)
	}
	if !validName.MatchString(c.Durable) {
		bad("durable", "%q is not a consumer name (1 to 64 of A-Z a-z 0-9 _ -)", c.Durable)
	}
	if !validName.MatchString(c.Bucket) {
		bad("bucket", "%q is not a bucket name (1 to 64 of A-Z a-z 0-9 _ -)", c.Bucket)
	}
	for _, f := range c.Filters {
		if !validFilter.MatchString(f) {
			bad("filter", "%q is not a subject filter", f)
		}
	}
	if !validSubject.MatchString(c.DeadLetter) {
		bad("dead-letter", "%q is not a subject without wildcards", c.DeadLetter)
	}
	for _, f := range c.Filters {
		if matches(f, c.DeadLetter) {
			bad("dead-letter", "%q is consumed by the filter %q: a dead letter would come back", c.DeadLetter, f)
		}
	}
	if c.Action == nil {
		bad("action", "none: want a command or a webhook")
	}
	if c.MaxDeliver < 1 {
		bad("max-deliver", "is %d, want ≥ 1", c.MaxDeliver)
	}
	for _, d := range c.Backoff {
		if d < 0 {
			bad("backoff", "%v is negative", d)
		}
	}
	if c.AckWait < time.Second {
		bad("ack-wait", "is %v, want ≥ 1s", c.AckWait)
	}
	if c.HandledTTL < time.Second {
		bad("handled-ttl", "is %v, want ≥ 1s", c.HandledTTL)
	}
	return c, errors.Join(errs...)
}

// matches reports whether the subject filter f matches subject s.
func matches(f, s string) bool {
	ft, st := strings.Split(f, "."), strings.Split(s, ".")
	for i, t := range ft {
		if t == ">" {
			return len(st) > i
		}
		if i >= len(st) || (t != "*" && t != st[i]) {
			return false
		}
	}
	return len(ft) == len(st)
}

// delay is the wait before the attempt after the n-th failure (n ≥ 1).
func (c Config) delay(n int) time.Duration {
	if len(c.Backoff) == 0 {
		return 0
	}
	return c.Backoff[min(n, len(c.Backoff))-1]
}
