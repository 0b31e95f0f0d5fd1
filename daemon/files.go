package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// writeAtomic replaces path with the bytes write produces: written to a
// temporary file in the same directory, synced, renamed over path, and
// the directory synced, so a crash leaves the old file or the new one,
// never a torn one.
func writeAtomic(path string, write func(*os.File) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// removeTemps removes the temporary files writeAtomic leaves in dir when
// the process dies mid-write (the file they were to replace is intact) and
// returns their names.
func removeTemps(dir string) []string {
	names, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	var removed []string
	for _, n := range names {
		if os.Remove(n) == nil {
			removed = append(removed, filepath.Base(n))
		}
	}
	return removed
}

// setAside renames a file that could not be used to path.corrupt-<time>,
// keeping it for inspection, and returns the new name.
func setAside(path string) (string, error) {
	to := fmt.Sprintf("%s.corrupt-%s", path, time.Now().UTC().Format("20060102T150405Z"))
	if err := os.Rename(path, to); err != nil {
		return "", err
	}
	return to, nil
}
