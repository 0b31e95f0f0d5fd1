package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/physd/physd/config"
	"github.com/physd/physd/daemon"
)

// serviceConfig is where the systemd unit reads physd's configuration,
// and serviceStateDir its StateDirectory=physd.
const (
	serviceConfig   = "/etc/physd/physd.yaml"
	serviceStateDir = "/var/lib/physd"
)

// boardAuth is how a local subscriber (physd watch, physd alerts) proves
// who it is to the board's embedded server: the subscriber's nkey seed
// that physd created in its state directory.
type boardAuth struct {
	nkey, stateDir string
}

// flags registers --nkey and --state-dir on fs.
func (b *boardAuth) flags(fs *flag.FlagSet) {
	fs.StringVar(&b.nkey, "nkey", "", "NATS nkey seed file (for the board's embedded server: its subscriber seed, STATE_DIR/"+daemon.SubscriberSeedFile+"; found by itself for a loopback --nats)")
	fs.StringVar(&b.stateDir, "state-dir", "", "physd's state directory, where the embedded server's subscriber seed is (default: $STATE_DIRECTORY, the service's "+serviceStateDir+", "+serviceConfig+"'s state_dir, then the user's)")
}

// connect connects to urls with opts and, when creds (a .creds file) is
// not given, an nkey: --nkey, or the subscriber seed in --state-dir, or —
// for a server on loopback that refuses an anonymous client — the seed
// found in physd's state directories (find). Servers without
// authentication never see a seed they did not ask for. used names the
// seed file, if any.
func (b *boardAuth) connect(urls, creds string, opts ...nats.Option) (nc *nats.Conn, used string, err error) {
	seed := b.nkey
	if seed == "" && creds == "" && b.stateDir != "" {
		seed = daemon.SubscriberSeed(b.stateDir)
	}
	if seed == "" {
		nc, err = nats.Connect(urls, opts...)
		if !errors.Is(err, nats.ErrAuthorization) || creds != "" || !loopbackURLs(urls) {
			return nc, "", b.hint(err, creds)
		}
		if seed = b.find(); seed == "" {
			return nil, "", b.hint(err, "")
		}
	}
	o, err := nats.NkeyOptionFromSeed(seed)
	if err != nil {
		// Not wrapped: the error may quote the seed's bytes.
		return nil, seed, fmt.Errorf("nkey seed %s: cannot read it as a seed (is it physd's %s?)", seed, daemon.SubscriberSeedFile)
	}
	nc, err = nats.Connect(urls, append(opts, o)...)
	return nc, seed, err
}

// find returns the first subscriber seed that exists among the state
// directories physd may use, or "".
func (b *boardAuth) find() string {
	var dirs []string
	if b.stateDir != "" {
		dirs = []string{b.stateDir}
	} else {
		dirs = append(dirs, strings.Split(os.Getenv("STATE_DIRECTORY"), ":")...)
		dirs = append(dirs, serviceStateDir)
		if cfg, err := config.Load(serviceConfig); err == nil && cfg.StateDir != "" {
			dirs = append(dirs, cfg.StateDir)
		}
		if d, err := config.StateDir(nil, ""); err == nil {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		p := daemon.SubscriberSeed(d)
		if _, err := os.Stat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return p // a file there that cannot be read says so when used
		}
	}
	return ""
}

// loopbackURLs reports whether every server in the comma-separated urls
// is on this machine.
func loopbackURLs(urls string) bool {
	for _, u := range strings.Split(urls, ",") {
		u = strings.TrimSpace(u)
		if !strings.Contains(u, "://") {
			u = "nats://" + u
		}
		p, err := url.Parse(u)
		if err != nil {
			return false
		}
		h := p.Hostname()
		if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return false
		}
	}
	return true
}

// hint explains an authorization error from a board's server when no
// credentials were used.
func (b *boardAuth) hint(err error, used string) error {
	if err == nil || used != "" || !errors.Is(err, nats.ErrAuthorization) {
		return err
	}
	return fmt.Errorf("%w (physd's embedded server admits only its own users: give --state-dir, physd's state directory, or --nkey STATE_DIR/%s; no seed was found in %s, %s's state_dir or the user's)",
		err, daemon.SubscriberSeedFile, serviceStateDir, serviceConfig)
}
