// Package report renders a stored bench or tune run for people: one
// self-contained HTML file with charts that works offline (the chart
// library is embedded, the page makes no network request), the stable JSON
// of package results, and a text summary for the terminal. A report is a
// pure function of the stored result, so it can always be rendered again.
//
// Everything that came from the server under test (trial logs, error
// bodies, page titles) is escaped in HTML, and credentials are redacted in
// every format with package redact's rule and placeholder. Results are
// redacted before they are stored; this is the second line of defence, for
// results stored by an older phptune and values that only look like
// credentials in the rendered text.
package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/model/outdir"
	"github.com/phptune/phptune/internal/model/redact"
	"github.com/phptune/phptune/internal/model/results"
)

// Run is what a report shows: exactly one of Tune, Bench, Capacity or
// Servers is set.
type Run struct {
	Tune     *results.Tune
	Bench    *results.Bench
	Capacity *results.Capacity
	// Servers is a servers comparison (phptune servers).
	Servers *results.Servers
	// Commands reproduce the run (the result's own command is added).
	Commands []string
	// Secrets are literal values (the labs' database passwords) removed
	// wherever they occur, beside the redaction of anything shaped like a
	// credential (see Redact).
	Secrets []string
	// RedactNames are the run's --redact names: their values are
	// redacted too (see redact.IsSecretName).
	RedactNames []string
}

// Formats Render knows.
var Formats = []string{"html", "json", "text"}

// Render writes the report in format "html", "json" or "text".
func Render(w io.Writer, format string, r Run) error {
	if n := btoi(r.Tune != nil) + btoi(r.Bench != nil) + btoi(r.Capacity != nil) + btoi(r.Servers != nil); n != 1 {
		return errors.New("report: a run is a tune, a bench, a capacity search or a servers comparison")
	}
	r = redactRun(r)
	switch format {
	case "json":
		var v any = r.Tune
		switch {
		case r.Bench != nil:
			v = r.Bench
		case r.Servers != nil:
			v = r.Servers
		}
		if r.Capacity != nil {
			v = r.Capacity
		}
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(v)
	case "text":
		switch {
		case r.Tune != nil:
			return TuneText(w, r.Tune)
		case r.Servers != nil:
			return ServersText(w, r.Servers)
		}
		if r.Capacity != nil {
			return CapacityText(w, r.Capacity)
		}
		return BenchText(w, r.Bench)
	case "html":
		if r.Servers != nil {
			return renderServersHTML(w, r, echartsJS)
		}
		return renderHTML(w, r)
	}
	return fmt.Errorf("report format %q: choose html, json or text", format)
}

// WriteAll writes report.html, result.json and summary.txt into dir
// (opened by outdir, so nothing is written through a link) and returns
// their paths by format.
func WriteAll(dir *outdir.Dir, r Run) (map[string]string, error) {
	out := map[string]string{}
	for _, format := range []string{"html", "json", "text"} {
		name := map[string]string{"html": "report.html", "json": "result.json", "text": "summary.txt"}[format]
		var b bytes.Buffer
		if err := Render(&b, format, r); err != nil {
			return out, fmt.Errorf("writing %s: %w", filepath.Join(dir.Path(), name), err)
		}
		if err := dir.WriteFile(name, b.Bytes()); err != nil {
			return out, err
		}
		out[format] = filepath.Join(dir.Path(), name)
	}
	return out, nil
}

// Redacted replaces a secret's value.
const Redacted = redact.Placeholder

// redactRun returns a deep copy of r in which every string (every field,
// slice element and map value of the results, at any depth) is redacted,
// values of map keys with secret names (redact.IsSecretName, with the run's
// RedactNames) are replaced whole, and the literal secrets of r.Secrets are
// removed wherever they occur. The caller's values are not changed.
func redactRun(r Run) Run {
	out := Run{Commands: append([]string(nil), r.Commands...), RedactNames: r.RedactNames}
	var literal []string
	for _, s := range r.Secrets {
		if len(strings.TrimSpace(s)) >= 4 { // shorter ones would blank ordinary words
			literal = append(literal, s)
		}
	}
	// Longest first, so a secret that contains another goes whole.
	sort.Slice(literal, func(i, j int) bool { return len(literal[i]) > len(literal[j]) })
	red := func(s string) string {
		for _, l := range literal {
			s = strings.ReplaceAll(s, l, Redacted)
		}
		return redact.Text(s, r.RedactNames)
	}
	out.Tune = redactedCopy(r.Tune, red, r.RedactNames)
	out.Bench = redactedCopy(r.Bench, red, r.RedactNames)
	out.Capacity = redactedCopy(r.Capacity, red, r.RedactNames)
	out.Servers = redactedCopy(r.Servers, red, r.RedactNames)
	for i, c := range out.Commands {
		out.Commands[i] = red(c)
	}
	return out
}

// deepCopy copies a result through its JSON form, which is all of it.
func deepCopy[T any](v *T) *T {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("report: copying a result: %v", err)) // plain data always marshals
	}
	c := new(T)
	if err := json.Unmarshal(data, c); err != nil {
		panic(fmt.Sprintf("report: copying a result: %v", err))
	}
	return c
}

// redactedCopy is a deep copy of v (nil for nil) with every string
// redacted (redactValue).
func redactedCopy[T any](v *T, red func(string) string, names []string) *T {
	if v == nil {
		return nil
	}
	c := deepCopy(v)
	redactValue(reflect.ValueOf(c).Elem(), red, names)
	return c
}

// redactValue redacts every string reachable from v in place.
func redactValue(v reflect.Value, red func(string) string, names []string) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(red(v.String()))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			redactValue(v.Elem(), red, names)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				redactValue(v.Field(i), red, names)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			redactValue(v.Index(i), red, names)
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		iter := v.MapRange()
		type kv struct{ k, v reflect.Value }
		var set []kv
		for iter.Next() {
			k := iter.Key()
			val := reflect.New(v.Type().Elem()).Elem()
			val.Set(iter.Value()) // a settable copy
			ek := v.Type().Elem().Kind()
			if redact.IsSecretName(k.String(), names) && !val.IsZero() && (ek == reflect.String || ek == reflect.Interface) {
				val = reflect.ValueOf(Redacted).Convert(v.Type().Elem())
			} else {
				if val.Kind() == reflect.Interface && !val.IsNil() {
					// The dynamic value of an any is not settable: copy it.
					inner := reflect.New(val.Elem().Type()).Elem()
					inner.Set(val.Elem())
					redactValue(inner, red, names)
					val.Set(inner)
				} else {
					redactValue(val, red, names)
				}
			}
			set = append(set, kv{k, val})
		}
		for _, e := range set {
			v.SetMapIndex(e.k, e.v)
		}
	}
}

// title names a run in one line.
func title(r Run) string {
	if t := r.Tune; t != nil {
		return fmt.Sprintf("phptune tune %s — %s%s, workload %s", t.ID, t.App, behind(t), t.Workload)
	}
	if c := r.Capacity; c != nil {
		return fmt.Sprintf("phptune capacity %s — %s", c.ID, c.Target)
	}
	if s := r.Servers; s != nil {
		return fmt.Sprintf("phptune servers %s — %s, workload %s, %d connections", s.ID, s.App, s.Workload, s.Connections)
	}
	return fmt.Sprintf("phptune bench %s — %s", r.Bench.ID, r.Bench.Target)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// commands lists the commands that reproduce the run, without repeats.
func commands(r Run) []string {
	var out []string
	seen := map[string]bool{}
	add := func(c string) {
		c = strings.TrimSpace(c)
		if c != "" && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	if r.Tune != nil {
		add(r.Tune.Command)
	}
	if r.Bench != nil {
		add(r.Bench.Command)
	}
	if r.Capacity != nil {
		add(r.Capacity.Command)
	}
	if r.Servers != nil {
		add(r.Servers.Command)
	}
	for _, c := range r.Commands {
		add(c)
	}
	return out
}
