package alertsub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Dead-letter headers: where the message came from and why it was given up.
const (
	HeaderSubject    = "Physd-Original-Subject"
	HeaderStream     = "Physd-Stream"
	HeaderStreamSeq  = "Physd-Stream-Sequence"
	HeaderDeliveries = "Physd-Deliveries"
	HeaderError      = "Physd-Error"
	HeaderAlertID    = "Physd-Alert-Id"
)

// Stats count what a Subscriber did since it started.
type Stats struct {
	// Handled alerts: the action succeeded and the message was acknowledged.
	Handled int64
	// Duplicates: alerts whose id was already handled, acknowledged without
	// running the action.
	Duplicates int64
	// Failures: failed attempts of the action.
	Failures int64
	// DeadLettered: messages published to the dead-letter subject.
	DeadLettered int64
}

// Subscriber is a durable consumer of physd's alerts.
type Subscriber struct {
	cfg Config
	log *slog.Logger
	nc  *nats.Conn
	js  jetstream.JetStream
	// dlStream is the stream that keeps the dead-letter subject, if any.
	dlStream string
	cons     jetstream.Consumer
	handled  *handled

	handledN, duplicates, failures, deadLettered atomic.Int64
	// crashBeforeAck, when set (by tests), is asked after an alert's id
	// was recorded; true makes Run return at once without acknowledging,
	// as a subscriber killed at that point would.
	crashBeforeAck func(id string) bool
}

// errCrashed is Run's error after crashBeforeAck.
var errCrashed = errors.New("alerts: stopped before the acknowledgement (test)")

// New checks cfg and creates or updates the durable consumer and the
// bucket of handled ids on nc's JetStream.
func New(ctx context.Context, nc *nats.Conn, cfg Config) (*Subscriber, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("alerts: jetstream: %w", err)
	}
	if _, err := js.Stream(ctx, cfg.Stream); err != nil {
		return nil, fmt.Errorf("alerts: stream %s on %s: %w (has physd run with JetStream on this server?)", cfg.Stream, nc.ConnectedUrlRedacted(), err)
	}
	cc := jetstream.ConsumerConfig{
		Durable:     cfg.Durable,
		Description: "physd alerts → " + cfg.Action.String(),
		AckPolicy:   jetstream.AckExplicitPolicy,
		AckWait:     cfg.AckWait,
		// One more than the attempts: a message whose last attempt was cut
		// short (the subscriber died) comes back once more, to be
		// dead-lettered rather than dropped by the server.
		MaxDeliver:     cfg.MaxDeliver + 1,
		FilterSubjects: cfg.Filters,
		MaxAckPending:  1,
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	}
	if cfg.DeliverNew {
		cc.DeliverPolicy = jetstream.DeliverNewPolicy
	}
	// Where a durable starts is fixed when it is created; an existing one
	// keeps its own (the server refuses to change it).
	if c, err := js.Consumer(ctx, cfg.Stream, cfg.Durable); err == nil {
		cc.DeliverPolicy = c.CachedInfo().Config.DeliverPolicy
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, cfg.Stream, cc)
	if err != nil {
		return nil, fmt.Errorf("alerts: consumer %s on stream %s: %w", cfg.Durable, cfg.Stream, err)
	}
	h, err := openHandled(ctx, js, cfg.Bucket, cfg.Durable, cfg.HandledTTL)
	if err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	dlStream, err := js.StreamNameBySubject(ctx, cfg.DeadLetter)
	if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("alerts: dead-letter subject %s: looking for a stream that keeps it: %w", cfg.DeadLetter, err)
	}
	if dlStream == "" {
		cfg.Logger.Warn("no JetStream stream keeps the dead-letter subject: dead letters are published on core NATS and lost unless someone listens",
			"dead_letter", cfg.DeadLetter)
	}
	return &Subscriber{cfg: cfg, log: cfg.Logger, nc: nc, js: js, dlStream: dlStream, cons: cons, handled: h}, nil
}

// Stats returns the counters so far.
func (s *Subscriber) Stats() Stats {
	return Stats{Handled: s.handledN.Load(), Duplicates: s.duplicates.Load(), Failures: s.failures.Load(), DeadLettered: s.deadLettered.Load()}
}

// Run consumes alerts until ctx is cancelled. An action under way when ctx
// is cancelled runs to its end (within its timeout) and is acknowledged.
func (s *Subscriber) Run(ctx context.Context) error {
	it, err := s.cons.Messages(jetstream.PullMaxMessages(1))
	if err != nil {
		return fmt.Errorf("alerts: consume %s: %w", s.cfg.Durable, err)
	}
	defer it.Stop()
	s.log.Info("consuming alerts", "stream", s.cfg.Stream, "durable", s.cfg.Durable, "filters", s.cfg.Filters,
		"action", s.cfg.Action.String(), "max_deliver", s.cfg.MaxDeliver, "dead_letter", s.cfg.DeadLetter)
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if ctx.Err() != nil {
			if m != nil {
				_ = m.Nak() // not started: the next subscriber takes it
			}
			return nil
		}
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return fmt.Errorf("alerts: consumer %s: %w", s.cfg.Durable, err)
			}
			s.log.Warn("waiting for alerts", "err", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
			continue
		}
		if crashed := s.handle(ctx, m); crashed {
			return errCrashed
		}
	}
}

// handle takes one message to its end: acknowledged, retried later or
// dead-lettered. It reports a simulated crash (crashBeforeAck).
func (s *Subscriber) handle(ctx context.Context, m jetstream.Msg) bool {
	// What is started is finished, also when ctx ends meanwhile.
	ctx = context.WithoutCancel(ctx)
	attempt, seq := 1, uint64(0)
	if md, err := m.Metadata(); err == nil {
		attempt, seq = int(md.NumDelivered), md.Sequence.Stream
	}
	log := s.log.With("subject", m.Subject(), "stream_seq", seq, "attempt", attempt)
	d, err := decodeAlert(m.Subject(), m.Headers(), m.Data())
	if err != nil {
		s.deadLetter(ctx, log, m, seq, attempt, d.ID, err)
		return false
	}
	d.Attempt = attempt
	log = log.With("id", d.ID, "state", d.State)
	done, err := s.handled.done(ctx, d.ID)
	if err != nil {
		// Without the record the action could repeat: try again later.
		log.Warn("cannot read the record of handled alerts; retrying later", "err", err)
		_ = m.NakWithDelay(s.cfg.delay(1))
		return false
	}
	if done {
		s.duplicates.Add(1)
		log.Info("alert already handled; acknowledged without running the action")
		s.ack(ctx, log, m)
		return false
	}
	if attempt > s.cfg.MaxDeliver {
		s.deadLetter(ctx, log, m, seq, attempt, d.ID, fmt.Errorf("the subscriber stopped during attempt %d of %d", s.cfg.MaxDeliver, s.cfg.MaxDeliver))
		return false
	}
	if err := s.runAction(ctx, m, d); err != nil {
		s.failures.Add(1)
		if attempt >= s.cfg.MaxDeliver {
			s.deadLetter(ctx, log, m, seq, attempt, d.ID, err)
			return false
		}
		delay := s.cfg.delay(attempt)
		log.Warn("action failed; will retry", "err", err, "retry_in", delay)
		if err := m.NakWithDelay(delay); err != nil {
			log.Warn("negative acknowledgement failed; the server redelivers after ack-wait", "err", err)
		}
		return false
	}
	// Recorded before the acknowledgement: a redelivery (the ack lost, the
	// subscriber killed now) finds the record and does not run the action.
	if err := s.handled.mark(ctx, d.ID, record{Subject: d.Subject, StreamSeq: seq, Attempt: attempt, Handled: time.Now().UTC()}); err != nil {
		log.Warn("action succeeded but its id could not be recorded; a redelivery would run it again", "err", err)
	}
	if s.crashBeforeAck != nil && s.crashBeforeAck(d.ID) {
		return true
	}
	s.handledN.Add(1)
	log.Info("alert handed to the action")
	s.ack(ctx, log, m)
	return false
}

// runAction runs the action, telling the server every third of AckWait
// that the message is being worked on.
func (s *Subscriber) runAction(ctx context.Context, m jetstream.Msg, d Delivery) error {
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(s.cfg.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				_ = m.InProgress()
			}
		}
	}()
	return s.cfg.Action.Run(ctx, d)
}

// ack acknowledges and waits for the server's answer.
func (s *Subscriber) ack(ctx context.Context, log *slog.Logger, m jetstream.Msg) {
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := m.DoubleAck(actx); err != nil {
		log.Warn("acknowledgement not confirmed; a redelivery will find the alert handled", "err", err)
	}
}

// deadLetter publishes m to the dead-letter subject and terminates it;
// if the publication fails, m is retried later instead. The dead letter
// goes through JetStream when a stream keeps the subject (acknowledged,
// deduplicated by stream sequence), else on core NATS (the server's
// answer to a flush confirms the publication, not a listener).
func (s *Subscriber) deadLetter(ctx context.Context, log *slog.Logger, m jetstream.Msg, seq uint64, attempt int, id string, cause error) {
	dl := nats.NewMsg(s.cfg.DeadLetter)
	dl.Data = m.Data()
	for k, v := range m.Headers() {
		dl.Header[k] = append([]string(nil), v...)
	}
	dl.Header.Set(nats.MsgIdHdr, s.cfg.Durable+".dead."+s.cfg.Stream+"."+strconv.FormatUint(seq, 10))
	dl.Header.Set(HeaderSubject, m.Subject())
	dl.Header.Set(HeaderStream, s.cfg.Stream)
	dl.Header.Set(HeaderStreamSeq, strconv.FormatUint(seq, 10))
	dl.Header.Set(HeaderDeliveries, strconv.Itoa(attempt))
	dl.Header.Set(HeaderError, cause.Error())
	if id != "" {
		dl.Header.Set(HeaderAlertID, id)
	}
	var err error
	if s.dlStream != "" {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err = s.js.PublishMsg(pctx, dl, jetstream.WithExpectStream(s.dlStream))
		cancel()
	} else if err = s.nc.PublishMsg(dl); err == nil {
		err = s.nc.FlushTimeout(10 * time.Second)
	}
	if err != nil {
		log.Error("dead-letter publication failed; retrying later", "dead_letter", s.cfg.DeadLetter, "err", err)
		_ = m.NakWithDelay(s.cfg.delay(max(1, attempt)))
		return
	}
	s.deadLettered.Add(1)
	log.Error("alert given up: dead-lettered", "dead_letter", s.cfg.DeadLetter, "err", cause)
	if err := m.TermWithReason("dead-lettered"); err != nil {
		log.Warn("terminating the dead-lettered message failed", "err", err)
	}
}
