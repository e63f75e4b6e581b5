package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/testkit/goldentest"
)

// loadServers is a real servers comparison: phptune servers --app strings
// --servers nginx-fpm,apache-prefork-modphp -c 8, three rounds of 2 s,
// tunes of 42 s each, with two configurations added (php-fpm static 10,
// prefork with one child), on the shared 2-core VM under load; its
// summary recomputed from its stored runs by package servercompare.
func loadServers(t *testing.T) *results.Servers {
	t.Helper()
	var s results.Servers
	data, err := os.ReadFile("testdata/servers.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// renderServers renders r in format; html without the chart library (a
// megabyte that never changes here), replaced by a marker.
func renderServers(t *testing.T, format string, r Run) string {
	t.Helper()
	var b bytes.Buffer
	if format == "html" {
		if err := renderServersHTML(&b, redactRun(r), "/* echarts.min.js */"); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if err := Render(&b, format, r); err != nil {
		t.Fatalf("Render %s: %v", format, err)
	}
	return b.String()
}

// TestServersGolden checks the JSON, text and HTML of a stored servers
// comparison. Run with -update after an intended change and review the
// diff.
func TestServersGolden(t *testing.T) {
	r := Run{Servers: loadServers(t)}
	for _, format := range []string{"json", "text", "html"} {
		t.Run(format, func(t *testing.T) {
			got := renderServers(t, format, r)
			golden := filepath.Join("testdata", "servers."+format+".golden")
			goldentest.CheckString(t, golden, got)
		})
	}
}

// TestServersReportContent: what the issue asks the table and the page to
// show is there, from the stored figures.
func TestServersReportContent(t *testing.T) {
	s := loadServers(t)
	text := renderServers(t, "text", Run{Servers: s})
	page := renderServers(t, "html", Run{Servers: s})
	for _, want := range []string{
		"throughput rps (95% CI)", "vs best", "p99 ms (95% CI)", "errors", // throughput and p99 with intervals, errors
		"CPU ms/req web+PHP+DB = stack", "PSS/worker", "PSS total", "busiest worker", // CPU split, memory, imbalance
		"tuned vs default", "why they lost:", "[queueing]", "CPU of each PHP worker",
		"apache-prefork-modphp default", "prefork-1", "fpm-static-10",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	for _, want := range []string{`id="ranking"`, `id="resources"`, `id="diagnoses"`, `id="tuned"`, `id="chart-rps"`, `id="chart-cpu"`, `id="chart-pss"`, `id="chart-workers"`,
		"apache-phptune.conf", "php-fpm-pool.conf", "nginx.conf", "recommended.knobs", "Fastest: apache-prefork-modphp default"} {
		if !strings.Contains(page, want) {
			t.Errorf("html lacks %q", want)
		}
	}
	if strings.Contains(page, "evidence.txt") {
		t.Errorf("the page shows the tunes' evidence.txt (in each tune's own report)")
	}
	// The best first, then by rank; the chart data is in rank order too.
	if i, j := strings.Index(text, "1    apache-prefork-modphp default"), strings.Index(text, "2    nginx-fpm tuned"); i < 0 || j < i {
		t.Errorf("ranking order:\n%s", text)
	}
}

// TestServersHTMLHostile: labels, warnings, files and failures are
// escaped, and credentials in them redacted.
func TestServersHTMLHostile(t *testing.T) {
	s := loadServers(t)
	s.Configs[0].Label = attack
	s.Configs[1].Failed = "failed to start: " + attack
	s.Configs[1].Rank = 0
	s.Warnings = append(s.Warnings, "mysql://app:hunter2-secret@localhost/app", attack)
	s.Servers[0].Files["evil.conf"] = attack + "\npassword = hunter2-secret\n"
	s.Diagnoses = append(s.Diagnoses, results.Diagnosis{Label: attack, Cause: "queueing", Text: attack})
	page := renderServers(t, "html", Run{Servers: s, Secrets: []string{"sekrit-db-pw"}})
	if strings.Contains(page, "<script>window.pwned") || strings.Contains(page, `<img src=x`) {
		t.Errorf("markup from the run reached the page unescaped")
	}
	if strings.Contains(page, "hunter2-secret") {
		t.Errorf("a credential reached the page")
	}
	if n := strings.Count(page, "<script"); n != 3 {
		t.Errorf("%d script elements, want the data, the library and the charts'", n)
	}
	text := renderServers(t, "text", Run{Servers: s})
	if strings.Contains(text, "hunter2-secret") {
		t.Errorf("a credential reached the text")
	}
}

func TestRenderRefusesMixedRuns(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, "text", Run{Servers: loadServers(t), Tune: loadTune(t)}); err == nil {
		t.Error("a run that is both a tune and a servers comparison was rendered")
	}
	if err := Render(&b, "text", Run{}); err == nil {
		t.Error("an empty run was rendered")
	}
}
