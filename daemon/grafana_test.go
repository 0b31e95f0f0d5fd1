package daemon

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// docs/grafana/physd.json reads only metrics physd exposes, each by a
// label it has: a renamed metric would leave a panel silently empty.
func TestGrafanaDashboardReadsPhysdMetrics(t *testing.T) {
	b, err := os.ReadFile("../docs/grafana/physd.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	// The metrics' names and labels, from their descriptors.
	labels := map[string][]string{}
	ch := make(chan *prometheus.Desc, 64)
	go func() { daemonCollector{}.Describe(ch); close(ch) }()
	descRE := regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)
	for d := range ch {
		m := descRE.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("descriptor %s", d)
		}
		labels[m[1]] = strings.Split(m[2], ",")
	}
	metricRE := regexp.MustCompile(`\b(physd_[a-z_]+)(\{([^}]*)\})?`)
	labelRE := regexp.MustCompile(`([a-z_]+)=~?"`)
	n := 0
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, m := range metricRE.FindAllStringSubmatch(tg.Expr, -1) {
				n++
				have, ok := labels[m[1]]
				if !ok {
					t.Errorf("panel %q reads %s, which physd does not expose", p.Title, m[1])
					continue
				}
				for _, l := range labelRE.FindAllStringSubmatch(m[3], -1) {
					if !slicesContains(have, l[1]) {
						t.Errorf("panel %q selects %s by %q; its labels are %v", p.Title, m[1], l[1], have)
					}
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("%d metric references in %d panels", n, len(dash.Panels))
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if strings.TrimSpace(x) == v {
			return true
		}
	}
	return false
}
