package daemon

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// MQTTUser is the user MQTT clients log in as on the embedded server, and
// MQTTPasswordFile its password's file in the state directory.
const (
	MQTTUser         = "physd"
	MQTTPasswordFile = "nats/mqtt.password"
)

// loadOrCreateMQTTPassword reads the MQTT user's password from the state
// directory, creating it (32 random bytes, base64url, 0600) when missing;
// a file readable by others is made 0600 again.
func loadOrCreateMQTTPassword(stateDir string) (string, error) {
	path := filepath.Join(stateDir, filepath.FromSlash(MQTTPasswordFile))
	if b, err := os.ReadFile(path); err == nil {
		if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(path, 0o600); err != nil {
				return "", fmt.Errorf("mqtt password %s: %w", path, err)
			}
		}
		if p := strings.TrimSpace(string(b)); p != "" {
			return p, nil
		}
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	p := base64.RawURLEncoding.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("mqtt password: %w", err)
	}
	if err := writeAtomic(path, func(f *os.File) error {
		if err := f.Chmod(0o600); err != nil {
			return err
		}
		_, err := f.WriteString(p + "\n")
		return err
	}); err != nil {
		return "", fmt.Errorf("mqtt password %s: %w", path, err)
	}
	return p, nil
}

// mqttOptions sets the embedded server's MQTT listener on listen and its
// user: read-only on physd's subjects (prefix.>), and Home Assistant's
// discovery topics (a client reads its own discovery and publishes its
// status, its birth and last will), nothing else.
func mqttOptions(opts *server.Options, listen, prefix, discovery, password string) error {
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("nats: embedded.mqtt.listen %q: %w", listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return fmt.Errorf("nats: embedded.mqtt.listen %q: bad port", listen)
	}
	if port == 0 {
		port = -1 // a free port, chosen by the server
	}
	opts.MQTT.Host, opts.MQTT.Port = host, port
	opts.MQTT.TLSConfig = opts.TLSConfig
	// An MQTT filter "a/#" is the subjects a.> and a itself.
	sub := []string{prefix, prefix + ".>"}
	var pub []string
	if discovery != "" {
		sub = append(sub, discovery, discovery+".>")
		pub = append(pub, discovery+".status")
	}
	perms := &server.Permissions{Subscribe: &server.SubjectPermission{Allow: sub}}
	if len(pub) > 0 {
		perms.Publish = &server.SubjectPermission{Allow: pub}
	} else {
		perms.Publish = &server.SubjectPermission{Deny: []string{">"}}
	}
	opts.Users = append(opts.Users, &server.User{Username: MQTTUser, Password: password, Permissions: perms,
		AllowedConnectionTypes: map[string]struct{}{"MQTT": {}}})
	return nil
}
