// Package evidence keeps what a structural-health alert is judged by: the
// video around it, copied from the camera's own compressed packets, and
// files an engineer can check against the alert message.
//
// A Ring holds a camera's recent access units (stream.AccessUnit) — the
// last Hold of them, from a key picture on, within a byte cap. When an
// alert is raised, a Clip is cut from it covering [t−Pre, t+Post] once
// the stream has run Post past t, and written without re-encoding:
// H.264 and H.265 as an MP4 whose edit list starts the presentation at
// t−Pre (the pictures before it, back to the key picture they decode
// from, are kept but not shown), VP8 as IVF from the key picture. A Store
// writes the files under a directory, names them with their SHA-256, and
// enforces the retention (age, total size).
package evidence
