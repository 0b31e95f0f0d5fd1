package fleet

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nats-io/nats-server/v2/conf"
)

// TestHubConfigs parses docs/hub/hub-N.conf as nats-server does and checks
// what docs/fleet.md says of them: each names itself, JetStream in domain
// hub, a leaf node listener on 7422, and routes to the two other nodes.
// (Loading them fully needs their TLS files; the fleet test runs the same
// settings on loopback.)
func TestHubConfigs(t *testing.T) {
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("hub-%d", i)
		m, err := conf.ParseFile(filepath.Join("..", "docs", "hub", name+".conf"))
		if err != nil {
			t.Fatalf("%s.conf: %v", name, err)
		}
		js, _ := m["jetstream"].(map[string]any)
		leaf, _ := m["leafnodes"].(map[string]any)
		cluster, _ := m["cluster"].(map[string]any)
		if m["server_name"] != name || js["domain"] != "hub" || leaf["listen"] != "0.0.0.0:7422" || cluster["name"] != "hub" {
			t.Errorf("%s.conf: server_name %v, jetstream.domain %v, leafnodes.listen %v, cluster.name %v", name, m["server_name"], js["domain"], leaf["listen"], cluster["name"])
		}
		routes, _ := cluster["routes"].([]any)
		for j := 1; j <= 3; j++ {
			r := fmt.Sprintf("nats-route://hub-%d.example.net:6222", j)
			if has := slices.Contains(routes, any(r)); has != (j != i) {
				t.Errorf("%s.conf: routes %v: %s listed %v", name, routes, r, has)
			}
		}
	}
}
