package config

import (
	"path/filepath"
	"testing"
)

func TestStateDir(t *testing.T) {
	withDir := Default()
	withDir.StateDir = "/srv/physd/"
	for _, tc := range []struct {
		name                  string
		cfg                   *Config
		flag, stateDirEnv, xd string
		home                  string
		want                  string
	}{
		{"flag wins", withDir, "/flag", "/systemd", "/xdg", "/home/u", "/flag"},
		{"systemd next", withDir, "", "/var/lib/physd", "/xdg", "/home/u", "/var/lib/physd"},
		{"systemd list: first", withDir, "", "/var/lib/physd:/var/lib/other", "", "/home/u", "/var/lib/physd"},
		{"systemd list: empty first", withDir, "", ":/var/lib/other", "", "/home/u", "/var/lib/other"},
		{"config next", withDir, "", "", "/xdg", "/home/u", "/srv/physd"},
		{"xdg next", Default(), "", "", "/xdg", "/home/u", "/xdg/physd"},
		{"nil config", nil, "", "", "/xdg", "/home/u", "/xdg/physd"},
		{"relative xdg ignored", Default(), "", "", "rel/xdg", "/home/u", "/home/u/.local/state/physd"},
		{"home last", Default(), "", "", "", "/home/u", "/home/u/.local/state/physd"},
		{"flag cleaned", nil, "/a/b/../c/", "", "", "/home/u", "/a/c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("STATE_DIRECTORY", tc.stateDirEnv)
			t.Setenv("XDG_STATE_HOME", tc.xd)
			t.Setenv("HOME", tc.home)
			got, err := StateDir(tc.cfg, tc.flag)
			if err != nil {
				t.Fatal(err)
			}
			if got != filepath.FromSlash(tc.want) {
				t.Errorf("StateDir = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStateDirNoHome(t *testing.T) {
	t.Setenv("STATE_DIRECTORY", "")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "")
	if dir, err := StateDir(Default(), ""); err == nil {
		t.Errorf("StateDir without any source = %q, want an error", dir)
	}
}
