package daemon

import (
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/physd/physd/config"
)

// secretScrubber replaces every secret of the configuration (tokens, the
// nkey seed, RTSP/WHEP URLs and their passwords) with "[redacted]" in
// text bound for the dashboard. Source names and errors are already meant
// to be free of them; this makes sure a library's error message that
// quotes a URL cannot leak one.
func secretScrubber(cfg *config.Config) *strings.Replacer {
	var secrets []string
	add := func(s string) {
		if s != "" && !slices.Contains(secrets, s) {
			secrets = append(secrets, s)
		}
	}
	if cfg != nil {
		add(cfg.HTTP.Token.Value())
		add(cfg.NATS.Token.Value())
		add(cfg.NATS.NKeySeed.Value())
		for _, cc := range cfg.Cameras {
			add(cc.Source.Token.Value())
			raw := cc.Source.URL.Value()
			add(raw)
			if u, err := url.Parse(raw); err == nil && u.User != nil {
				add(u.User.String())
				if p, ok := u.User.Password(); ok {
					add(p)
				}
			}
		}
	}
	// Longest first: a URL is replaced whole before its password.
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s, "[redacted]")
	}
	return strings.NewReplacer(pairs...)
}

// redactUserinfo removes the user:password@ of every URL in s.
func redactUserinfo(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		// The authority ends at the path, query, fragment or the end of
		// the URL in the text; its last '@' ends the userinfo.
		end := strings.IndexAny(s, "/?# \t\r\n\"'<>")
		if end < 0 {
			end = len(s)
		}
		if at := strings.LastIndexByte(s[:end], '@'); at >= 0 {
			s = s[at+1:]
		}
	}
}
