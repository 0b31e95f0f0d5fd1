package outbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"math"
	"slices"
)

// A record is one message as it is stored in its own file. All integers
// are little-endian:
//
//	offset  size  field
//	     0     4  magic "PHOB"
//	     4     1  version (1)
//	     5     1  class
//	     6     2  reserved, zero
//	     8     8  seq
//	    16     4  subject length S
//	    20     4  msgID length I
//	    24     4  header block length H
//	    28     4  data length D
//	    32     S  subject
//	           I  msgID
//	           H  header block
//	           D  data
//	   end     4  CRC-32C (Castagnoli) of every byte before it
//
// The header block is a key count, then for each key in increasing byte
// order: key length, key, value count, and each value's length and bytes
// (all counts and lengths uint32). The file length must equal 36+S+I+H+D
// exactly, so a truncation anywhere is reported as such; the checksum
// covers the fixed part too, so a flipped bit in a length or the class is
// caught like one in the payload. The encoding is canonical (sorted keys,
// zero reserved bytes), so an accepted record re-encodes to the same
// bytes, which the fuzz test checks.
const (
	recordMagic   = "PHOB"
	recordVersion = 1
	fixedLen      = 32
	crcLen        = 4
	minRecordLen  = fixedLen + crcLen
)

// castagnoli is a read-only table; crc32.MakeTable caches it, so this is
// not mutable state.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is wrapped by every error about a record that cannot be
// trusted: torn, truncated, flipped or not a record at all.
var ErrCorrupt = errors.New("corrupt record")

// corrupt names the field of a record that is wrong, and wraps ErrCorrupt.
func corrupt(field, format string, args ...any) error {
	return fmt.Errorf("field %s: %s: %w", field, fmt.Sprintf(format, args...), ErrCorrupt)
}

// encodeRecord encodes a validated message, Seq included.
func encodeRecord(m *Message) ([]byte, error) {
	keys := slices.Sorted(maps.Keys(m.Header))
	hlen := 4
	for _, k := range keys {
		hlen += 4 + len(k) + 4
		for _, v := range m.Header[k] {
			hlen += 4 + len(v)
		}
	}
	for _, n := range []int{len(m.Subject), len(m.MsgID), hlen, len(m.Data)} {
		if uint64(n) > math.MaxUint32 {
			return nil, fmt.Errorf("record: a field of %d bytes does not fit a uint32 length", n)
		}
	}
	if len(keys) == 0 {
		// No header block at all, rather than a zero count, keeps the
		// common record four bytes shorter.
		hlen = 0
	}
	b := make([]byte, 0, fixedLen+len(m.Subject)+len(m.MsgID)+hlen+len(m.Data)+crcLen)
	b = append(b, recordMagic...)
	b = append(b, recordVersion, byte(m.Class), 0, 0)
	b = binary.LittleEndian.AppendUint64(b, m.Seq)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Subject)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.MsgID)))
	b = binary.LittleEndian.AppendUint32(b, uint32(hlen))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Data)))
	b = append(b, m.Subject...)
	b = append(b, m.MsgID...)
	if len(keys) > 0 {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(keys)))
		for _, k := range keys {
			b = appendString(b, k)
			vs := m.Header[k]
			b = binary.LittleEndian.AppendUint32(b, uint32(len(vs)))
			for _, v := range vs {
				b = appendString(b, v)
			}
		}
	}
	b = append(b, m.Data...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// appendString appends a uint32 length and the bytes of s.
func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// decodeRecord parses and verifies a record. It never panics: every
// length is checked against the bytes that are there before it is used.
// An accepted record also passes validate, so it can be published.
func decodeRecord(b []byte) (Message, error) {
	var m Message
	if len(b) < minRecordLen {
		return m, corrupt("length", "%d bytes, shorter than the %d-byte minimum", len(b), minRecordLen)
	}
	if string(b[0:4]) != recordMagic {
		return m, corrupt("magic", "%q, want %q", b[0:4], recordMagic)
	}
	if b[4] != recordVersion {
		return m, corrupt("version", "%d, want %d", b[4], recordVersion)
	}
	// Lengths before the checksum: a torn file is then reported as
	// truncated, which is what happened, rather than as a bad checksum.
	le := binary.LittleEndian
	slen, ilen, hlen, dlen := le.Uint32(b[16:]), le.Uint32(b[20:]), le.Uint32(b[24:]), le.Uint32(b[28:])
	// Four uint32s and a constant cannot overflow a uint64.
	want := uint64(minRecordLen) + uint64(slen) + uint64(ilen) + uint64(hlen) + uint64(dlen)
	if want != uint64(len(b)) {
		return m, corrupt("length", "header declares %d bytes, record has %d", want, len(b))
	}
	body := b[:len(b)-crcLen]
	if got, sum := crc32.Checksum(body, castagnoli), le.Uint32(b[len(b)-crcLen:]); got != sum {
		return m, corrupt("checksum", "CRC-32C %08x, stored %08x", got, sum)
	}
	if b[6] != 0 || b[7] != 0 {
		return m, corrupt("reserved", "%02x%02x, want 0000", b[6], b[7])
	}
	m.Class = Class(b[5])
	m.Seq = le.Uint64(b[8:])
	if m.Seq == 0 || m.Seq > maxSeq {
		return m, corrupt("Seq", "%d out of range 1..%d", m.Seq, uint64(maxSeq))
	}
	rest := body[fixedLen:]
	m.Subject, rest = string(rest[:slen]), rest[slen:]
	m.MsgID, rest = string(rest[:ilen]), rest[ilen:]
	hdr, data := rest[:hlen], rest[hlen:]
	if len(data) > 0 {
		m.Data = slices.Clone(data)
	}
	var err error
	if m.Header, err = decodeHeader(hdr); err != nil {
		return Message{}, err
	}
	if err := validate(&m); err != nil {
		return Message{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return m, nil
}

// decodeHeader parses a header block; an empty block is no header.
func decodeHeader(b []byte) (map[string][]string, error) {
	if len(b) == 0 {
		return nil, nil
	}
	r := reader{b: b}
	n, ok := r.uint32()
	if !ok {
		return nil, corrupt("Header", "truncated key count")
	}
	if n == 0 {
		// The encoder writes no block for no header; a zero count would
		// not re-encode to the same bytes.
		return nil, corrupt("Header", "block with zero keys")
	}
	// Every key takes at least 8 bytes, so n is checked against the
	// block's size before it sizes anything.
	if uint64(n) > uint64(len(b))/8 {
		return nil, corrupt("Header", "%d keys cannot fit in %d bytes", n, len(b))
	}
	h := make(map[string][]string, n)
	prev := ""
	for i := range n {
		k, ok := r.string()
		if !ok {
			return nil, corrupt("Header", "key %d truncated", i)
		}
		if i > 0 && k <= prev {
			return nil, corrupt("Header", "key %q not after %q", k, prev)
		}
		prev = k
		nv, ok := r.uint32()
		if !ok {
			return nil, corrupt("Header", "value count of %q truncated", k)
		}
		if uint64(nv) > uint64(len(r.b))/4 {
			return nil, corrupt("Header", "%d values of %q cannot fit in %d bytes", nv, k, len(r.b))
		}
		vs := make([]string, 0, nv)
		for j := range nv {
			v, ok := r.string()
			if !ok {
				return nil, corrupt("Header", "value %d of %q truncated", j, k)
			}
			vs = append(vs, v)
		}
		h[k] = vs
	}
	if len(r.b) != 0 {
		return nil, corrupt("Header", "%d bytes after the last key", len(r.b))
	}
	return h, nil
}

// reader consumes length-prefixed fields from a byte slice, reporting
// rather than panicking when there are too few bytes.
type reader struct{ b []byte }

func (r *reader) uint32() (uint32, bool) {
	if len(r.b) < 4 {
		return 0, false
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v, true
}

func (r *reader) string() (string, bool) {
	n, ok := r.uint32()
	if !ok || uint64(n) > uint64(len(r.b)) {
		return "", false
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s, true
}
