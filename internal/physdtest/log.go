package physdtest

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// Record is one JSON log line of physd (log/slog's JSON handler).
type Record map[string]any

// Msg is the record's message.
func (r Record) Msg() string { s, _ := r["msg"].(string); return s }

// Str is a string attribute ("" if absent).
func (r Record) Str(key string) string { s, _ := r[key].(string); return s }

// Num is a numeric attribute (0 if absent).
func (r Record) Num(key string) float64 { f, _ := r[key].(float64); return f }

// Log collects a process's output: every line as text, and the lines that
// are JSON objects as Records. It is safe for concurrent use.
type Log struct{ l lockedLines }

// Write implements io.Writer for the process's stdout and stderr.
func (g *Log) Write(p []byte) (int, error) {
	g.l.mu.Lock()
	defer g.l.mu.Unlock()
	g.l.buf = append(g.l.buf, p...)
	for {
		i := strings.IndexByte(string(g.l.buf), '\n')
		if i < 0 {
			break
		}
		line := string(g.l.buf[:i])
		g.l.buf = g.l.buf[i+1:]
		g.l.text = append(g.l.text, line)
		var r Record
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &r) == nil {
			g.l.recs = append(g.l.recs, r)
		}
	}
	return len(p), nil
}

// Records returns the JSON records with message msg ("" for all).
func (g *Log) Records(msg string) []Record {
	g.l.mu.Lock()
	defer g.l.mu.Unlock()
	var out []Record
	for _, r := range g.l.recs {
		if msg == "" || r.Msg() == msg {
			out = append(out, r)
		}
	}
	return out
}

// Text returns the whole output so far.
func (g *Log) Text() string {
	g.l.mu.Lock()
	defer g.l.mu.Unlock()
	return strings.Join(g.l.text, "\n")
}

// Wait waits until a record with message msg satisfies ok (nil accepts
// any) and returns it, or returns false when ctx ends.
func (g *Log) Wait(ctx context.Context, msg string, ok func(Record) bool) (Record, bool) {
	for {
		for _, r := range g.Records(msg) {
			if ok == nil || ok(r) {
				return r, true
			}
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// lockedLines guards the log's lines.
type lockedLines struct {
	mu   sync.Mutex
	buf  []byte
	recs []Record
	text []string
}
