package config

import (
	"reflect"
	"slices"
)

// Effective is everything that decides how one camera is processed: the
// camera's own settings and the global sections that apply to it, with the
// camera's overrides applied. Two cameras with equal Effective settings are
// processed identically.
type Effective struct {
	// Camera is the camera's entry with its window overrides resolved:
	// Camera.Window holds the effective length and hop. Its Ambient is
	// the zero value unless the camera is in ambient mode (the others do
	// not use it). Its Zones are the entry's; Diff leaves them out (see
	// ZoneDiff). Its Scale is zero:
	// the scale does not change how the camera is processed, only the
	// units its amplitudes are also reported in, and a reload applies it
	// to the running camera (LineScale).
	Camera Camera
	// Window is Camera.EffectiveWindow(Config.Windows).
	Window Windows
	// Events is Config.Events for a camera in events mode, the zero value
	// otherwise (single-mode cameras do not use it).
	Events Events
	// Estimator, Certify and Alerts are the global sections (for a zone,
	// ZoneDiff passes its ZoneConfig: the global sections with the zone's
	// overrides).
	Estimator Estimator
	Certify   Certify
	Alerts    Alerts
}

// Effective returns the effective settings of cam under c.
func (c *Config) Effective(cam Camera) Effective {
	e := Effective{
		Camera:    cam,
		Window:    cam.EffectiveWindow(c.Windows),
		Estimator: c.Estimator,
		Certify:   c.Certify,
		Alerts:    c.Alerts,
	}
	e.Camera.Window = WindowOverride{Length: e.Window.Length, Hop: e.Window.Hop}
	e.Camera.Scale = Scale{}
	if cam.Mode == ModeEvents {
		e.Events = c.Events
	}
	if cam.Mode != ModeAmbient {
		e.Camera.Ambient = Ambient{}
	}
	return e
}

// perCameraSections are the top-level keys whose settings reach the cameras
// through Effective; a change to them shows in Diff, not in GlobalChanged.
func perCameraSections() []string {
	return []string{"cameras", "windows", "events", "estimator", "certify", "alerts"}
}

// Diff compares the cameras of two configurations by name, for a reload:
// added are in new only, removed in old only, and changed are in both with
// different effective settings (see Effective; a change of the global
// windows, events, estimator, certify or alerts sections changes every
// camera it applies to, and a secret counts as changed when its resolved
// value does). Cameras in none of the lists can keep running undisturbed,
// but for their zones: ZonesChanged lists those whose zones changed.
//
// Zones are left out of the comparison, except that a camera that gains
// its first zone or loses its last is changed (it switches between one
// pipeline and one per zone). A camera with zones in both old and new runs
// nothing of its own but its stream: it is changed when its own entry
// (Zones aside) is, and a change of the global sections reaches only its
// zones, through ZoneDiff.
//
// Scales are left out too, the cameras' and the zones': a reload applies
// them to the running lines (LineScale) without a restart.
//
// added and changed follow new's order, removed follows old's. A nil
// Config has no cameras.
func Diff(old, new *Config) (added, removed, changed []string) {
	oldCams := map[string]Camera{}
	if old != nil {
		for _, cam := range old.Cameras {
			oldCams[cam.Name] = cam
		}
	}
	newNames := map[string]bool{}
	if new != nil {
		for _, cam := range new.Cameras {
			newNames[cam.Name] = true
			prev, ok := oldCams[cam.Name]
			switch {
			case !ok:
				added = append(added, cam.Name)
			case cameraChanged(old, new, prev, cam):
				changed = append(changed, cam.Name)
			}
		}
	}
	if old != nil {
		for _, cam := range old.Cameras {
			if !newNames[cam.Name] {
				removed = append(removed, cam.Name)
			}
		}
	}
	return added, removed, changed
}

// cameraChanged reports whether Diff lists a camera present in both old
// (as o) and new (as n) as changed.
func cameraChanged(old, new *Config, o, n Camera) bool {
	zonedOld, zonedNew := len(o.Zones) > 0, len(n.Zones) > 0
	if zonedOld != zonedNew {
		return true
	}
	o.Zones, n.Zones = nil, nil
	o.Scale, n.Scale = Scale{}, Scale{}
	if zonedNew {
		return !equalValues(reflect.ValueOf(o), reflect.ValueOf(n))
	}
	return !equalValues(reflect.ValueOf(old.Effective(o)), reflect.ValueOf(new.Effective(n)))
}

// ZoneDiff compares the zones of the camera with the given name in two
// configurations by zone name, for a reload: added are in new only, removed
// in old only, and changed are in both with different effective settings:
// Effective of the zone's ZoneCamera under its ZoneConfig (so a change of
// the zone's own overrides changes that zone, and a change of the
// camera's own settings or of the global windows, events, estimator,
// certify or alerts sections changes every zone it reaches, unless the
// zone overrides what changed). A camera missing from a
// configuration (or a nil Config) has no zones there. added and changed
// follow new's order, removed follows old's.
func ZoneDiff(old, new *Config, camera string) (added, removed, changed []string) {
	var oldCam, newCam Camera
	if old != nil {
		oldCam, _ = old.Camera(camera)
	}
	if new != nil {
		newCam, _ = new.Camera(camera)
	}
	oldZones := map[string]Effective{}
	for _, z := range oldCam.Zones {
		oldZones[z.Name] = old.ZoneConfig(z).Effective(oldCam.ZoneCamera(z))
	}
	newNames := map[string]bool{}
	for _, z := range newCam.Zones {
		newNames[z.Name] = true
		prev, ok := oldZones[z.Name]
		switch {
		case !ok:
			added = append(added, z.Name)
		case !equalValues(reflect.ValueOf(prev), reflect.ValueOf(new.ZoneConfig(z).Effective(newCam.ZoneCamera(z)))):
			changed = append(changed, z.Name)
		}
	}
	for _, z := range oldCam.Zones {
		if !newNames[z.Name] {
			removed = append(removed, z.Name)
		}
	}
	return added, removed, changed
}

// LineScale returns the scale of a line of c — a camera's (zone "") or
// one of its zones' — as its reports use it: the zone's own scale unless
// it is zero, else the camera's (Camera.ZoneCamera). ok is false when c
// has no such camera or zone.
func (c *Config) LineScale(camera, zone string) (s Scale, ok bool) {
	cam, ok := c.Camera(camera)
	if !ok {
		return Scale{}, false
	}
	if zone == "" {
		return cam.Scale, true
	}
	z, ok := cam.Zone(zone)
	if !ok {
		return Scale{}, false
	}
	return cam.ZoneCamera(z).Scale, true
}

// ZonesChanged returns the cameras, in new's order, that are in both old
// and new and not in Diff's changed list but whose zones differ (ZoneDiff
// is not empty): their stream keeps running while the zones ZoneDiff
// names are started, stopped or restarted. A nil Config has no cameras.
func ZonesChanged(old, new *Config) []string {
	if old == nil || new == nil {
		return nil
	}
	_, _, changed := Diff(old, new)
	var names []string
	for _, cam := range new.Cameras {
		if _, ok := old.Camera(cam.Name); !ok || slices.Contains(changed, cam.Name) {
			continue
		}
		if a, r, c := ZoneDiff(old, new, cam.Name); a != nil || r != nil || c != nil {
			names = append(names, cam.Name)
		}
	}
	return names
}

// GlobalChanged returns the top-level keys, in the order of Config's fields
// ("state_dir", "log", "http", "nats", and any section added later), of the
// sections that differ between old and new and are not applied per camera:
// a camera reload does not apply them, and the daemon logs that they need a
// restart. Sections applied per camera (windows, events, estimator,
// certify, alerts) show up in Diff's changed list instead. A nil Config
// compares as Default().
func GlobalChanged(old, new *Config) []string {
	if old == nil {
		old = Default()
	}
	if new == nil {
		new = Default()
	}
	var names []string
	a, b := reflect.ValueOf(old).Elem(), reflect.ValueOf(new).Elem()
	t := a.Type()
	for i := range t.NumField() {
		key := yamlKey(t.Field(i))
		if slices.Contains(perCameraSections(), key) {
			continue
		}
		if !equalValues(a.Field(i), b.Field(i)) {
			names = append(names, key)
		}
	}
	return names
}

// Reloadable returns the configuration a reload applies: next, with the
// sections that need a restart (those GlobalChanged compares) kept as they
// are in old. A nil old keeps Default()'s.
func Reloadable(old, next *Config) *Config {
	if old == nil {
		old = Default()
	}
	merged := *next
	m, o := reflect.ValueOf(&merged).Elem(), reflect.ValueOf(old).Elem()
	t := m.Type()
	for i := range t.NumField() {
		if !slices.Contains(perCameraSections(), yamlKey(t.Field(i))) {
			m.Field(i).Set(o.Field(i))
		}
	}
	return &merged
}

// equalValues is a deep equality on the types of this package that treats
// a nil slice and an empty one as equal and compares unexported fields
// (those of Secret) too.
func equalValues(a, b reflect.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if !equalValues(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalValues(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalValues(a.Elem(), b.Elem())
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() || !equalValues(a.MapIndex(k), bv) {
				return false
			}
		}
		return true
	}
	return false
}
