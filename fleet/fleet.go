// Package fleet sets up a hub's fleet-wide stream: one aggregate JetStream
// stream of every board's estimates and alerts, which sources each board's
// own stream across the board's JetStream domain (docs/fleet.md).
//
// A board runs physd with its embedded nats-server joined to the hub as a
// leaf node, in its own JetStream domain, and stores every estimate and
// alert in its own stream first; the board's subjects cross its leaf node
// connection in neither direction. The aggregate stream has no subjects
// of its own: messages enter it only by sourcing, which resumes from the
// last sequence it holds after any outage, so every message arrives once.
// (Add refuses an aggregate stream with subjects: should a board's core
// publications ever reach the hub, such a stream would hold them twice.)
//
// Each board's subjects (<prefix>.<camera>.<kind>, as on a single board)
// are transformed on the way in to fleet.<board>.<prefix>.<camera>.<kind>,
// so a consumer of the aggregate stream can filter by board; the messages
// also carry the board in their "node" field and in their Nats-Msg-Id.
//
// On a hub with accounts (accounts.go), each board is a user of its own
// whose credentials let its leaf node connection carry its own domain's
// API and its own deliveries only, so the board in the subject is the one
// the credentials prove; a message's "node" and id are only its board's
// claim (CheckClaim), and the aggregate does not deduplicate on the id.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/physd/physd/config"
)

// Defaults of Options.
const (
	// DefaultStream is the aggregate stream's name.
	DefaultStream = "PHYSD_FLEET"
	// DefaultBoardStream is the stream each board keeps (physd's
	// nats.jetstream.stream default).
	DefaultBoardStream = "PHYSD_ESTIMATES"
	// DefaultPrefix is physd's nats.subject_prefix default.
	DefaultPrefix = "physd"
	// SubjectRoot is the first token of the aggregate stream's subjects.
	SubjectRoot = "fleet"
)

// Options configures the aggregate stream.
type Options struct {
	// Stream is the aggregate stream's name (DefaultStream if empty).
	Stream string
	// Replicas is the aggregate stream's replica count when Add creates
	// it: 3 on a 3-node hub survives losing a node. 0 means 1.
	Replicas int
	// MaxAge is how long the aggregate stream keeps messages; 0 forever.
	MaxAge time.Duration
}

// Board is one board the aggregate stream sources.
type Board struct {
	// Name is the board's node.name; it goes into the aggregate subjects.
	Name string
	// Domain is the board's JetStream domain (Name if empty, as physd's
	// nats.embedded.domain defaults to node.name).
	Domain string
	// Stream is the board's stream (DefaultBoardStream if empty).
	Stream string
	// Prefix is the board's nats.subject_prefix (DefaultPrefix if empty).
	Prefix string
}

// BoardInfo is a board as the aggregate stream sources it, with the
// progress of the sourcing.
type BoardInfo struct {
	Board
	// Lag is how many of the board's messages the hub has yet to copy;
	// Active when the board's stream last answered (-1: never since the
	// hub started).
	Lag    uint64
	Active time.Duration
	// Error is the sourcing error the hub reports, e.g. while the board's
	// leaf node connection is down; empty when healthy.
	Error string
}

// Hub manages the aggregate stream through a JetStream context on the
// hub (connected to any hub node, in the hub's domain).
type Hub struct {
	js   jetstream.JetStream
	opts Options
}

// New returns a Hub for the aggregate stream described by opts.
func New(js jetstream.JetStream, opts Options) *Hub {
	if opts.Stream == "" {
		opts.Stream = DefaultStream
	}
	if opts.Replicas < 1 {
		opts.Replicas = 1
	}
	return &Hub{js: js, opts: opts}
}

// ValidName reports whether s can be a board name or domain: 1 to 64 of
// A-Z a-z 0-9 _ - (physd's node.name and camera names have this form), so
// that it is one subject token.
func ValidName(s string) bool {
	return config.ValidCameraName(s)
}

// withDefaults fills b's empty fields and checks them.
func (b Board) withDefaults() (Board, error) {
	if b.Domain == "" {
		b.Domain = b.Name
	}
	if b.Stream == "" {
		b.Stream = DefaultBoardStream
	}
	if b.Prefix == "" {
		b.Prefix = DefaultPrefix
	}
	switch {
	case !ValidName(b.Name):
		return b, fmt.Errorf("board %q: name: want 1 to 64 of A-Z a-z 0-9 _ -", b.Name)
	case !ValidName(b.Domain):
		return b, fmt.Errorf("board %s: domain %q: want 1 to 64 of A-Z a-z 0-9 _ -", b.Name, b.Domain)
	case strings.ContainsAny(b.Stream, " .*>/\\"):
		return b, fmt.Errorf("board %s: stream %q: not a stream name", b.Name, b.Stream)
	case b.Prefix == "" || strings.ContainsAny(b.Prefix, " *>"):
		return b, fmt.Errorf("board %s: prefix %q: not a subject prefix", b.Name, b.Prefix)
	}
	return b, nil
}

// Subject is the aggregate stream's subject for a board's subject
// (fleet.<board>.<subject>); a filter such as Subject("b1", "physd.>")
// selects one board's messages.
func Subject(board, subject string) string {
	return SubjectRoot + "." + board + "." + subject
}

// ParseSubject is Subject's inverse: the board and the board's own
// subject of an aggregate stream's subject; false for a subject that is
// not one.
func ParseSubject(subject string) (board, boardSubject string, ok bool) {
	rest, ok := strings.CutPrefix(subject, SubjectRoot+".")
	if !ok {
		return "", "", false
	}
	board, boardSubject, ok = strings.Cut(rest, ".")
	if !ok || !ValidName(board) || boardSubject == "" {
		return "", "", false
	}
	return board, boardSubject, true
}

// Source is how the aggregate stream sources b (with defaults applied):
// b's stream in b's domain, through the domain's API prefix across the
// leaf node connection, its subjects moved under fleet.<board>.
func Source(b Board) jetstream.StreamSource {
	return jetstream.StreamSource{
		Name:     b.Stream,
		External: &jetstream.ExternalStream{APIPrefix: "$JS." + b.Domain + ".API", DeliverPrefix: DeliverPrefix(b.Name)},
		SubjectTransforms: []jetstream.SubjectTransformConfig{{
			Source: b.Prefix + ".>", Destination: Subject(b.Name, b.Prefix+".>"),
		}},
	}
}

// boardOf recovers the Board of a source that Source made; false for a
// source the fleet command did not add.
func boardOf(s *jetstream.StreamSource) (Board, bool) {
	if s == nil || s.External == nil || len(s.SubjectTransforms) != 1 {
		return Board{}, false
	}
	domain, ok := strings.CutPrefix(s.External.APIPrefix, "$JS.")
	domain, ok2 := strings.CutSuffix(domain, ".API")
	tr := s.SubjectTransforms[0]
	rest, ok3 := strings.CutPrefix(tr.Destination, SubjectRoot+".")
	name, subj, ok4 := strings.Cut(rest, ".")
	prefix, ok5 := strings.CutSuffix(tr.Source, ".>")
	if !ok || !ok2 || !ok3 || !ok4 || !ok5 || subj != tr.Source {
		return Board{}, false
	}
	return Board{Name: name, Domain: domain, Stream: s.Name, Prefix: prefix}, true
}

// Add adds boards to the aggregate stream's sources, creating the stream
// if it does not exist. A board already there is replaced (a changed
// domain or stream); its copy resumes where it was only if the board's
// stream and domain are unchanged.
func (h *Hub) Add(ctx context.Context, boards ...Board) error {
	var add []Board
	for _, b := range boards {
		b, err := b.withDefaults()
		if err != nil {
			return fmt.Errorf("fleet add: %w", err)
		}
		add = append(add, b)
	}
	s, err := h.js.Stream(ctx, h.opts.Stream)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		cfg := jetstream.StreamConfig{
			Name:        h.opts.Stream,
			Description: "physd fleet: every board's certified estimates and alerts, sourced from each board's stream across its JetStream domain",
			Storage:     jetstream.FileStorage,
			Replicas:    h.opts.Replicas,
			MaxAge:      h.opts.MaxAge,
			// No deduplication on Nats-Msg-Id (0 disables it on a stream
			// with sources): sourcing copies each board's messages once by
			// their sequence, and a board's Nats-Msg-Id is only its claim,
			// which must not suppress another board's message of the same
			// id (docs/fleet.md, "Accounts").
			Duplicates: 0,
		}
		for _, b := range add {
			cfg.Sources = append(cfg.Sources, ptr(Source(b)))
		}
		if _, err := h.js.CreateStream(ctx, cfg); err != nil {
			return fmt.Errorf("fleet add: create stream %s: %w", h.opts.Stream, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("fleet add: stream %s: %w", h.opts.Stream, err)
	}
	cfg := s.CachedInfo().Config
	if len(cfg.Subjects) > 0 {
		// Refused: its subjects could capture the boards' core messages
		// that the leaf node connections carry, a second copy of each.
		return fmt.Errorf("fleet add: stream %s has subjects %v; the aggregate stream must get messages only by sourcing", h.opts.Stream, cfg.Subjects)
	}
	// Deduplication off (above), also on a stream made by an earlier
	// version.
	cfg.Duplicates = 0
	for _, b := range add {
		src := ptr(Source(b))
		i := slices.IndexFunc(cfg.Sources, func(s *jetstream.StreamSource) bool {
			old, ok := boardOf(s)
			return ok && old.Name == b.Name
		})
		if i >= 0 {
			cfg.Sources[i] = src
		} else {
			cfg.Sources = append(cfg.Sources, src)
		}
	}
	if _, err := h.js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("fleet add: update stream %s: %w", h.opts.Stream, err)
	}
	return nil
}

// Remove stops sourcing the named boards; the messages already copied
// stay in the aggregate stream. Naming a board that is not there is an
// error.
func (h *Hub) Remove(ctx context.Context, names ...string) error {
	s, err := h.js.Stream(ctx, h.opts.Stream)
	if err != nil {
		return fmt.Errorf("fleet rm: stream %s: %w", h.opts.Stream, err)
	}
	cfg := s.CachedInfo().Config
	for _, name := range names {
		i := slices.IndexFunc(cfg.Sources, func(s *jetstream.StreamSource) bool {
			b, ok := boardOf(s)
			return ok && b.Name == name
		})
		if i < 0 {
			return fmt.Errorf("fleet rm: board %q: not in stream %s", name, h.opts.Stream)
		}
		cfg.Sources = slices.Delete(cfg.Sources, i, i+1)
	}
	if _, err := h.js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("fleet rm: update stream %s: %w", h.opts.Stream, err)
	}
	return nil
}

// List returns the boards the aggregate stream sources, by name, with the
// progress of each, and the stream's state.
func (h *Hub) List(ctx context.Context) ([]BoardInfo, jetstream.StreamState, error) {
	s, err := h.js.Stream(ctx, h.opts.Stream)
	if err != nil {
		return nil, jetstream.StreamState{}, fmt.Errorf("fleet ls: stream %s: %w", h.opts.Stream, err)
	}
	info := s.CachedInfo()
	var out []BoardInfo
	for _, src := range info.Config.Sources {
		b, ok := boardOf(src)
		if !ok {
			continue
		}
		bi := BoardInfo{Board: b, Active: -1}
		for _, si := range info.Sources {
			if si == nil || si.Name != b.Stream || si.External == nil || si.External.APIPrefix != src.External.APIPrefix {
				continue
			}
			bi.Lag, bi.Active = si.Lag, si.Active
			if si.Error != nil {
				bi.Error = si.Error.Error()
			}
		}
		out = append(out, bi)
	}
	slices.SortFunc(out, func(a, b BoardInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, info.State, nil
}

func ptr[T any](v T) *T { return &v }
