package daemon

import (
	"errors"
	"io/fs"
	"net/http"
	"path"
)

// evidenceTypes are the media types of the evidence files.
var evidenceTypes = map[string]string{".mp4": "video/mp4", ".ivf": "video/x-ivf", ".png": "image/png"}

// evidenceHandler serves GET /evidence/{camera}/{file}: an alert's
// evidence file (the name its alert and evidence messages give), with
// range requests, so that a browser seeks in a clip.
func (d *Daemon) evidenceHandler(w http.ResponseWriter, r *http.Request) {
	k := d.evidenceKeeper()
	if k == nil {
		httpError(w, http.StatusServiceUnavailable, "physd is not running")
		return
	}
	name := r.PathValue("camera") + "/" + r.PathValue("file")
	f, err := k.store.Open(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		httpError(w, http.StatusNotFound, "no evidence file %q (removed by alerts.evidence.max_age or max_mb, or never written)", name)
		return
	case err != nil:
		httpError(w, http.StatusBadRequest, "evidence file %q: %v", name, err)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.IsDir() {
		httpError(w, http.StatusNotFound, "no evidence file %q", name)
		return
	}
	if t, ok := evidenceTypes[path.Ext(name)]; ok {
		w.Header().Set("Content-Type", t)
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, path.Base(name), info.ModTime(), f)
}
