package report

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

// TestSizingShown: the summary and the HTML report show every sized knob
// with its reason, and the HTML the trials it read.
func TestSizingShown(t *testing.T) {
	tn := loadTune(t)
	tn.Sizing = []results.SizeDecision{
		{Knob: "opcache.memory_consumption", From: "128", To: "208", Action: "raised", Trials: []int{6, 10},
			Reason: "raised 128 → 208: scripts use 100 MiB of the 120 MiB beside the interned strings (83%)"},
		{Knob: "mariadb.innodb_buffer_pool_size", From: "128M", To: "128M", Action: "not read", Reason: "not read: the stack runs no MariaDB"},
	}
	text := render(t, "text", Run{Tune: tn})
	html := render(t, "html", Run{Tune: tn})
	for _, want := range []string{"sized from what the stack reported after the load", "opcache.memory_consumption         raised 128 → 208: scripts use 100 MiB", "not read: the stack runs no MariaDB"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	for _, want := range []string{`id="sizing"`, "<td><code>opcache.memory_consumption</code></td><td>128</td><td>208</td>", "6, 10</td>", "not read: the stack runs no MariaDB"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
