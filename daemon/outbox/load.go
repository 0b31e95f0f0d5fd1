package outbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// load fills the index from the directory at Open. Only a failure to
// list the directory is an error; every bad file is dealt with and
// reported, so that physd starts with what is good.
func (o *Outbox) load() error {
	ents, err := os.ReadDir(o.dir)
	if err != nil {
		return err
	}
	changed := false
	// ReadDir sorts by name, and names sort as sequence numbers do, so
	// each class's queue is built in order.
	for _, de := range ents {
		name := de.Name()
		switch {
		case strings.Contains(name, setAsideTag):
			// Set aside by an earlier run; kept for a post-mortem.
		case strings.HasSuffix(name, tempExt):
			// A write that crashed before its rename: the message was
			// never acknowledged to the caller as queued.
			if err := os.Remove(filepath.Join(o.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				o.log.Warn("outbox: cannot remove temporary file", "file", filepath.Join(o.dir, name), "err", err)
			} else {
				o.log.Info("outbox: removed temporary file of an interrupted write", "file", filepath.Join(o.dir, name))
				changed = true
			}
		case strings.HasSuffix(name, recordExt):
			if err := o.loadRecord(name); err != nil {
				o.putAside(name, err)
				changed = true
			}
		default:
			o.log.Debug("outbox: ignoring unknown file", "file", filepath.Join(o.dir, name))
		}
	}
	for o.count > o.maxMessages || o.bytes > o.maxBytes {
		o.evict(o.popFront(o.lowestClass()))
		changed = true
	}
	if changed {
		if err := syncDir(o.dir); err != nil {
			return err
		}
	}
	o.log.Info("outbox: opened", "dir", o.dir, "queued", o.count, "bytes", o.bytes,
		"set_aside", o.setAside, "evicted", o.evicted[Diagnostic]+o.evicted[Essential])
	return nil
}

// loadRecord reads, checks and indexes one record file; an error is the
// reason to set it aside.
func (o *Outbox) loadRecord(name string) error {
	seq, err := parseRecordName(name)
	if err != nil {
		return err
	}
	// Records above MaxBytes were never admitted by Append with these
	// options, and reading one could take a lot of memory.
	b, err := readRecordFile(filepath.Join(o.dir, name), o.maxBytes)
	if err != nil {
		return err
	}
	m, err := decodeRecord(b)
	if err != nil {
		return err
	}
	if m.Seq != seq {
		return fmt.Errorf("field Seq: %d, but the file name says %d: %w", m.Seq, seq, ErrCorrupt)
	}
	o.queues[m.Class] = append(o.queues[m.Class], entry{seq: seq, size: int64(len(b)), class: m.Class, subject: m.Subject, msgID: m.MsgID})
	o.count++
	o.bytes += int64(len(b))
	o.nextSeq = max(o.nextSeq, seq+1)
	return nil
}
