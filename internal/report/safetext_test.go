package report

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

// TestTextReportsShowEscapes feeds an OSC, a CSI and a BEL, as a lab's
// page title or log line would bring them into a run's record, through
// the text reports: none reaches the text raw, each is shown.
func TestTextReportsShowEscapes(t *testing.T) {
	const hostile = "title \x1b]2;PWNED\a\x1b[8mhidden\u009b"
	const shown = `title \x1b]2;PWNED\a\x1b[8mhidden\u009b`
	b := &results.Bench{
		ID: "b1", Target: "http://127.0.0.1/", Warnings: []string{hostile},
		ServerErrors: &results.ServerErrors{
			Logs:         []results.ServerLog{{Name: "nginx", Lines: 1, Note: hostile}},
			Explanations: []string{hostile},
		},
	}
	for _, tc := range []struct {
		name  string
		write func(*strings.Builder) error
	}{
		{"BenchText", func(w *strings.Builder) error { return BenchText(w, b) }},
		{"Render text", func(w *strings.Builder) error { return Render(w, "text", Run{Bench: b}) }},
		{"ServerErrorsText", func(w *strings.Builder) error {
			ServerErrorsText(w, b.ServerErrors, "  ", 13, true)
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w strings.Builder
			if err := tc.write(&w); err != nil {
				t.Fatal(err)
			}
			out := w.String()
			if strings.ContainsAny(out, "\x1b\a\u009b") {
				t.Errorf("raw escape in the text: %q", out)
			}
			if !strings.Contains(out, shown) {
				t.Errorf("the text does not show %s:\n%s", shown, out)
			}
		})
	}
}
