package outbox

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// File names. A record is <seq>.msg with the sequence number zero-padded
// to the 20 digits of the largest uint64, so that the directory's lexical
// order (which os.ReadDir returns) is publication order.
const (
	recordExt   = ".msg"
	tempExt     = ".tmp"
	setAsideTag = ".corrupt-"
	seqDigits   = 20
	// maxSeq keeps seq+1 from wrapping around; at a message a
	// microsecond it is reached in 292,000 years.
	maxSeq = math.MaxInt64
)

// recordName is the file name of the record with sequence number seq.
func recordName(seq uint64) string { return fmt.Sprintf("%0*d%s", seqDigits, seq, recordExt) }

// parseRecordName returns the sequence number in a record's file name.
// Only the exact form recordName writes is accepted, so that two names
// can never mean the same record.
func parseRecordName(name string) (uint64, error) {
	digits, ok := strings.CutSuffix(name, recordExt)
	if !ok || len(digits) != seqDigits || strings.Trim(digits, "0123456789") != "" {
		return 0, fmt.Errorf("file name %q is not %d digits and %s", name, seqDigits, recordExt)
	}
	seq, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("file name %q: %w", name, err)
	}
	if seq == 0 || seq > maxSeq {
		return 0, fmt.Errorf("file name %q: sequence number out of range 1..%d", name, uint64(maxSeq))
	}
	return seq, nil
}

// writeAtomic makes data the content of dir/name so that after a crash
// the file either does not exist or is complete: write a temporary file,
// fsync it, rename it into place, fsync the directory so the rename
// itself is durable. On error the final name does not hold data.
func writeAtomic(dir, name string, data []byte) (err error) {
	// The temporary name ends in tempExt, so Open removes one left by a
	// crash before the rename.
	f, err := os.CreateTemp(dir, name+".*"+tempExt)
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", name, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()      // already closed on most paths; the error is moot
			os.Remove(tmp) // gone after a successful rename; best effort otherwise
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	final := filepath.Join(dir, name)
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("rename %s to %s: %w", tmp, name, err)
	}
	if err := syncDir(dir); err != nil {
		// The rename may or may not survive a crash; undo it so that the
		// caller's view (not stored) is the truth at least until then.
		os.Remove(final)
		return err
	}
	return nil
}

// syncDir fsyncs a directory, making renames and removals in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory %s for fsync: %w", dir, err)
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, serr)
	}
	if cerr != nil {
		return fmt.Errorf("close directory %s: %w", dir, cerr)
	}
	return nil
}

// readRecordFile reads a record file of at most limit bytes. A larger
// file is refused before it is read, so a stray huge file in the
// directory cannot exhaust memory.
func readRecordFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", path, errNotRegular)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes: %w", path, fi.Size(), errTooBigOnDisk)
	}
	// Read through a limit too, in case the file grew after the stat.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: more than %d bytes: %w", path, limit, errTooBigOnDisk)
	}
	return b, nil
}

// Reasons a record file is set aside without being decoded.
var (
	errNotRegular   = errors.New("not a regular file")
	errTooBigOnDisk = errors.New("larger than MaxBytes")
)

// setAsideName is where a bad record file is moved: next to it, so that
// it is still there for a post-mortem, under a name Open ignores.
func setAsideName(name string, now time.Time) string {
	return name + setAsideTag + strconv.FormatInt(now.UnixNano(), 10)
}
