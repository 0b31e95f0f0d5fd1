package daemon

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/physd/physd/stream"
)

// whip returns the camera's WHIP source, if it is a whip camera.
func (c *line) whip() (*stream.WHIPSource, bool) {
	s, ok := c.src.(*stream.WHIPSource)
	return s, ok
}

// whipOr404 returns the camera's WHIP source, or writes 404 saying the
// camera takes no publishers.
func (c *line) whipOr404(w http.ResponseWriter) *stream.WHIPSource {
	src, ok := c.whip()
	if !ok {
		httpError(w, http.StatusNotFound, "camera %q does not take WHIP publishers (its source is %s)", c.cfg.Name, c.cfg.Source.Kind)
	}
	return src
}

// whipCamera checks a WHIP request's token, then resolves its camera (see
// cameraRoute: the camera's source.token or http.token; without either
// an unknown camera answers as a known one does, 401); it writes the
// error response and returns nil when the request must stop.
func (d *Daemon) whipCamera(w http.ResponseWriter, r *http.Request) (*line, *stream.WHIPSource) {
	c, ok := d.admit(r)
	if !ok {
		d.log.Warn("whip request refused: bad token", "camera", r.PathValue("camera"), "remote", r.RemoteAddr, "method", r.Method)
		unauthorized(w, r)
		return nil, nil
	}
	if c == nil {
		httpError(w, http.StatusNotFound, "no camera %q", r.PathValue("camera"))
		return nil, nil
	}
	src := c.whipOr404(w)
	if src == nil {
		return nil, nil
	}
	return c, src
}

// readBody reads a request body of the given media type, at most maxBody
// bytes; it writes 415, 413 or 400 and returns false otherwise.
func readBody(w http.ResponseWriter, r *http.Request, want string) ([]byte, bool) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != want {
		httpError(w, http.StatusUnsupportedMediaType, "Content-Type is %q, want %s", r.Header.Get("Content-Type"), want)
		return nil, false
	}
	if r.ContentLength > maxBody {
		bodyTooLarge(w)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		bodyTooLarge(w)
		return nil, false
	case err != nil:
		httpError(w, http.StatusBadRequest, "reading the body: %v", err)
		return nil, false
	case len(body) == 0:
		httpError(w, http.StatusBadRequest, "empty body: send the %s", want)
		return nil, false
	}
	return body, true
}

// whipError maps a WHIP source's error to a status and a message.
func whipError(w http.ResponseWriter, c *line, err error) {
	switch {
	case errors.Is(err, stream.ErrBadOffer):
		httpError(w, http.StatusBadRequest, "%v", err)
	case errors.Is(err, stream.ErrNoVideo), errors.Is(err, stream.ErrUnsupportedCodec):
		httpError(w, http.StatusUnprocessableEntity, "%v", err)
	case errors.Is(err, stream.ErrBusy):
		httpError(w, http.StatusConflict, "camera %q already has a publisher and is exclusive; stop it first (DELETE its session)", c.cfg.Name)
	case errors.Is(err, stream.ErrNoSession):
		httpError(w, http.StatusNotFound, "no such session on camera %q (ended, replaced or never existed)", c.cfg.Name)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		httpError(w, http.StatusServiceUnavailable, "negotiation timed out; try again")
	default:
		c.log.Error("whip", "err", err)
		httpError(w, http.StatusInternalServerError, "internal error; see physd's log")
	}
}

// whipPost negotiates a publisher's session (RFC 9725 §4.2).
func (d *Daemon) whipPost(w http.ResponseWriter, r *http.Request) {
	c, src := d.whipCamera(w, r)
	if c == nil {
		return
	}
	offer, ok := readBody(w, r, "application/sdp")
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	answer, id, etag, err := src.Publish(ctx, string(offer))
	if err != nil {
		c.log.Info("whip offer refused", "remote", r.RemoteAddr, "err", err)
		whipError(w, c, err)
		return
	}
	c.log.Info("whip publisher connected", "remote", r.RemoteAddr, "session", id)
	w.Header().Set("Content-Type", "application/sdp")
	w.Header().Set("Location", "/whip/"+c.cfg.Name+"/"+id)
	w.Header().Set("ETag", etag)
	w.Header().Set("Accept-Patch", "application/trickle-ice-sdpfrag")
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, answer)
}

// whipPatch adds trickled ICE candidates (RFC 9725 §4.3.1).
func (d *Daemon) whipPatch(w http.ResponseWriter, r *http.Request) {
	c, src := d.whipCamera(w, r)
	if c == nil {
		return
	}
	id := r.PathValue("session")
	etag, err := src.ETag(id)
	if err != nil {
		whipError(w, c, err)
		return
	}
	if m := r.Header.Get("If-Match"); m != "" && m != "*" && m != etag {
		httpError(w, http.StatusPreconditionFailed, "If-Match %s does not match the session's ICE session %s", m, etag)
		return
	}
	frag, ok := readBody(w, r, "application/trickle-ice-sdpfrag")
	if !ok {
		return
	}
	if err := src.Trickle(id, string(frag)); err != nil {
		whipError(w, c, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// whipDelete ends a session (RFC 9725 §4.2).
func (d *Daemon) whipDelete(w http.ResponseWriter, r *http.Request) {
	c, src := d.whipCamera(w, r)
	if c == nil {
		return
	}
	if err := src.End(r.PathValue("session")); err != nil {
		whipError(w, c, err)
		return
	}
	c.log.Info("whip publisher left", "remote", r.RemoteAddr)
	w.WriteHeader(http.StatusOK)
}

// whipOptions answers CORS preflight and advertises what POST takes.
func (d *Daemon) whipOptions(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Accept-Post", "application/sdp")
	h.Set("Access-Control-Allow-Methods", "POST, PATCH, DELETE, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, If-Match")
	w.WriteHeader(http.StatusNoContent)
}
