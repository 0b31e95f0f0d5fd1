package outbox

import (
	"errors"
	"os"
	"path/filepath"
)

// The in-memory index: what is queued, in which order, and what goes
// first when a bound is reached. Its methods expect o.mu to be held.

// entry is what the in-memory index keeps of a queued message: enough to
// order, bound, evict and report it without touching the disk. The data
// stays on disk, so memory stays small when the outbox holds MaxBytes.
type entry struct {
	seq     uint64
	size    int64
	class   Class
	subject string
	msgID   string
}

// message is the entry as a Message without Header and Data, which are
// on disk; it is what an eviction reports.
func (e entry) message() Message {
	return Message{Subject: e.subject, MsgID: e.msgID, Class: e.class, Seq: e.seq}
}

// plan picks the queued messages to evict so that one more record of
// class c and size bytes fits, and reports whether it then fits. Only
// classes up to c are candidates, so that a message never displaces one
// of a higher class. It changes nothing.
func (o *Outbox) plan(c Class, size int64) (victims []entry, fits bool) {
	count, bytes := o.count+1, o.bytes+size
	for k := Class(0); k <= c; k++ {
		for _, e := range o.queues[k] {
			if count <= o.maxMessages && bytes <= o.maxBytes {
				return victims, true
			}
			victims = append(victims, e)
			count--
			bytes -= e.size
		}
	}
	if count <= o.maxMessages && bytes <= o.maxBytes {
		return victims, true
	}
	return nil, false
}

// evict deletes an entry's file, already popped from the index, and
// counts it. The removal is not fsynced here: if a crash undoes it, Open
// finds the outbox over its bound and evicts again, and the next Append
// or Remove fsyncs the directory anyway.
func (o *Outbox) evict(e entry) {
	o.evicted[e.class]++
	o.warnEvicting()
	o.log.Debug("outbox: evicted", "seq", e.seq, "subject", e.subject, "msg_id", e.msgID, "class", e.class)
	if err := os.Remove(filepath.Join(o.dir, recordName(e.seq))); err != nil && !errors.Is(err, os.ErrNotExist) {
		// It comes back at the next Open, which evicts it again.
		o.log.Warn("outbox: cannot delete evicted record", "dir", o.dir, "seq", e.seq, "err", err)
	}
}

// warnEvicting logs the start of a run of evictions.
func (o *Outbox) warnEvicting() {
	if o.evicting {
		return
	}
	o.evicting = true
	o.log.Warn("outbox full: evicting, diagnostics first; see the eviction counters",
		"dir", o.dir, "queued", o.count, "bytes", o.bytes, "max_messages", o.maxMessages, "max_bytes", o.maxBytes)
}

// popFront removes and returns the oldest entry of class c, which the
// caller knows exists.
func (o *Outbox) popFront(c Class) entry {
	q := o.queues[c]
	e := q[0]
	q[0] = entry{} // drop the strings for the garbage collector
	o.queues[c] = q[1:]
	o.count--
	o.bytes -= e.size
	return e
}

// head returns the class whose oldest entry is the oldest queued.
func (o *Outbox) head() (Class, bool) {
	best, found := Class(0), false
	for c := range numClasses {
		if q := o.queues[c]; len(q) > 0 && (!found || q[0].seq < o.queues[best][0].seq) {
			best, found = c, true
		}
	}
	return best, found
}

// find locates seq by binary search in each class's queue.
func (o *Outbox) find(seq uint64) (c Class, i int, found bool) {
	for c := range numClasses {
		q := o.queues[c]
		lo, hi := 0, len(q)
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if q[mid].seq < seq {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		if lo < len(q) && q[lo].seq == seq {
			return c, lo, true
		}
	}
	return 0, 0, false
}

// lowestClass is the lowest class with a queued message; called only when
// one is queued.
func (o *Outbox) lowestClass() Class {
	for c := range numClasses {
		if len(o.queues[c]) > 0 {
			return c
		}
	}
	return numClasses - 1
}
