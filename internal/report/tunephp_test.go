package report

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

func TestTunePHPByBuildText(t *testing.T) {
	fatal := &results.PHPErrors{Classes: []results.PHPErrorClass{{Class: "fatal", Count: 250,
		Files: []results.PHPErrorFile{{File: "poly.php", Count: 250, Example: "Cannot redeclare function array_find()"}}}}}
	trial := func(build string, reqs int64, php *results.PHPErrors) results.Trial {
		b := &results.Bench{Requests: reqs, ThroughputRPS: float64(reqs) / 10, ServerErrors: &results.ServerErrors{PHP: php}}
		cfg := map[string]string{"pm": "static"}
		if build != "" {
			cfg["php.build"] = build
		}
		return results.Trial{Config: cfg, Bench: b}
	}
	unread := trial("", 500, nil)
	unread.Bench.ServerErrors = nil
	res := &results.Tune{Trials: []results.Trial{trial("", 1000, nil), trial("debian-8.4", 1000, fatal), trial("distro", 1000, nil), {Config: map[string]string{}}, unread}}
	res.Environment = &results.Environment{PHPBuilds: []results.PHPBuild{{ID: "debian-8.4", PHPVersion: "8.4.28"}}}
	var b strings.Builder
	TunePHPByBuildText(&b, res)
	want := "\nPHP's messages by php.build (every measured trial of each):\n" +
		"  distro (the distro's PHP, 3 trials; 1 not counted: its servers' logs were not read): 0 fatal errors, 0 warnings, 0 deprecations per 1000 requests (2000 requests)\n" +
		"  debian-8.4 (PHP 8.4.28, 1 trial): 250 fatal errors, 0 warnings, 0 deprecations per 1000 requests (1000 requests); fatal error most from poly.php (250: Cannot redeclare function array_find())\n" +
		"  " + PHPLogCaveat + "\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	TunePHPByBuildText(&b, &results.Tune{Trials: res.Trials[:1]})
	if b.Len() != 0 {
		t.Errorf("one PHP printed %q", b.String())
	}
}

// TestTunePHPByBuildHTML: the report's HTML carries the same lines.
func TestTunePHPByBuildHTML(t *testing.T) {
	fatal := &results.PHPErrors{Classes: []results.PHPErrorClass{{Class: "fatal", Count: 3,
		Files: []results.PHPErrorFile{{File: "poly.php", Count: 3, Example: "Cannot redeclare function array_find()"}}}}}
	res := &results.Tune{
		Decisions: []results.Decision{{Name: "php.build=debian-8.4", Verdict: "rejected: 3 fatal PHP errors"}},
		Trials: []results.Trial{
			{Config: map[string]string{}, Bench: &results.Bench{Requests: 100, ThroughputRPS: 10}},
			{Config: map[string]string{"php.build": "debian-8.4"}, Bench: &results.Bench{Requests: 100, ThroughputRPS: 10, ServerErrors: &results.ServerErrors{PHP: fatal}}},
		},
	}
	var b strings.Builder
	if err := renderHTML(&b, Run{Tune: res}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<pre id="php-by-build">PHP&#39;s messages by php.build`) || !strings.Contains(b.String(), "fatal error most from poly.php") {
		t.Errorf("the HTML report lacks the PHP lines by build")
	}
}

// TestPHPByConfigText: when compare's configurations ran different PHPs,
// each measured one gets its line, and the counts' limit is said.
func TestPHPByConfigText(t *testing.T) {
	dep := &results.PHPErrors{Classes: []results.PHPErrorClass{{Class: "deprecation", Count: 30,
		Files: []results.PHPErrorFile{{File: "wp-includes/x.php", Count: 30, Example: "Implicitly marking parameter $a as nullable is deprecated"}}}}}
	res := &results.Compare{
		Configs: []results.CompareConfig{
			{Label: "default", Config: map[string]string{}, RPS: []float64{100}, Requests: []int64{1000}},
			{Label: "php84", Config: map[string]string{"php.build": "debian-8.4"}, RPS: []float64{110}, Requests: []int64{1000}, PHPErrors: dep},
			{Label: "broken", Config: map[string]string{"php.build": "debian-8.4"}, Failed: "did not start"},
		},
		Summary: []results.CompareRow{{}, {RatioRPS: 1.1}},
		Builds:  []results.PHPBuild{{ID: "debian-8.4", PHPVersion: "8.4.28"}},
	}
	var b strings.Builder
	PHPByConfigText(&b, res)
	want := "PHP's messages by configuration (each runs its own php.build):\n" +
		"  default (the distro's PHP): 0 fatal errors, 0 warnings, 0 deprecations per 1000 requests (1000 requests)\n" +
		"  php84 (PHP 8.4.28): 1.10× throughput; 0 fatal errors, 0 warnings, 30 deprecations per 1000 requests (1000 requests); deprecation most from wp-includes/x.php (30: Implicitly marking parameter $a as nullable is deprecated)\n" +
		"  " + PHPLogCaveat + "\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
