package wire

import (
	"fmt"
	"strconv"
	"strings"
)

// Mode says which of a camera's (or zone's) modes a message is about,
// for a structure ringing in several (package modes). A message without
// one is about the window's single mode, as before modes were read.
type Mode struct {
	// Label is the mode's label, kept from window to window by frequency
	// continuity (modes.Tracker): 1 for the first mode followed, never
	// reused. Label 1's messages keep the subjects of a camera without
	// modes; label L ≥ 2's are under <prefix>.modes (ModeSubject).
	Label int `json:"label"`
	// Index numbers the window's modes from 1 by frequency, and Of is how
	// many the window holds.
	Index int `json:"index"`
	Of    int `json:"of"`
	// Event is what the tracker said of the label in this window: seen,
	// or appeared (a label given for the first time).
	Event string `json:"event"`
	// AmplitudePx is the mode's envelope where its coordinate starts, in
	// source pixels; 0 (absent) when not told.
	AmplitudePx float64 `json:"amplitude_px,omitempty"`
}

// ModeSummary is one mode of a window as its diagnostic lists it.
type ModeSummary struct {
	Mode
	Fn        float64  `json:"fn_hz"`
	FnSigma   float64  `json:"fn_sigma"`
	Zeta      float64  `json:"zeta"`
	ZetaSigma float64  `json:"zeta_sigma"`
	Certified bool     `json:"certified"`
	Reasons   []string `json:"reasons,omitempty"`
}

// modeToken is the last token of a mode's subjects beyond label 1.
func modeToken(label int) string { return "m" + strconv.Itoa(label) }

// ModeSubject is the subject of a message of kind about mode label of
// camera[.zone] key: Subject's for label 1 (and a message with no mode),
// prefix.modes.<key>.<kind>.m<label> beyond it. A subscriber to
// prefix.<camera>.estimate keeps receiving what it always did — the
// camera's first mode — and prefix.modes.<camera>.estimate.* receives
// the others. The modes token keeps the two apart for JetStream, which
// refuses a stream whose subjects overlap: prefix.*.estimate.* would
// overlap a zone's prefix.*.*.estimate.
func ModeSubject(prefix, key string, kind Kind, label int) string {
	if label < 2 {
		return Subject(prefix, key, kind)
	}
	return Subject(prefix+"."+modesToken, key, kind) + "." + modeToken(label)
}

// ModeFilter is the subscription to every mode beyond the first of
// camera (a name, "*", or "<camera>.<zone>" with wildcards) and kind:
// prefix.modes.<camera>.<kind>.*.
func ModeFilter(prefix, camera string, kind Kind) string {
	return Subject(prefix+"."+modesToken, camera, kind) + ".*"
}

// modesToken is the first token after the prefix of the subjects of
// modes beyond the first.
const modesToken = "modes"

// SubjectOf is the subject m is published on: ModeSubject's for an
// estimate or alert about a mode, Subject's otherwise.
func SubjectOf(prefix string, m Message) string {
	return ModeSubject(prefix, m.Key(), m.Kind(), labelOf(m))
}

// labelOf is the mode label of an estimate or alert (0: none).
func labelOf(m Message) int {
	switch v := m.(type) {
	case *Estimate:
		if v.Mode != nil {
			return v.Mode.Label
		}
	case *Alert:
		if v.Mode != nil {
			return v.Mode.Label
		}
	}
	return 0
}

// modeKind is the kind token of a message id, with the mode beyond label
// 1 (estimate-m2): two modes of one window have two ids, so JetStream
// keeps both.
func modeKind(kind string, label int) string {
	if label >= 2 {
		return kind + "-" + modeToken(label)
	}
	return kind
}

// parseModeToken reads m<label> (label ≥ 2).
func parseModeToken(tok string) (int, bool) {
	rest, ok := strings.CutPrefix(tok, "m")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 2 || fmt.Sprint(n) != rest {
		return 0, false
	}
	return n, true
}
