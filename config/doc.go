// Package config loads, validates and compares physd's configuration: one
// YAML file, /etc/physd/physd.yaml under systemd (physd.example.yaml in this
// directory lists every option with its default).
//
// Parsing is strict. The YAML is decoded into a yaml.Node tree that is walked
// against the Go structs, so an unknown key, a duplicate key or a value of the
// wrong type is reported with the file name, line, column and the dotted
// field path, as in
//
//	physd.yaml:12:7: cameras[0].window.hopp: unknown key "hopp" (did you mean "hop"?)
//	physd.yaml:7:21: estimator.steps_per_window: want an integer, got "many"
//
// After decoding, the values are checked (ranges, required fields, camera
// names) and those errors carry the position of the offending node too. Parse
// reports every error it finds, joined with errors.Join; each is an *Error.
//
// The names that other packages own (the estimator preset, the synthetic
// system and regime, the synthetic frame size bounds) are checked against a
// Vocabulary the caller passes to LoadWith or ParseWith (physd's binary
// passes daemon.Vocabulary), so that config imports neither the estimator
// nor the simulator; Load and Parse skip those checks.
//
// Keys left out keep their defaults (Default, DefaultCamera): a camera entry
// starts from DefaultCamera, so it only needs its name and the keys that
// differ. A key with an empty (null) value sets a scalar or a list to its zero
// value and leaves a mapping at its defaults. Durations are Go duration
// strings ("4.712s", "500ms", "720h") or plain numbers of seconds. YAML
// anchors, aliases and merge keys ("<<") are supported.
//
// Secrets (tokens, the NATS nkey seed, RTSP URLs that may hold credentials)
// are of type Secret: the value "env:NAME" reads the environment variable
// NAME and "file:/path" reads the file (surrounding white space trimmed);
// anything else is the literal secret. A Secret prints and marshals as
// "[redacted]".
//
// The package holds no mutable package-level state; it reads the environment
// only to resolve secrets (Parse, Load and their With forms), the state directory (StateDir) and
// the log format (Log.EffectiveFormat).
package config
