// Package outbox is a bounded, ordered, durable on-disk queue for NATS
// messages that could not be published while NATS was unreachable.
//
// Each message is one file in the outbox directory, written atomically
// (temporary file, fsync, rename, directory fsync) with a CRC-32C, so a
// crash never leaves a half-written message that looks whole. At Open a
// torn or corrupt file is moved aside with a warning and the rest loads.
//
// The publisher drains the outbox in order:
//
//	for {
//		m, ok, err := ob.Front()
//		if err != nil || !ok {
//			break // retry later, or nothing to send
//		}
//		// Publish m on m.Subject with Nats-Msg-Id m.MsgID and m.Header;
//		// with JetStream, wait for the acknowledgement. On failure, stop
//		// and keep m queued.
//		if err := ob.Remove(m.Seq); err != nil && !errors.Is(err, outbox.ErrNotQueued) {
//			log the error
//		}
//	}
//
// Delivery is at least once: a crash between the acknowledgement and
// Remove publishes the message again after the restart, with the same
// MsgID, which JetStream deduplicates within its duplicate window.
//
// When a bound is reached, messages are evicted by Class: every queued
// Diagnostic, oldest first, before the oldest Essential; a Diagnostic
// never displaces an Essential. Evictions are counted in Stats.
package outbox

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Defaults for zero Options fields. At physd's rates (a few messages per
// camera per window) they hold days of diagnostics and far more of
// estimates, in a size that suits an SD card.
const (
	DefaultMaxMessages = 10000
	DefaultMaxBytes    = 64 << 20
)

// Sentinel errors, for errors.Is.
var (
	// ErrTooLarge: a single message's record exceeds Options.MaxBytes.
	ErrTooLarge = errors.New("message larger than the outbox bound")
	// ErrNotQueued: Remove of a sequence number that is not queued, such
	// as one evicted while it was being published.
	ErrNotQueued = errors.New("sequence number not queued")
	// ErrClosed: the Outbox was closed.
	ErrClosed = errors.New("outbox closed")
)

// Options configures Open. The zero value is usable.
type Options struct {
	// MaxMessages bounds the number of queued messages; 0 means
	// DefaultMaxMessages.
	MaxMessages int
	// MaxBytes bounds the total size of the record files, payloads and
	// envelopes, so that it is the disk space the outbox takes; 0 means
	// DefaultMaxBytes.
	MaxBytes int64
	// Logger receives warnings about set-aside files and evictions; nil
	// discards them.
	Logger *slog.Logger
}

// Stats is a snapshot of the outbox's counters.
type Stats struct {
	// Queued and Bytes are what is waiting now (Bytes in record files).
	Queued int
	Bytes  int64
	// EvictedDiagnostic and EvictedEssential count messages dropped to
	// keep the bounds since Open, by class.
	EvictedDiagnostic int64
	EvictedEssential  int64
	// SetAside counts record files found torn, corrupt or missing since
	// Open; the ones that were there are renamed with ".corrupt-<unix
	// nanoseconds>" appended, and kept.
	SetAside int64
}

// Outbox is an open outbox directory. It is safe for concurrent use. Only
// one Outbox, in one process, may use a directory at a time.
type Outbox struct {
	dir         string
	log         *slog.Logger
	maxMessages int
	maxBytes    int64

	mu sync.Mutex
	// queues holds one queue per class, each in increasing Seq order;
	// the front of the outbox is the lowest head, and eviction takes the
	// head of the lowest class that has one. Both are O(classes).
	queues   [numClasses][]entry
	count    int
	bytes    int64
	nextSeq  uint64
	evicted  [numClasses]int64
	setAside int64
	// evicting is true from the first eviction until an Append that
	// evicts nothing, so an outage logs one warning, not one per message.
	evicting bool
	closed   bool
}

// Open opens the outbox in dir, creating the directory (mode 0700) if
// needed, and loads the records there in Seq order. Temporary files left
// by an interrupted write are removed. A record file that is torn,
// corrupt or not a record is renamed aside with a warning, counted in
// Stats.SetAside, and skipped: Open fails only when the directory itself
// cannot be used. If the records exceed the bounds (they were lowered),
// the excess is evicted as Append would.
func Open(dir string, opt Options) (*Outbox, error) {
	switch {
	case dir == "":
		return nil, errors.New("outbox: open: directory name is empty")
	case opt.MaxMessages < 0:
		return nil, fmt.Errorf("outbox: open %s: option MaxMessages: %d is negative", dir, opt.MaxMessages)
	case opt.MaxBytes < 0:
		return nil, fmt.Errorf("outbox: open %s: option MaxBytes: %d is negative", dir, opt.MaxBytes)
	}
	o := &Outbox{dir: dir, log: opt.Logger, maxMessages: opt.MaxMessages, maxBytes: opt.MaxBytes, nextSeq: 1}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	if o.maxMessages == 0 {
		o.maxMessages = DefaultMaxMessages
	}
	if o.maxBytes == 0 {
		o.maxBytes = DefaultMaxBytes
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("outbox: open: %w", err)
	}
	if err := o.load(); err != nil {
		return nil, fmt.Errorf("outbox: open %s: %w", dir, err)
	}
	return o, nil
}

// Append queues m durably: when it returns nil the message survives a
// crash. It assigns m's Seq, after every Seq queued.
//
// If a bound would be exceeded, Append evicts queued messages of m's
// class or below, lowest class and oldest first, and returns them
// (without Header and Data). If that cannot make room, because the room
// is taken by a higher class, m itself is dropped instead and returned
// alone with Seq 0. Evictions are counted in Stats. The new record is
// written before the evicted ones are deleted, so that a failed write
// loses nothing; for that moment (and after a crash in it, which Open
// repairs) the directory holds one record more than the bound.
//
// An invalid message is refused with an error naming the field
// (wrapping ErrInvalid), one whose record alone exceeds MaxBytes with
// ErrTooLarge. On error nothing was queued or evicted.
func (o *Outbox) Append(m Message) (evicted []Message, err error) {
	m.Seq = 0
	if err := validate(&m); err != nil {
		return nil, fmt.Errorf("outbox: append to %q: %w", m.Subject, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil, fmt.Errorf("outbox: append to %q: %w", m.Subject, ErrClosed)
	}
	if o.nextSeq > maxSeq {
		return nil, fmt.Errorf("outbox: append to %q: sequence numbers exhausted", m.Subject)
	}
	m.Seq = o.nextSeq
	rec, err := encodeRecord(&m)
	if err != nil {
		return nil, fmt.Errorf("outbox: append to %q: %w", m.Subject, err)
	}
	size := int64(len(rec))
	if size > o.maxBytes {
		return nil, fmt.Errorf("outbox: append to %q (Nats-Msg-Id %q): record of %d bytes, MaxBytes %d: %w",
			m.Subject, m.MsgID, size, o.maxBytes, ErrTooLarge)
	}
	victims, fits := o.plan(m.Class, size)
	if !fits {
		o.evicted[m.Class]++
		o.warnEvicting()
		o.log.Debug("outbox: dropped incoming message, outbox full of higher classes",
			"subject", m.Subject, "msg_id", m.MsgID, "class", m.Class)
		return []Message{{Subject: m.Subject, MsgID: m.MsgID, Class: m.Class}}, nil
	}
	name := recordName(m.Seq)
	if err := writeAtomic(o.dir, name, rec); err != nil {
		return nil, fmt.Errorf("outbox: append to %q: %w", m.Subject, err)
	}
	o.nextSeq++
	for _, v := range victims {
		o.evict(o.popFront(v.class))
		evicted = append(evicted, v.message())
	}
	if len(victims) == 0 {
		o.evicting = false
	}
	o.queues[m.Class] = append(o.queues[m.Class], entry{seq: m.Seq, size: size, class: m.Class, subject: m.Subject, msgID: m.MsgID})
	o.count++
	o.bytes += size
	return evicted, nil
}

// Front returns the oldest queued message, read from disk, without
// removing it; ok is false when the outbox is empty. The data is read
// from the file rather than kept in memory, so that a full outbox costs
// its index (about a hundred bytes a message), not MaxBytes of RAM; the
// read is one small file per publication. Front holds the lock while it
// reads, so an eviction cannot delete the file under it. A record that has
// become corrupt on disk since Open is set aside, counted and skipped, as
// at Open. An error (such as a failing read) leaves the message queued;
// calling Front later tries again.
func (o *Outbox) Front() (m Message, ok bool, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return Message{}, false, fmt.Errorf("outbox: front: %w", ErrClosed)
	}
	for {
		c, found := o.head()
		if !found {
			return Message{}, false, nil
		}
		e := o.queues[c][0]
		name := recordName(e.seq)
		b, err := readRecordFile(filepath.Join(o.dir, name), o.maxBytes)
		if errors.Is(err, os.ErrNotExist) {
			o.popFront(c)
			o.setAside++
			o.log.Error("outbox: queued record vanished from disk; message lost",
				"file", filepath.Join(o.dir, name), "subject", e.subject, "msg_id", e.msgID)
			continue
		}
		if err != nil && !errors.Is(err, errTooBigOnDisk) && !errors.Is(err, errNotRegular) {
			return Message{}, false, fmt.Errorf("outbox: front: %w", err)
		}
		if err == nil {
			m, err = decodeRecord(b)
			if err == nil && (m.Seq != e.seq || m.Class != e.class) {
				err = fmt.Errorf("record changed on disk since it was queued: %w", ErrCorrupt)
			}
			if err == nil {
				return m, true, nil
			}
		}
		o.popFront(c)
		o.putAside(name, err)
		if err := syncDir(o.dir); err != nil {
			o.log.Warn("outbox: fsync after setting a record aside", "dir", o.dir, "err", err)
		}
	}
}

// Remove deletes the queued message seq, once NATS has it (with
// JetStream: once the publication is acknowledged), and fsyncs the
// directory so that it is not published again after a restart. It
// returns an error wrapping ErrNotQueued if seq is not queued, as when it
// was evicted while being published; the caller can ignore that one.
func (o *Outbox) Remove(seq uint64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return fmt.Errorf("outbox: remove %d: %w", seq, ErrClosed)
	}
	c, i, found := o.find(seq)
	if !found {
		return fmt.Errorf("outbox: remove %d: %w", seq, ErrNotQueued)
	}
	if err := os.Remove(filepath.Join(o.dir, recordName(seq))); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("outbox: remove %d: %w", seq, err)
	}
	// The file is gone from the directory, so the entry goes whether or
	// not the fsync works: a crash can at worst bring it back, and it is
	// then published again with the same MsgID.
	if i == 0 {
		o.popFront(c)
	} else {
		e := o.queues[c][i]
		// slices.Delete zeroes the vacated slot, releasing its strings.
		o.queues[c] = slices.Delete(o.queues[c], i, i+1)
		o.count--
		o.bytes -= e.size
	}
	if err := syncDir(o.dir); err != nil {
		return fmt.Errorf("outbox: remove %d: %w", seq, err)
	}
	return nil
}

// Len returns the number of queued messages.
func (o *Outbox) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.count
}

// Stats returns a snapshot of the counters.
func (o *Outbox) Stats() Stats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return Stats{
		Queued:            o.count,
		Bytes:             o.bytes,
		EvictedDiagnostic: o.evicted[Diagnostic],
		EvictedEssential:  o.evicted[Essential],
		SetAside:          o.setAside,
	}
}

// Close makes evictions durable and ends the use of the Outbox; later
// calls fail with ErrClosed. The records stay on disk for the next Open.
func (o *Outbox) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.closed = true
	if err := syncDir(o.dir); err != nil {
		return fmt.Errorf("outbox: close: %w", err)
	}
	return nil
}

// putAside renames a bad record file out of the way, logs why and counts
// it. If even the rename fails the file is left where it is; it is not in
// the index, so it is only retried at the next Open.
func (o *Outbox) putAside(name string, reason error) {
	o.setAside++
	from := filepath.Join(o.dir, name)
	to := filepath.Join(o.dir, setAsideName(name, time.Now()))
	if err := os.Rename(from, to); err != nil {
		o.log.Warn("outbox: bad record file; cannot set it aside", "file", from, "reason", reason, "err", err)
		return
	}
	o.log.Warn("outbox: bad record file set aside", "file", from, "moved_to", to, "reason", reason)
}
