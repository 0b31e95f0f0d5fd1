package window

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
)

// MarshalJSON writes the verdict with every non-finite number (an empty
// coverage interval's NaN bounds, an infinite residual) as null, which
// encoding/json would otherwise refuse.
func (v Verdict) MarshalJSON() ([]byte, error) {
	type plain Verdict // no MarshalJSON: no recursion
	return json.Marshal(finite(reflect.ValueOf(plain(v))))
}

// finite converts v to maps, slices and scalars, with NaN and ±Inf as nil.
func finite(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		return f
	case reflect.Struct:
		out := map[string]any{}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, ok := jsonName(f)
			if !ok {
				continue
			}
			fv := v.Field(i)
			if strings.Contains(opts, "omitempty") && fv.IsZero() {
				continue
			}
			out[name] = finite(fv)
		}
		return out
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = finite(v.Index(i))
		}
		return out
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return finite(v.Elem())
	}
	return v.Interface()
}

// UnmarshalJSON reads what MarshalJSON writes: a null where a float is
// expected becomes NaN (MarshalJSON's non-finite numbers), not the 0
// that encoding/json would leave, so that a consumer cannot mistake a
// missing coverage bound or residual for a measured zero.
func (v *Verdict) UnmarshalJSON(data []byte) error {
	type plain Verdict // no UnmarshalJSON: no recursion
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	restoreNaN(reflect.ValueOf(&p).Elem(), raw)
	*v = Verdict(p)
	return nil
}

// restoreNaN sets to NaN every float in v whose JSON value in raw (as
// decoded into any) is an explicit null.
func restoreNaN(v reflect.Value, raw any) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if raw == nil {
			v.SetFloat(math.NaN())
		}
	case reflect.Struct:
		m, ok := raw.(map[string]any)
		if !ok {
			return
		}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, ok := jsonName(f)
			if !ok {
				continue
			}
			if r, present := m[name]; present {
				restoreNaN(v.Field(i), r)
			}
		}
	case reflect.Slice, reflect.Array:
		a, ok := raw.([]any)
		if !ok {
			return
		}
		for i := range min(v.Len(), len(a)) {
			restoreNaN(v.Index(i), a[i])
		}
	case reflect.Pointer:
		if !v.IsNil() {
			restoreNaN(v.Elem(), raw)
		}
	}
}

// jsonName is the key encoding/json uses for an exported field, and the
// options of its tag; ok is false for a field tagged "-".
func jsonName(f reflect.StructField) (name, opts string, ok bool) {
	name, opts, _ = strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return "", "", false
	}
	if name == "" {
		name = f.Name
	}
	return name, opts, true
}
