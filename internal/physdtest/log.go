package physdtest

import (
	"bytes"
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

// Log collects output: all of it as text, and the lines that are JSON
// objects as Records. It is safe for concurrent use, so it serves as the
// stdout and stderr of a process, or as the sink of a logger under test.
type Log struct {
	mu      sync.Mutex
	all     strings.Builder
	partial []byte // an unfinished last line
	recs    []Record
}

// Write implements io.Writer.
func (g *Log) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.all.Write(p)
	g.partial = append(g.partial, p...)
	for {
		i := bytes.IndexByte(g.partial, '\n')
		if i < 0 {
			break
		}
		line := g.partial[:i]
		var r Record
		if len(line) > 0 && line[0] == '{' && json.Unmarshal(line, &r) == nil {
			g.recs = append(g.recs, r)
		}
		g.partial = g.partial[i+1:]
	}
	return len(p), nil
}

// Records returns the JSON records with message msg ("" for all).
func (g *Log) Records(msg string) []Record {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []Record
	for _, r := range g.recs {
		if msg == "" || r.Msg() == msg {
			out = append(out, r)
		}
	}
	return out
}

// String returns everything written so far.
func (g *Log) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.all.String()
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
