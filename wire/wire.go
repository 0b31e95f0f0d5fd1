// Package wire is what physd publishes on NATS, in one place: the message
// types and their schema ids, the kinds of message and which of them the
// JetStream stream keeps, the subjects, and the message ids JetStream
// deduplicates by. docs/schema holds the messages' JSON Schemas.
//
// It is a leaf of physd's tree: a subscriber (alertsub, fleet, physd
// watch) imports it without the daemon and its transport.
package wire

import (
	"fmt"
	"strings"
)

// Schema versions of the messages physd publishes; docs/schema holds their
// JSON Schemas. A consumer checks the major version it understands.
const (
	SchemaEstimate   = "physd.estimate/v1"
	SchemaDiagnostic = "physd.diagnostic/v1"
	SchemaStatus     = "physd.status/v1"
	SchemaAlert      = "physd.alert/v1"
	SchemaEvidence   = "physd.evidence/v1"
)

// AlertsBucket is the key-value bucket physd alerts keeps its handled
// alerts' ids in (alertsub.DefaultBucket), the one bucket the subscriber
// may create on the board's embedded server.
const AlertsBucket = "physd_alerts_handled"

// Kind is a kind of message: the last token of <prefix>.<camera>.<kind>.
type Kind string

// The kinds of message physd publishes.
const (
	KindEstimate   Kind = "estimate"
	KindDiagnostic Kind = "diag"
	KindStatus     Kind = "status"
	KindAlert      Kind = "alert"
	// KindEvidence: a raised alert's evidence, written (Evidence).
	KindEvidence Kind = "evidence"
)

// Kinds lists every kind of message.
func Kinds() []Kind {
	return []Kind{KindEstimate, KindDiagnostic, KindStatus, KindAlert, KindEvidence}
}

// Persisted reports the kinds the JetStream stream holds (estimates,
// alerts and their evidence): published through JetStream and
// acknowledged, and the last evicted from the outbox while NATS is away.
// Diagnostics and heartbeats go on core NATS only.
func (k Kind) Persisted() bool { return k == KindEstimate || k == KindAlert || k == KindEvidence }

// Live reports the kinds only worth sending now (status heartbeats: the
// next one supersedes them), which are never queued while NATS is away.
func (k Kind) Live() bool { return k == KindStatus }

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindEstimate, KindDiagnostic, KindStatus, KindAlert, KindEvidence:
		return true
	}
	return false
}

// Key is the middle of a message's subject: the camera, or
// "<camera>.<zone>" for a zone of a camera.
func Key(camera, zone string) string {
	if zone == "" {
		return camera
	}
	return camera + "." + zone
}

// Subject is the NATS subject for one camera and message kind.
//
// A zone's messages go to prefix.<camera>.<zone>.kind: pass
// "<camera>.<zone>" (Key) as camera. Wildcards make filters: Subject(p,
// "*", KindAlert) is every camera's alerts.
func Subject(prefix, camera string, kind Kind) string {
	return prefix + "." + camera + "." + string(kind)
}

// StreamSubjects are the subjects of the JetStream stream under prefix:
// the persisted kinds of every camera, then of every zone (the order
// physd has always configured, so that an existing stream is not
// updated for it).
func StreamSubjects(prefix string) []string {
	var s []string
	for _, camera := range []string{"*", "*.*"} {
		for _, k := range Kinds() {
			if k.Persisted() && k != KindEvidence {
				s = append(s, Subject(prefix, camera, k))
			}
		}
	}
	// Modes beyond the first (ModeSubject), after the subjects physd
	// configured before it read modes.
	for _, camera := range []string{"*", "*.*"} {
		for _, k := range Kinds() {
			if k.Persisted() && k != KindEvidence {
				s = append(s, ModeFilter(prefix, camera, k))
			}
		}
	}
	// Evidence (on the camera's subject for every mode), after the
	// subjects physd configured before it kept evidence.
	for _, camera := range []string{"*", "*.*"} {
		s = append(s, Subject(prefix, camera, KindEvidence))
	}
	return s
}

// ParseSubject reads a subject Subject (or ModeSubject) made under
// prefix back into its camera, zone ("" for a camera without zones) and
// kind. A subject under
// another prefix, with wildcards, empty tokens, more than a zone below the
// camera or an unknown kind is an error.
func ParseSubject(prefix, subject string) (camera, zone string, kind Kind, err error) {
	rest, ok := strings.CutPrefix(subject, prefix+".")
	if !ok {
		return "", "", "", fmt.Errorf("subject %q: not under prefix %q", subject, prefix)
	}
	tok := strings.Split(rest, ".")
	// A mode beyond the first: modes.<camera>[.<zone>].<kind>.m<label>
	// (ModeSubject).
	if n := len(tok); n >= 4 && tok[0] == modesToken {
		if _, ok := parseModeToken(tok[n-1]); ok && Kind(tok[n-2]).Valid() {
			tok = tok[1 : n-1]
		}
	}
	if len(tok) < 2 || len(tok) > 3 {
		return "", "", "", fmt.Errorf("subject %q: want %s.<camera>[.<zone>].<kind>", subject, prefix)
	}
	for _, t := range tok {
		if t == "" || strings.ContainsAny(t, "*> \t\r\n") {
			return "", "", "", fmt.Errorf("subject %q: token %q is not a name", subject, t)
		}
	}
	kind = Kind(tok[len(tok)-1])
	if !kind.Valid() {
		return "", "", "", fmt.Errorf("subject %q: kind %q: want one of %v", subject, kind, Kinds())
	}
	camera = tok[0]
	if len(tok) == 3 {
		zone = tok[1]
	}
	return camera, zone, kind, nil
}
