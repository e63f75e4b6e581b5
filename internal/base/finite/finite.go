// Package finite keeps non-finite numbers out of phptune's JSON: encoding/json
// refuses +Inf, -Inf and NaN, and one such figure (a ratio over an empty
// interval, a rate over no time) would otherwise lose a whole result at the
// moment it is written. Clean replaces them with 0 and names where they were.
package finite

import (
	"fmt"
	"math"
	"reflect"
	"sort"
)

// Clean walks v (a pointer to a struct, slice or map of plain data) and
// sets every +Inf, -Inf or NaN float it can reach to 0. It returns the
// paths it changed ("Observation.Derived.CPUSecondsPerRequest[stack]").
func Clean(v any) []string {
	var out []string
	walk(reflect.ValueOf(v), "", &out, 0)
	sort.Strings(out)
	return out
}

func bad(f float64) bool { return math.IsInf(f, 0) || math.IsNaN(f) }

func walk(v reflect.Value, path string, out *[]string, depth int) {
	if depth > 64 || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			e := v.Elem()
			if v.Kind() == reflect.Interface && (e.Kind() == reflect.Float64 || e.Kind() == reflect.Float32) {
				if bad(e.Float()) && v.CanSet() {
					v.Set(reflect.Zero(e.Type()))
					*out = append(*out, path)
				}
				return
			}
			walk(e, path, out, depth+1)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if t.Field(i).IsExported() {
				walk(v.Field(i), join(path, t.Field(i).Name), out, depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out, depth+1)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			p := fmt.Sprintf("%s[%v]", path, k.Interface())
			switch {
			case (e.Kind() == reflect.Float64 || e.Kind() == reflect.Float32) && bad(e.Float()):
				v.SetMapIndex(k, reflect.Zero(e.Type()))
				*out = append(*out, p)
			case e.Kind() == reflect.Interface && !e.IsNil() && (e.Elem().Kind() == reflect.Float64 || e.Elem().Kind() == reflect.Float32):
				if bad(e.Elem().Float()) {
					v.SetMapIndex(k, reflect.Zero(e.Elem().Type()))
					*out = append(*out, p)
				}
			case e.Kind() == reflect.Pointer || e.Kind() == reflect.Map || e.Kind() == reflect.Slice || e.Kind() == reflect.Interface:
				walk(e, p, out, depth+1)
			case e.Kind() == reflect.Struct:
				// A struct held by value in a map is not addressable:
				// clean a copy and put it back.
				c := reflect.New(e.Type()).Elem()
				c.Set(e)
				before := len(*out)
				walk(c, p, out, depth+1)
				if len(*out) > before {
					v.SetMapIndex(k, c)
				}
			}
		}
	case reflect.Float64, reflect.Float32:
		if bad(v.Float()) && v.CanSet() {
			v.SetFloat(0)
			*out = append(*out, path)
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
