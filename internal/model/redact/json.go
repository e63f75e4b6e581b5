package redact

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/phptune/phptune/internal/base/finite"
)

// JSON redacts a JSON document: the non-empty string value of every
// member with a secret name is replaced whole by Placeholder, and every
// other string is redacted as Text. Numbers are kept exactly as written;
// members come out in sorted order.
func JSON(doc []byte, extra []string) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("redacting JSON: %w", err)
	}
	v = jsonValue(v, extra)
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false) // keep <redacted> readable
	if err := e.Encode(v); err != nil {
		return nil, fmt.Errorf("redacting JSON: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func jsonValue(v any, extra []string) any {
	switch x := v.(type) {
	case string:
		return Text(x, extra)
	case []any:
		for i := range x {
			x[i] = jsonValue(x[i], extra)
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if s, ok := e.(string); ok && s != "" && IsSecretName(k, extra) {
				e = Placeholder
			} else {
				e = jsonValue(e, extra)
			}
			out[Text(k, extra)] = e // a key can hold a query string too
		}
		return out
	}
	return v
}

// Warn, when set, is told about figures Value had to change to write
// them (the CLI prints it on stderr).
var Warn func(string)

// Value redacts *v through its JSON form (see JSON): afterwards *v holds
// what JSON would have made of it. Only what encoding/json sees is kept, so
// use it for plain records such as phptune's results.
//
// A non-finite number (which encoding/json refuses) is written as 0, and
// the fields are named in the returned error's absence on Warn.
func Value[T any](v *T, extra []string) error {
	if bad := finite.Clean(v); len(bad) > 0 && Warn != nil {
		Warn(fmt.Sprintf("non-finite numbers written as 0 (please report): %v", bad))
	}
	doc, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("redacting: %w", err)
	}
	if doc, err = JSON(doc, extra); err != nil {
		return err
	}
	var c T
	if err := json.Unmarshal(doc, &c); err != nil {
		return fmt.Errorf("redacting: %w", err)
	}
	*v = c
	return nil
}
