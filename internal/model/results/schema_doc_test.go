package results

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestSchemaDocumented checks that docs/results-schema.md names every JSON
// key the result types write, so the documentation keeps up with the code.
func TestSchemaDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/results-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || typ.PkgPath() != reflect.TypeOf(Bench{}).PkgPath() {
			return
		}
		seen[typ] = true
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if !regexp.MustCompile(`(^|[^a-z0-9_])` + regexp.QuoteMeta(name) + `([^a-z0-9_]|$)`).Match(doc) {
				t.Errorf("docs/results-schema.md does not mention %s.%s (json %q)", path, f.Name, name)
			}
			walk(f.Type, path+"."+f.Name)
		}
	}
	walk(reflect.TypeOf(Bench{}), "Bench")
	walk(reflect.TypeOf(Tune{}), "Tune")
	walk(reflect.TypeOf(Capacity{}), "Capacity")
	walk(reflect.TypeOf(Servers{}), "Servers")
}
