package outbox

import (
	"errors"
	"fmt"
	"strings"
)

// Class orders eviction when the outbox is full: every queued Diagnostic
// goes, oldest first, before the oldest Essential message does.
type Class uint8

const (
	// Diagnostic is a per-window diagnostic: useful, but the first to go.
	Diagnostic Class = iota
	// Essential is a certified estimate or an alert: the last to go.
	Essential

	// numClasses bounds the per-class arrays; it is not a valid Class.
	numClasses
)

// String names the class as logs and errors show it.
func (c Class) String() string {
	switch c {
	case Diagnostic:
		return "diagnostic"
	case Essential:
		return "essential"
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// Message is one NATS message waiting in the outbox.
type Message struct {
	// Subject is the NATS subject it is published on.
	Subject string
	// MsgID is the Nats-Msg-Id: kept across restarts so that JetStream
	// deduplicates a message published both before a crash and after it.
	MsgID string
	// Class decides the order of eviction.
	Class Class
	// Header holds optional extra headers; nil when there are none.
	// Nats-Msg-Id is not allowed here: it is MsgID.
	Header map[string][]string
	// Data is the payload.
	Data []byte
	// Seq is assigned by Append and orders publication: the lowest Seq
	// queued is published first. Ignored by Append.
	Seq uint64
}

// Limits on the fields, far above what physd sends, so that a record
// cannot make the decoder or a NATS server do something unreasonable.
const (
	maxSubjectLen   = 1024
	maxMsgIDLen     = 1024
	maxHeaderKeyLen = 256
)

// msgIDHeader is the header NATS uses for MsgID (nats.MsgIdHdr); the
// package is stdlib-only, so it is spelled out.
const msgIDHeader = "Nats-Msg-Id"

// ErrInvalid is wrapped by every error about a field of a message.
var ErrInvalid = errors.New("invalid message")

// fieldError names the field that is wrong, and wraps ErrInvalid.
func fieldError(field, format string, args ...any) error {
	return fmt.Errorf("field %s: %s: %w", field, fmt.Sprintf(format, args...), ErrInvalid)
}

// validate checks what a NATS server or client would refuse at publish
// time. A message that cannot be published would sit at the front of the
// outbox for ever and block everything behind it, so it is refused on
// the way in, and a record that decodes to one is treated as corrupt.
func validate(m *Message) error {
	if err := validateSubject(m.Subject); err != nil {
		return err
	}
	switch {
	case m.MsgID == "":
		return fieldError("MsgID", "empty")
	case len(m.MsgID) > maxMsgIDLen:
		return fieldError("MsgID", "%d bytes, at most %d", len(m.MsgID), maxMsgIDLen)
	case hasControl(m.MsgID):
		return fieldError("MsgID", "control character in %q", m.MsgID)
	}
	if m.Class >= numClasses {
		return fieldError("Class", "unknown class %d", uint8(m.Class))
	}
	for k, vs := range m.Header {
		switch {
		case k == "":
			return fieldError("Header", "empty key")
		case len(k) > maxHeaderKeyLen:
			return fieldError("Header", "key of %d bytes, at most %d", len(k), maxHeaderKeyLen)
		case strings.ContainsAny(k, ": ") || hasControl(k):
			return fieldError("Header", "key %q contains a colon, space or control character", k)
		case strings.EqualFold(k, msgIDHeader):
			return fieldError("Header", "key %q: set MsgID instead", k)
		}
		for _, v := range vs {
			// Tab is allowed in header values; CR or LF would end the header.
			if strings.IndexFunc(v, func(r rune) bool { return r != '\t' && isControl(r) }) >= 0 {
				return fieldError("Header", "value of %q contains a control character", k)
			}
		}
	}
	return nil
}

// validateSubject accepts what NATS accepts for publishing: dot-separated
// non-empty tokens, no whitespace or control characters, no wildcards.
func validateSubject(s string) error {
	switch {
	case s == "":
		return fieldError("Subject", "empty")
	case len(s) > maxSubjectLen:
		return fieldError("Subject", "%d bytes, at most %d", len(s), maxSubjectLen)
	case strings.ContainsRune(s, ' ') || hasControl(s):
		return fieldError("Subject", "whitespace or control character in %q", s)
	}
	for tok := range strings.SplitSeq(s, ".") {
		switch tok {
		case "":
			return fieldError("Subject", "empty token in %q", s)
		case "*", ">":
			return fieldError("Subject", "wildcard in %q", s)
		}
	}
	return nil
}

// hasControl reports an ASCII control character (tab included) or DEL.
func hasControl(s string) bool { return strings.IndexFunc(s, isControl) >= 0 }

// isControl is true for ASCII control characters and DEL: the ones that
// break NATS's line-based protocol or a log line.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
