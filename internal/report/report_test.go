package report

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/outdir"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/testkit/goldentest"
)

func loadTune(t *testing.T) *results.Tune {
	t.Helper()
	var r results.Tune
	data, err := os.ReadFile("testdata/tune.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func loadBench(t *testing.T) *results.Bench {
	t.Helper()
	var b results.Bench
	data, err := os.ReadFile("testdata/bench.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	return &b
}

// loadCapacity is a real capacity search of the hello app (p99<100ms,
// distro pool, on the busy 2-core VM), trimmed: no per-second series nor
// latency distributions, observer samples for the confirmed passing step
// only.
func loadCapacity(t *testing.T) *results.Capacity {
	t.Helper()
	var c results.Capacity
	data, err := os.ReadFile("testdata/capacity.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func render(t *testing.T, format string, r Run) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, format, r); err != nil {
		t.Fatalf("Render %s: %v", format, err)
	}
	return b.String()
}

// TestGolden checks the JSON and text output of fixed stored runs: a real
// tune of the hello app (5 s trials on the 2-core VM; observer samples kept
// for trials 5, 32 and 33 only, latency distributions for the holdout only,
// to keep the file small) and a real 20 s bench of a WordPress lab's front
// page at 30 connections, observed. The tune's sizing decisions were added
// later: what package sizing decides from its stored trials (the run
// predates the caches' readings, so they are "not read"; nginx's workers
// from the observer's view of trial 33). Run with -update
// after an intended change and review the diff.
func TestGolden(t *testing.T) {
	runs := map[string]Run{"tune": {Tune: loadTune(t)}, "bench": {Bench: loadBench(t)}, "capacity": {Capacity: loadCapacity(t)}}
	for name, r := range runs {
		for _, format := range []string{"json", "text"} {
			t.Run(name+"."+format, func(t *testing.T) {
				got := render(t, format, r)
				golden := filepath.Join("testdata", name+"."+format+".golden")
				goldentest.CheckString(t, golden, got)
			})
		}
	}
}

// TestCapacityTuneText: a capacity tune's summary shows both searches, and
// their open-model steps stay out of the table against concurrency.
func TestCapacityTuneText(t *testing.T) {
	r := tuneWithCapacity(t)
	plain := render(t, "text", Run{Tune: loadTune(t)})
	out := render(t, "text", Run{Tune: r})
	for _, want := range []string{"capacity at p99<100ms,errors<=0% (open model):", "recommended/start capacity 2.00×", "start: latency against rate", "recommended: latency against rate"} {
		if !strings.Contains(out, want) {
			t.Errorf("capacity tune text lacks %q", want)
		}
	}
	tableOf := func(s string) string {
		i := strings.Index(s, "\nconnections ")
		if i < 0 {
			return ""
		}
		j := strings.Index(s[i+1:], "\n\n")
		if j < 0 {
			return s[i:]
		}
		return s[i : i+1+j]
	}
	if tableOf(out) != tableOf(plain) {
		t.Errorf("the capacity steps changed the table against concurrency:\n%s\nwant\n%s", tableOf(out), tableOf(plain))
	}
}

// The JSON keys the schema documents stay stable.
func TestJSONSchemaKeys(t *testing.T) {
	out := render(t, "json", Run{Tune: loadTune(t)})
	for _, key := range []string{`"schema_version": 1`, `"kind": "tune"`, `"recommended_config"`, `"holdout"`, `"throughput_ratio"`, `"latency_p99_ms"`, `"worker_pss_p95_bytes"`} {
		if !strings.Contains(out, key) {
			t.Errorf("tune JSON lacks %s", key)
		}
	}
	out = render(t, "json", Run{Capacity: loadCapacity(t)})
	for _, key := range []string{`"schema_version": 1`, `"kind": "capacity"`, `"capacity_rps"`, `"first_fail_rps"`, `"steps"`, `"fail_reasons"`, `"slo_terms"`} {
		if !strings.Contains(out, key) {
			t.Errorf("capacity JSON lacks %s", key)
		}
	}
	out = render(t, "json", Run{Bench: loadBench(t)})
	for _, key := range []string{`"schema_version": 1`, `"kind": "bench"`, `"throughput_rps"`, `"latency_p99_ms"`, `"status_codes"`, `"samples"`, `"worker_pss_p95_bytes"`} {
		if !strings.Contains(out, key) {
			t.Errorf("bench JSON lacks %s", key)
		}
	}
}

const attack = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2">`

// hostile returns the tune fixture with server-controlled strings replaced
// by markup and credentials.
func hostile(t *testing.T) *results.Tune {
	r := loadTune(t)
	r.Trials[0].Status = "failed"
	r.Trials[0].FailReason = "php-fpm said: " + attack
	r.Trials[0].Log = "PHP Fatal error in /var/www/wp-config.php: define( 'DB_PASSWORD', 'hunter2-secret' ); " + attack
	r.Warnings = append(r.Warnings, "page title was "+attack, "mysql://app:hunter2-secret@localhost/app", "--password=hunter2-secret")
	r.Files["evil.txt"] = attack + "\npassword = hunter2-secret\n"
	r.Command = "phptune tune --app io --set mariadb.password=hunter2-secret"
	last := r.Trials[len(r.Trials)-1].Bench
	last.Warnings = []string{`{"db_password": "hunter2-secret"}`}
	last.Command = `phptune bench -H "Authorization: Bearer hunter2-secret" -H "Cookie: wordpress_logged_in=hunter2-secret" http://127.0.0.1:8080/`
	// Deep inside an observation sample: a request URI with a token, and
	// php-fpm status fields phptune does not know.
	s := &last.Observation.Samples[len(last.Observation.Samples)-1]
	if len(s.FPM) == 0 || len(s.FPM[0].Workers) == 0 {
		t.Fatal("fixture: the last holdout trial's last sample has no php-fpm workers")
	}
	s.FPM[0].Workers[0].RequestURI = "/wp-login.php?action=rp&token=hunter2-secret"
	s.FPM[0].Extra = map[string]any{"auth_token": "hunter2-secret", "note": attack}
	// Strings the charts, their tooltips and the scrollable top show.
	s.Groups[0].Name = attack
	for i := range r.Trials {
		if r.Trials[i].Phase == "categorical" {
			r.Trials[i].Config["listen"] = attack
			r.Trials[i].Phase = attack
			break
		}
	}
	// A knob map entry named like a credential, and the lab's own password
	// (known to phptune) appearing bare in a log.
	r.Recommended["mariadb.root_password"] = "hunter2-secret"
	r.Trials[1].Log = "mysqld: Access denied for user 'app'@'localhost' (attempted pw Zq8-labpass-77)"
	return r
}

// labSecrets are the lab's passwords a report is told to remove.
var labSecrets = []string{"Zq8-labpass-77"}

func TestHTMLEscapesServerStrings(t *testing.T) {
	out := render(t, "html", Run{Tune: hostile(t)})
	if strings.Contains(out, "<script>window.pwned") || strings.Contains(out, `<img src=x`) {
		t.Fatal("markup from the server under test reached the page unescaped")
	}
	if !strings.Contains(out, "&lt;script&gt;window.pwned=1&lt;/script&gt;") {
		t.Error("the hostile string is not shown escaped")
	}
	if n := strings.Count(out, "<script"); n != 3 {
		t.Errorf("%d script elements, want 3 (data, ECharts, phptune's)", n)
	}
}

func TestSecretsRedacted(t *testing.T) {
	for _, format := range Formats {
		in := hostile(t)
		out := render(t, format, Run{Tune: in, Commands: []string{"mariadb --password=hunter2-secret"}, Secrets: labSecrets})
		for _, secret := range []string{"hunter2-secret", labSecrets[0]} {
			if i := strings.Index(out, secret); i >= 0 {
				t.Errorf("%s report contains the secret: …%s…", format, out[max(0, i-80):min(len(out), i+20)])
			}
		}
		if in.Recommended["mariadb.root_password"] != "hunter2-secret" {
			t.Fatal("Render changed the caller's result")
		}
		if format == "html" && !strings.Contains(out, html.EscapeString(Redacted)) {
			t.Errorf("%s report does not say what it redacted", format)
		}
	}
}

// TestRedact: the report redacts with package redact's rule and
// placeholder (its own table is in package redact).
func TestRedact(t *testing.T) {
	cases := []struct{ in, want string }{
		{`define( 'DB_PASSWORD', 'x1' );`, `define( 'DB_PASSWORD', '<redacted>' );`},
		{`define('AUTH_KEY', 'k');`, `define('AUTH_KEY', '<redacted>');`},
		{`password = s3cret`, `password = <redacted>`},
		{`mysql -u app --password=s3cret -h x`, `mysql -u app --password=<redacted> -h x`},
		{`{"db_password": "s3cret", "db_user": "app"}`, `{"db_password": "<redacted>", "db_user": "app"}`},
		{`dsn mysql://app:s3cret@localhost/app`, `dsn mysql://app:<redacted>@localhost/app`},
		{`-H "Authorization: Bearer abc.def"`, `-H "Authorization: <redacted>"`},
		{`-H 'Cookie: a=1; b=2' http://x/`, `-H 'Cookie: <redacted>' http://x/`},
		{`-H 'X-Api-Key: k' http://x/`, `-H 'X-Api-Key: <redacted>' http://x/`},
		{`/wp-login.php?action=rp&key=k1&token=t1`, `/wp-login.php?action=rp&key=<redacted>&token=<redacted>`},
		{`pm.max_children = 5`, `pm.max_children = 5`},
		{`opcache.jit_buffer_size = 64M`, `opcache.jit_buffer_size = 64M`},
		{`listen = /run/php/php8.2-fpm.sock`, `listen = /run/php/php8.2-fpm.sock`},
		{`http://127.0.0.1:8080/index.php`, `http://127.0.0.1:8080/index.php`},
	}
	for _, c := range cases {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRedactNames: the run's --redact names are redacted at render time
// too, in text and in maps.
func TestRedactNames(t *testing.T) {
	b := loadBench(t)
	b.Command = "phptune bench -H 'X-Tenant: acme-corp-7' http://127.0.0.1:8080/"
	b.Observation.Samples[0].FPM = []results.FPMStatus{{Extra: map[string]any{"x-tenant": "acme-corp-7"}}}
	for _, format := range Formats {
		out := render(t, format, Run{Bench: b, RedactNames: []string{"X-Tenant"}})
		if strings.Contains(out, "acme-corp-7") {
			t.Errorf("%s report shows a --redact value", format)
		}
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("password=abc")
	f.Add(`define('DB_PASSWORD','x')`)
	f.Add("mysql://u:p@h")
	f.Fuzz(func(t *testing.T, s string) {
		out := Redact(s)
		if Redact(out) != out {
			t.Errorf("Redact is not idempotent on %q: %q then %q", s, out, Redact(out))
		}
	})
}

func TestRenderRefusesBadInput(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, "html", Run{}); err == nil {
		t.Error("an empty run rendered")
	}
	if err := Render(&b, "text", Run{Bench: loadBench(t), Capacity: loadCapacity(t)}); err == nil {
		t.Error("a run that is both a bench and a capacity search rendered")
	}
	if err := Render(&b, "pdf", Run{Bench: loadBench(t)}); err == nil || !strings.Contains(err.Error(), "html, json or text") {
		t.Errorf("unknown format: %v", err)
	}
}

func TestWriteAll(t *testing.T) {
	dir, err := outdir.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	paths, err := WriteAll(dir, Run{Bench: loadBench(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"html", "json", "text"} {
		st, err := os.Stat(paths[f])
		if err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
