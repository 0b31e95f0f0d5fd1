package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// StateDir resolves physd's state directory, first match wins:
//
//  1. flagOverride (the --state-dir flag), if not empty;
//  2. $STATE_DIRECTORY, set by systemd for StateDirectory= (it may list
//     several directories separated by colons; the first is used);
//  3. cfg.StateDir from the config file (cfg may be nil);
//  4. $XDG_STATE_HOME/physd, if $XDG_STATE_HOME is an absolute path;
//  5. ~/.local/state/physd.
//
// The result is cleaned (filepath.Clean) but not made absolute, and the
// directory is not created. An error means the home directory is unknown.
func StateDir(cfg *Config, flagOverride string) (string, error) {
	if flagOverride != "" {
		return filepath.Clean(flagOverride), nil
	}
	for dir := range strings.SplitSeq(os.Getenv("STATE_DIRECTORY"), ":") {
		if dir != "" {
			return filepath.Clean(dir), nil
		}
	}
	if cfg != nil && cfg.StateDir != "" {
		return filepath.Clean(cfg.StateDir), nil
	}
	// The XDG base directory spec says relative paths are invalid and
	// must be ignored.
	if xdg := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "physd"), nil
	}
	home, err := os.UserHomeDir()
	if err == nil && home == "" {
		err = errors.New("home directory is empty")
	}
	if err != nil {
		return "", fmt.Errorf("config: no state directory: set --state-dir, $STATE_DIRECTORY or state_dir: %w", err)
	}
	return filepath.Join(home, ".local", "state", "physd"), nil
}
