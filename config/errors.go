package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Error is one problem found in a config file. Parse and Load return these
// joined with errors.Join.
type Error struct {
	// Source names the file (the path given to Load, or Parse's source).
	Source string
	// Line and Col are the 1-based position of the offending YAML node, or
	// 0 when the problem concerns a value the file does not contain (Col
	// alone is 0 for YAML syntax errors, whose column is unknown).
	Line, Col int
	// Path is the dotted field path, e.g. "cameras[0].window.hop"; empty
	// for problems with the document as a whole.
	Path string
	// Msg describes the problem.
	Msg string
	// Err is the underlying error, if any (for errors.Is and errors.As).
	Err error
}

// Error formats the error as "source:line:col: path: msg", leaving out the
// position when Line is 0, the column when Col is 0 and the path when Path
// is empty.
func (e *Error) Error() string {
	s := e.Source
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
		if e.Col > 0 {
			s += ":" + strconv.Itoa(e.Col)
		}
	}
	if e.Path != "" {
		s += ": " + e.Path
	}
	return s + ": " + e.Msg
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// maxErrors bounds the number of errors one Parse reports; a pathological
// file would otherwise produce one per node.
const maxErrors = 100

// errorList collects the errors of one Parse.
type errorList struct {
	source string
	errs   []error
	full   bool
	// bad holds the paths that failed to decode; the semantic checks skip
	// them and their descendants, whose values are defaults or zero.
	bad map[string]bool
}

// isBad reports whether path or one of its ancestors failed to decode.
func (l *errorList) isBad(path string) bool {
	for {
		if l.bad[path] {
			return true
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return false
		}
		path = path[:i]
	}
}

func (l *errorList) add(p pos, path string, err error, format string, args ...any) {
	if l.full {
		return
	}
	if len(l.errs) == maxErrors {
		l.errs = append(l.errs, &Error{Source: l.source, Msg: fmt.Sprintf("too many errors (more than %d), giving up", maxErrors)})
		l.full = true
		return
	}
	l.errs = append(l.errs, &Error{Source: l.source, Line: p.line, Col: p.col, Path: path,
		Msg: fmt.Sprintf(format, args...), Err: err})
}

// pos is a position in the file; the zero pos means "not in the file".
type pos struct{ line, col int }
