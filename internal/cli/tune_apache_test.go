package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/recommend"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/servers/apache"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// TestTuneHelloApache runs a short real tune of hello behind each Apache
// server (--server): the search sizes what holds PHP's concurrency there,
// the result and summary name the server, the recommendation is in
// Apache's syntax (with php-fpm's pool only where php-fpm runs), and the
// observer read mod_status.
func TestTuneHelloApache(t *testing.T) {
	home := labtest.Home(t)
	if _, err := apache.Find(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if _, err := apache.FindModPHP(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	for _, server := range []string{knob.ApachePreforkModPHP, knob.ApacheEventFPM} {
		t.Run(server, func(t *testing.T) {
			out := filepath.Join(home, "out-"+server)
			stdout, errs, code := runCLI(t, "tune", "--app", "hello", "--server", server, "-c", "8", "--time-budget", "25s",
				"--trial-duration", "1s", "--trial-warmup", "500ms", "--holdout-rounds", "2", "--curve", "none", "--baselines", "none", "-o", out)
			if code != 0 {
				t.Fatalf("tune --server %s: exit %d\n%s", server, code, errs)
			}
			if !strings.Contains(stdout, "hello behind "+server+",") {
				t.Errorf("the summary does not name the server:\n%s", stdout)
			}
			data, err := os.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			var res results.Tune
			if err := json.Unmarshal(data, &res); err != nil {
				t.Fatal(err)
			}
			rec := knob.Config(res.Recommended)
			if res.Server != server || rec.Server() != server {
				t.Errorf("result server %q, recommended server %q; want %s", res.Server, rec.Server(), server)
			}
			if err := rec.Validate(); err != nil {
				t.Errorf("recommended configuration invalid: %v", err)
			}
			n := rec.PHPWorkers()
			if n < 1 || n > 150 {
				t.Errorf("%s = %d", knob.WorkersKnob(server), n)
			}
			if server == knob.ApachePreforkModPHP && rec["pm.max_children"] != knob.Defaults()["pm.max_children"] {
				t.Errorf("mod_php: pm.max_children changed to %s", rec["pm.max_children"])
			}
			if server == knob.ApacheEventFPM && rec.Int("apache.max_request_workers") < 8 {
				t.Errorf("event: MaxRequestWorkers %s below the 8 connections", rec["apache.max_request_workers"])
			}
			search := 0
			for _, tr := range res.Trials {
				if tr.Phase == "knee" || tr.Phase == "workers" {
					search++
					if c := knob.Config(tr.Config); c.Server() != server {
						t.Errorf("trial %d ran %s", tr.N, c.Server())
					}
				}
			}
			if search == 0 {
				t.Errorf("no knee or workers trial: the pool was not sized")
			}
			for _, d := range res.Decisions {
				if server == knob.ApachePreforkModPHP && strings.HasPrefix(d.Name, "pm") {
					t.Errorf("php-fpm's %s challenged on mod_php", d.Name)
				}
			}
			status := 0
			for _, tr := range res.Trials {
				if tr.Bench != nil && tr.Bench.Observation != nil {
					for _, s := range tr.Bench.Observation.Samples {
						if s.Apache != nil {
							status++
						}
					}
				}
			}
			if status == 0 {
				t.Errorf("no sample read Apache's mod_status")
			}
			files := map[string]bool{recommend.ApacheFile: true, recommend.IniFile: true, recommend.PoolFile: knob.RunsFPM(server), recommend.NginxFile: false}
			for f, want := range files {
				_, err := os.Stat(filepath.Join(out, f))
				if (err == nil) != want {
					t.Errorf("%s written: %v, want %v", f, err == nil, want)
				}
			}
			conf, _ := os.ReadFile(filepath.Join(out, recommend.ApacheFile))
			if !strings.Contains(string(conf), "MaxRequestWorkers "+rec["apache.max_request_workers"]) {
				t.Errorf("%s lacks MaxRequestWorkers %s:\n%s", recommend.ApacheFile, rec["apache.max_request_workers"], conf)
			}
			knobs, _ := os.ReadFile(filepath.Join(out, "recommended.knobs"))
			if !strings.Contains(string(knobs), "server="+server) {
				t.Errorf("recommended.knobs does not set the server:\n%s", knobs)
			}
			t.Logf("%s: %s=%d, decisions %d, %d trials, %.0fs", server, knob.WorkersKnob(server), n, len(res.Decisions), len(res.Trials), res.WallS)
			if hs, _ := lab.List(); len(hs) != 0 {
				t.Fatalf("the tune left labs running: %+v", hs)
			}
		})
	}
}
