package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Store is a directory of evidence files, one subdirectory per camera,
// with a retention: files older than MaxAge go, and the oldest go while
// the files hold more than MaxBytes. It is safe for concurrent use by
// distinct names; Prune may run beside Save.
type Store struct {
	// Dir holds the files (created when missing).
	Dir string
	// MaxAge (0: none) and MaxBytes (0: none) are the retention.
	MaxAge   time.Duration
	MaxBytes int64
}

// File is one evidence file as an alert names it.
type File struct {
	// Name is its path under Dir, with slashes: <camera>/<file>.
	Name   string
	SHA256 string
	Bytes  int64
	// Mod is when it was written.
	Mod time.Time
}

// Save writes a file named name (<camera>/<file>, no other separators,
// no "..") through write: to a temporary file first, synced, then renamed
// into place, so a file under its name is always whole. It returns the
// file's size and SHA-256.
func (s Store) Save(name string, write func(io.Writer) error) (File, error) {
	path, err := s.path(name)
	if err != nil {
		return File{}, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return File{}, fmt.Errorf("evidence: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return File{}, fmt.Errorf("evidence: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename: no such file
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(tmp, h)}
	err = write(cw)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return File{}, fmt.Errorf("evidence: %s: %w", name, err)
	}
	return File{Name: name, SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: cw.n, Mod: time.Now()}, nil
}

// path checks a file's name and returns its path under Dir.
func (s Store) path(name string) (string, error) {
	parts := strings.Split(name, "/")
	if len(parts) != 2 || !validPart(parts[0]) || !validPart(parts[1]) {
		return "", fmt.Errorf("evidence: file name %q: want <camera>/<file>", name)
	}
	return filepath.Join(s.Dir, parts[0], parts[1]), nil
}

func validPart(p string) bool {
	return p != "" && p != "." && p != ".." && !strings.HasPrefix(p, ".") && !strings.ContainsAny(p, `/\`+"\x00")
}

// Open opens a stored file by its name (for the dashboard to serve).
func (s Store) Open(name string) (*os.File, error) {
	path, err := s.path(name)
	if err != nil {
		return nil, err
	}
	return os.Open(path)
}

// List returns the stored files, oldest first (their sizes and times;
// SHA256 is left empty: the alert carries it).
func (s Store) List() ([]File, error) {
	var files []File
	err := filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		rel, err := filepath.Rel(s.Dir, path)
		if err != nil || strings.Count(filepath.ToSlash(rel), "/") != 1 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		files = append(files, File{Name: filepath.ToSlash(rel), Bytes: info.Size(), Mod: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("evidence: %w", err)
	}
	slices.SortFunc(files, func(a, b File) int { return a.Mod.Compare(b.Mod) })
	return files, nil
}

// Prune enforces the retention at now: it removes files older than
// MaxAge, then the oldest while the rest hold more than MaxBytes, and
// returns the names removed.
func (s Store) Prune(now time.Time) ([]string, error) {
	files, err := s.List()
	if err != nil {
		return nil, err
	}
	var total int64
	for _, f := range files {
		total += f.Bytes
	}
	var removed []string
	for _, f := range files {
		old := s.MaxAge > 0 && now.Sub(f.Mod) > s.MaxAge
		big := s.MaxBytes > 0 && total > s.MaxBytes
		if !old && !big {
			continue
		}
		path, _ := s.path(f.Name)
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("evidence: %w", err)
		}
		total -= f.Bytes
		removed = append(removed, f.Name)
	}
	return removed, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
