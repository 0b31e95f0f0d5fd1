package daemon

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/physd/physd/modes"
	"github.com/physd/physd/wire"
)

// modeState is what a line keeps of its modes across a restart, in
// modes.json beside its baseline: the labels it follows (so a mode keeps
// its label, its subject and its alerts) and the alerts of labels beyond
// the first — the fixed rule's baselines, the charts (label 1's are
// baseline.json and charts.json).
type modeState struct {
	Tracker   modes.TrackerState     `json:"tracker"`
	Baselines map[int]*wire.Baseline `json:"baselines,omitempty"`
	Charts    map[int]chartState     `json:"charts,omitempty"`
}

func modeStatePath(dir string) string { return filepath.Join(dir, "modes.json") }

// loadModeState reads a line's modes from its state directory (nil when
// there are none); an unreadable file is set aside, and the labels start
// afresh.
func loadModeState(dir string, log *slog.Logger) *modeState {
	path := modeStatePath(dir)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var st modeState
	var probe modes.Tracker
	if err = json.Unmarshal(b, &st); err == nil {
		err = probe.Restore(st.Tracker, time.Time{})
	}
	if err != nil {
		to, _ := setAside(path)
		log.Warn("modes state unreadable; set aside, labels start afresh", "moved_to", to, "err", err)
		return nil
	}
	for label, base := range st.Baselines {
		if label < 2 || base == nil || !(base.Fn > 0) {
			delete(st.Baselines, label)
		}
	}
	log.Info("modes restored", "labels", len(st.Tracker.Live), "baselines", len(st.Baselines))
	return &st
}

// restoreModes gives the reporter the modes its line kept: the labels,
// as seen now, and each later label's alerter with its baseline.
func (c *reporter) restoreModes(st *modeState, now time.Time) {
	if st == nil {
		return
	}
	if err := c.modes.Restore(st.Tracker, now); err != nil {
		c.log.Warn("modes not restored", "err", err)
		return
	}
	alerterOf := func(label int) *alerter {
		if c.modeAlerts == nil {
			c.modeAlerts = map[int]*alerter{}
		}
		al := c.modeAlerts[label]
		if al == nil {
			al = newAlerter(c.camera, c.alerts.cfg, nil)
			al.env = c.alerts.env
			c.modeAlerts[label] = al
		}
		return al
	}
	for label, base := range st.Baselines {
		alerterOf(label).base = base
	}
	for label, ch := range st.Charts {
		if label < 2 {
			continue
		}
		al := alerterOf(label)
		if al.fn == nil {
			continue
		}
		if err := restoreChartPair(al, ch); err != nil {
			c.log.Warn("a mode's alert charts not restored; they learn again", "mode", label, "err", err)
			continue
		}
		if c.modeCharted == nil {
			c.modeCharted = map[int]int{}
		}
		c.modeCharted[label] = al.chartPoints()
	}
}

// saveModes writes the line's labels and later labels' baselines
// (modes.json): when a label appears or is retired and when a baseline
// is established — not every window, the card it is written to wears.
func (c *reporter) saveModes() {
	if c.dir == "" {
		return
	}
	st := modeState{Tracker: c.modes.State()}
	for label, al := range c.modeAlerts {
		if al.fn != nil {
			if st.Charts == nil {
				st.Charts = map[int]chartState{}
			}
			st.Charts[label] = chartState{Fn: al.fn.Snapshot(), Zeta: al.zeta.Snapshot()}
			continue
		}
		if al.base != nil {
			if st.Baselines == nil {
				st.Baselines = map[int]*wire.Baseline{}
			}
			st.Baselines[label] = al.base
		}
	}
	b, err := json.Marshal(st)
	if err == nil {
		err = writeAtomic(modeStatePath(c.dir), func(f *os.File) error { _, err := f.Write(b); return err })
	}
	if err != nil {
		c.log.Error("modes state not saved", "err", err)
	}
}
