package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/physd/physd/config"
)

// defaultMaxAge is how old a covariate's value may be, unless configured.
const defaultMaxAge = 2 * time.Hour

// environment holds the latest value of each configured covariate (a
// temperature, a wind speed) for the alerts' control charts: from NATS
// subjects, files a sensor daemon rewrites, and POST /api/v1/covariates.
// Safe for concurrent use.
type environment struct {
	log  *slog.Logger
	cfg  map[string]config.Covariate
	mu   sync.Mutex
	vals map[string]envValue
}

type envValue struct {
	v  float64
	at time.Time
}

func newEnvironment(cfg []config.Covariate, log *slog.Logger) *environment {
	e := &environment{log: log, cfg: map[string]config.Covariate{}, vals: map[string]envValue{}}
	for _, c := range cfg {
		e.cfg[c.Name] = c
	}
	return e
}

// errUnknownCovariate: a value for a covariate the config does not name.
var errUnknownCovariate = errors.New("not a configured covariate (alerts.covariates)")

// set records a value of covariate name at time at (zero: now). A later
// value replaces an earlier one; an earlier one is ignored.
func (e *environment) set(name string, v float64, at time.Time) error {
	if e == nil {
		return fmt.Errorf("covariate %q: %w", name, errUnknownCovariate)
	}
	if _, ok := e.cfg[name]; !ok {
		return fmt.Errorf("covariate %q: %w", name, errUnknownCovariate)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("covariate %q: value %v is not a finite number", name, v)
	}
	if at.IsZero() {
		at = time.Now()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if old, ok := e.vals[name]; ok && at.Before(old.at) {
		return nil
	}
	e.vals[name] = envValue{v, at}
	return nil
}

// At returns the covariates whose latest value is at most their max age
// from t.
func (e *environment) At(t time.Time) map[string]float64 {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]float64{}
	for name, v := range e.vals {
		age := e.cfg[name].MaxAge
		if age <= 0 {
			age = defaultMaxAge
		}
		if d := t.Sub(v.at); d <= age && d >= -age {
			out[name] = v.v
		}
	}
	return out
}

// parseCovariate reads a value: a number, or JSON {"value": v, "time":
// RFC 3339} (time optional).
func parseCovariate(b []byte) (float64, time.Time, error) {
	b = bytes.TrimSpace(b)
	if v, err := strconv.ParseFloat(string(b), 64); err == nil {
		return v, time.Time{}, nil
	}
	var m struct {
		Value *float64  `json:"value"`
		Time  time.Time `json:"time"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Value == nil {
		return 0, time.Time{}, fmt.Errorf("%.40q: want a number or {\"value\": number, \"time\": RFC 3339}", b)
	}
	return *m.Value, m.Time, nil
}

// subscribe takes the covariates' values from their NATS subjects on nc
// until ctx ends.
func (e *environment) subscribe(ctx context.Context, nc *nats.Conn) error {
	var subs []*nats.Subscription
	for name, c := range e.cfg {
		if c.Subject == "" {
			continue
		}
		sub, err := nc.Subscribe(c.Subject, func(m *nats.Msg) {
			v, at, err := parseCovariate(m.Data)
			if err == nil {
				err = e.set(name, v, at)
			}
			if err != nil {
				e.log.Warn("covariate value refused", "covariate", name, "subject", m.Subject, "err", err)
			}
		})
		if err != nil {
			for _, s := range subs {
				_ = s.Unsubscribe()
			}
			return fmt.Errorf("covariate %q: subscribe %q: %w", name, c.Subject, err)
		}
		subs = append(subs, sub)
	}
	go func() {
		<-ctx.Done()
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}()
	return nil
}

// filePoll is how often the covariates' files are looked at.
const filePoll = 2 * time.Second

// watchFiles reads each covariate's file when it changes (its
// modification time, which is the value's time unless the file says
// otherwise) until ctx ends.
func (e *environment) watchFiles(ctx context.Context, every time.Duration) {
	seen := map[string]time.Time{}
	read := func() {
		for name, c := range e.cfg {
			if c.File == "" {
				continue
			}
			st, err := os.Stat(c.File)
			if err != nil || !st.ModTime().After(seen[name]) {
				continue
			}
			seen[name] = st.ModTime()
			b, err := os.ReadFile(c.File)
			if err != nil {
				e.log.Warn("covariate file unreadable", "covariate", name, "file", c.File, "err", err)
				continue
			}
			v, at, err := parseCovariate(b)
			if at.IsZero() {
				at = st.ModTime()
			}
			if err == nil {
				err = e.set(name, v, at)
			}
			if err != nil {
				e.log.Warn("covariate value refused", "covariate", name, "file", c.File, "err", err)
			}
		}
	}
	read()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			read()
		}
	}
}

// covariatePost serves POST /api/v1/covariates (http.token): a sensor's
// reading, JSON {"name": "temperature", "value": 12.5, "time": RFC 3339
// (optional: now)}. 204 when taken; 400 naming the field otherwise.
func (d *Daemon) covariatePost(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, "application/json")
	if !ok {
		return
	}
	var m struct {
		Name  string    `json:"name"`
		Value *float64  `json:"value"`
		Time  time.Time `json:"time"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		httpError(w, http.StatusBadRequest, "covariate: %v", err)
		return
	}
	if m.Value == nil {
		httpError(w, http.StatusBadRequest, "covariate %q: no value", m.Name)
		return
	}
	d.mu.Lock()
	env := d.env
	d.mu.Unlock()
	if err := env.set(m.Name, *m.Value, m.Time); err != nil {
		httpError(w, http.StatusBadRequest, "%v", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
