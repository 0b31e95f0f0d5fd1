package config

import (
	"errors"
	"fmt"
	"math"
)

// Scale says how the source's pixels map to millimetres on the watched
// structure, so that the displacement amplitude physd measures in pixels
// is also reported in millimetres. It is given one of two ways:
//
//   - Points and DistanceMM: two points of the picture, in source pixels
//     (the whole frame's, not the region's), that lie DistanceMM apart
//     on the structure (two bolts, the ends of a ruler in view);
//     millimetres per pixel = DistanceMM / |p1 − p2|.
//   - DistanceM, FocalMM and PixelUM: the pinhole camera's distance to
//     the structure, its lens's focal length and its sensor's pixel
//     pitch; millimetres per pixel = distance (mm) × pitch (mm) / focal
//     length (mm). The pitch is the source's pixel's: a sensor binned or
//     scaled down to the stream's resolution has a larger one.
//
// Either way assumes the motion lies in a plane facing the camera at that
// distance. The zero Scale is no scale: amplitudes are reported in pixels
// only.
type Scale struct {
	// Points are two points [[x1, y1], [x2, y2]] in source pixels, a
	// known distance apart; empty for the pinhole way.
	Points [][]float64 `yaml:"points"`
	// DistanceMM is the distance between Points on the structure, in
	// millimetres.
	DistanceMM float64 `yaml:"distance_mm"`
	// DistanceM is the distance from the camera to the structure, in
	// metres (pinhole way).
	DistanceM float64 `yaml:"distance_m"`
	// FocalMM is the lens's focal length in millimetres (pinhole way).
	FocalMM float64 `yaml:"focal_mm"`
	// PixelUM is the pitch of one source pixel on the sensor, in
	// micrometres (pinhole way).
	PixelUM float64 `yaml:"pixel_um"`
}

// IsZero reports whether s is the zero Scale (no scale).
func (s Scale) IsZero() bool {
	return len(s.Points) == 0 && s.DistanceMM == 0 && s.DistanceM == 0 && s.FocalMM == 0 && s.PixelUM == 0
}

// byPoints reports whether s is given by two points (a field of that way
// is set).
func (s Scale) byPoints() bool { return len(s.Points) > 0 || s.DistanceMM != 0 }

// byPinhole reports whether s is given by the pinhole camera (a field of
// that way is set).
func (s Scale) byPinhole() bool { return s.DistanceM != 0 || s.FocalMM != 0 || s.PixelUM != 0 }

// MMPerPx returns the millimetres on the structure that one source pixel
// spans, 0 for the zero Scale. It is meaningful only for a Scale that
// Check accepts (Parse checks the configuration's).
func (s Scale) MMPerPx() float64 {
	switch {
	case s.IsZero():
		return 0
	case len(s.Points) == 2 && len(s.Points[0]) == 2 && len(s.Points[1]) == 2:
		return s.DistanceMM / math.Hypot(s.Points[1][0]-s.Points[0][0], s.Points[1][1]-s.Points[0][1])
	case s.byPinhole():
		// distance_m·1000 mm × pixel_um/1000 mm / focal_mm
		return s.DistanceM * s.PixelUM / s.FocalMM
	}
	return 0
}

// ScaleError is one problem of a Scale: the field it is about, as its
// YAML key (a point of Points as "points[1]"), and what is wrong.
type ScaleError struct {
	// Field is the key: points, points[i], distance_mm, distance_m,
	// focal_mm or pixel_um.
	Field string
	// Msg says what is wrong and what is wanted.
	Msg string
}

// Error is "Field: Msg".
func (e *ScaleError) Error() string { return e.Field + ": " + e.Msg }

// Check reports every problem of s, each a *ScaleError, joined with
// errors.Join; nil when s is valid or zero. A valid Scale is given exactly
// one way: two distinct points with non-negative, finite coordinates and a
// finite distance_mm > 0; or finite distance_m, focal_mm and pixel_um, all
// > 0. Whether the points lie inside the camera's region is not checked.
func (s Scale) Check() error {
	var errs []error
	for _, e := range s.problems() {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// problems are Check's errors, in the order of the fields.
func (s Scale) problems() []*ScaleError {
	var errs []*ScaleError
	add := func(field, format string, args ...any) {
		errs = append(errs, &ScaleError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	points, pinhole := s.byPoints(), s.byPinhole()
	if points && pinhole {
		add(pinholeFirst(s), "is set, but so is the two-point scale: a scale is given by points and distance_mm or by distance_m, focal_mm and pixel_um, not both; remove one way")
		return errs
	}
	if points {
		s.checkPoints(add)
	}
	if pinhole {
		for _, f := range []struct {
			key, what string
			v         float64
		}{{"distance_m", "the distance from the camera to the structure, in metres", s.DistanceM},
			{"focal_mm", "the lens's focal length, in millimetres", s.FocalMM},
			{"pixel_um", "the sensor's pixel pitch, in micrometres", s.PixelUM}} {
			if !(f.v > 0) || math.IsInf(f.v, 0) {
				add(f.key, "is %v, want %s, > 0 (the pinhole scale needs distance_m, focal_mm and pixel_um)", f.v, f.what)
			}
		}
	}
	return errs
}

// checkPoints checks the two-point way.
func (s Scale) checkPoints(add func(field, format string, args ...any)) {
	if !(s.DistanceMM > 0) || math.IsInf(s.DistanceMM, 0) {
		add("distance_mm", "is %v, want the distance between the two points on the structure, in millimetres, > 0", s.DistanceMM)
	}
	if len(s.Points) != 2 {
		what := "points"
		if len(s.Points) == 1 {
			what = "point"
		}
		add("points", "has %d %s, want two, [[x1, y1], [x2, y2]], in source pixels", len(s.Points), what)
		return
	}
	ok := true
	for i, p := range s.Points {
		field := fmt.Sprintf("points[%d]", i)
		switch {
		case len(p) != 2:
			add(field, "has %d coordinates, want two, [x, y], in source pixels", len(p))
			ok = false
		case math.IsNaN(p[0]) || math.IsInf(p[0], 0) || math.IsNaN(p[1]) || math.IsInf(p[1], 0):
			add(field, "is [%v, %v], want finite coordinates", p[0], p[1])
			ok = false
		case p[0] < 0 || p[1] < 0:
			add(field, "is [%v, %v], want x and y ≥ 0 (source pixels)", p[0], p[1])
			ok = false
		}
	}
	if ok && s.Points[0][0] == s.Points[1][0] && s.Points[0][1] == s.Points[1][1] {
		add("points", "are the same point [%v, %v] twice, want two distinct points a known distance apart", s.Points[0][0], s.Points[0][1])
	}
}

// pinholeFirst is the first pinhole field s sets, where a scale given
// both ways is reported.
func pinholeFirst(s Scale) string {
	switch {
	case s.DistanceM != 0:
		return "distance_m"
	case s.FocalMM != 0:
		return "focal_mm"
	}
	return "pixel_um"
}

// scale checks the scale at p, a camera's or a zone's, which whose names
// in the messages (`camera "bridge"`).
func (v *validator) scale(p, whose string, s Scale) {
	for _, e := range s.problems() {
		v.errorf(p+"."+e.Field, "%s (%s)", e.Msg, whose)
	}
}
