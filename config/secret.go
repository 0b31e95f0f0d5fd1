package config

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// redacted is what a set Secret prints and marshals as.
const redacted = "[redacted]"

// maxSecretFile bounds the size of a file read by a "file:" secret.
const maxSecretFile = 1 << 20

// Secret is a configuration value that must not leak into logs: a token, an
// nkey seed, or a URL that may hold credentials. In the config file it is
// written as the literal value, as "env:NAME" (the value of the environment
// variable NAME, as is) or as "file:/path" (the contents of the file,
// surrounding white space trimmed; a relative path is relative to the
// working directory). Parse resolves the reference; an unset or empty
// variable, or a file that is unreadable, empty, not a regular file or
// larger than 1 MiB, is an error. There is no escape for a literal secret
// that starts with "env:" or "file:".
//
// A Secret formats (with any fmt verb), logs (slog) and marshals (JSON,
// YAML, text) as "[redacted]", or as "" when it is empty. Value returns the
// secret itself. The zero value is the empty secret.
type Secret struct {
	ref   string // as written in the config file
	value string // resolved
}

// NewSecret returns a Secret holding value (for tests and for callers that
// build a Config in Go).
func NewSecret(value string) Secret { return Secret{ref: value, value: value} }

// Value returns the secret itself.
func (s Secret) Value() string { return s.value }

// IsSet reports whether the secret is non-empty.
func (s Secret) IsSet() bool { return s.value != "" }

// Source describes where the secret came from without revealing it:
// "env:NAME", "file:/path", "literal" or "" (empty).
func (s Secret) Source() string {
	switch {
	case s.ref == "" && s.value == "":
		return ""
	case strings.HasPrefix(s.ref, envPrefix), strings.HasPrefix(s.ref, filePrefix):
		return s.ref
	}
	return "literal"
}

// String returns "[redacted]", or "" if the secret is empty.
func (s Secret) String() string {
	if s.value == "" && s.ref == "" {
		return ""
	}
	return redacted
}

// GoString returns the same as String (for %#v).
func (s Secret) GoString() string { return s.String() }

// Format writes String for every verb, so that no fmt verb reveals the
// secret.
func (s Secret) Format(f fmt.State, verb rune) {
	_, _ = io.WriteString(f, s.String())
}

// LogValue returns String for slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON returns String as a JSON string.
func (s Secret) MarshalJSON() ([]byte, error) {
	return []byte(`"` + s.String() + `"`), nil
}

// MarshalText returns String.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// MarshalYAML returns String.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

const (
	envPrefix  = "env:"
	filePrefix = "file:"
)

// resolveSecret turns a reference as written in the config file into a
// Secret. Its errors never contain the secret.
func resolveSecret(ref string) (Secret, error) {
	switch {
	case strings.HasPrefix(ref, envPrefix):
		name := strings.TrimPrefix(ref, envPrefix)
		if name == "" || strings.ContainsAny(name, "= \t\n\x00") {
			return Secret{}, fmt.Errorf("%q is not a valid environment variable name", name)
		}
		v, ok := os.LookupEnv(name)
		if !ok {
			return Secret{}, fmt.Errorf("environment variable %s is not set", name)
		}
		if v == "" {
			return Secret{}, fmt.Errorf("environment variable %s is empty", name)
		}
		return Secret{ref: ref, value: v}, nil
	case strings.HasPrefix(ref, filePrefix):
		path := strings.TrimPrefix(ref, filePrefix)
		if path == "" {
			return Secret{}, fmt.Errorf("no file name after %q", filePrefix)
		}
		v, err := readSecretFile(path)
		if err != nil {
			return Secret{}, err
		}
		return Secret{ref: ref, value: v}, nil
	}
	return Secret{ref: ref, value: ref}, nil
}

// readSecretFile reads a regular file of at most maxSecretFile bytes and
// returns its trimmed contents. Non-regular files (FIFOs, devices) are
// refused so that a reference such as file:/dev/stdin cannot block.
func readSecretFile(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > maxSecretFile {
		return "", fmt.Errorf("%s is larger than %d bytes", path, maxSecretFile)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	if len(b) > maxSecretFile {
		return "", fmt.Errorf("%s is larger than %d bytes", path, maxSecretFile)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return v, nil
}
