package redact

import (
	"strings"
	"testing"
	"time"
)

// TestLinearTime: redaction runs on stored logs and results of any size,
// so no input shape may make it quadratic (a declined match once scanned
// the rest of the text: 200 KB of "a:" took 33 s).
func TestLinearTime(t *testing.T) {
	if testing.Short() {
		t.Skip("times 128 KiB inputs")
	}
	for _, unit := range []string{"a:", "a=", `"a":`, "define('", "//@", "x://a@", "password: x\n", "[a]=", "a=b&", "http://"} {
		s := strings.Repeat(unit, 128<<10/len(unit))
		start := time.Now()
		Text(s, nil)
		Form(s, nil)
		URL(s, nil)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%d bytes of %q took %v", len(s), unit, d)
		}
	}
}
