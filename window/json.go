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
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
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
