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
	"github.com/phptune/phptune/internal/servers/caddy"
	"github.com/phptune/phptune/internal/servers/h2o"
	"github.com/phptune/phptune/internal/servers/lighttpd"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// TestTuneHelloOtherServers runs a short real tune of hello behind
// lighttpd, Caddy and h2o (--server): every trial runs that server, the
// php-fpm pool is sized, the result and summary name the server, the
// recommendation is in the server's own syntax beside the pool, and the
// observer read the server's status page where it has one.
func TestTuneHelloOtherServers(t *testing.T) {
	home := labtest.Home(t)
	for _, find := range []func() (string, error){lighttpd.Find, caddy.Find, h2o.Find} {
		if _, err := find(); err != nil {
			t.Skipf("skipping: %v", err)
		}
	}
	for _, server := range []string{knob.LighttpdFPM, knob.CaddyFPM, knob.H2OFPM} {
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
			search, status := 0, 0
			for _, tr := range res.Trials {
				if c := knob.Config(tr.Config); c.Server() != server {
					t.Errorf("trial %d ran %s", tr.N, c.Server())
				}
				if tr.Phase == "knee" || tr.Phase == "workers" {
					search++
				}
				if tr.Bench != nil && tr.Bench.Observation != nil {
					for _, s := range tr.Bench.Observation.Samples {
						if s.Lighttpd != nil || s.H2O != nil {
							status++
						}
					}
				}
			}
			if search == 0 {
				t.Errorf("no knee or workers trial: the pool was not sized")
			}
			if (server == knob.CaddyFPM) != (status == 0) {
				t.Errorf("%d samples read the server's status page (Caddy has none, the others must)", status)
			}
			web := recommend.WebFile(server)
			files := map[string]bool{web: true, recommend.IniFile: true, recommend.PoolFile: true, recommend.NginxFile: false, recommend.ApacheFile: false}
			for f, want := range files {
				_, err := os.Stat(filepath.Join(out, f))
				if (err == nil) != want {
					t.Errorf("%s written: %v, want %v", f, err == nil, want)
				}
			}
			pool, _ := os.ReadFile(filepath.Join(out, recommend.PoolFile))
			if !strings.Contains(string(pool), "pm.max_children = "+rec["pm.max_children"]) {
				t.Errorf("%s lacks pm.max_children = %s:\n%s", recommend.PoolFile, rec["pm.max_children"], pool)
			}
			knobs, _ := os.ReadFile(filepath.Join(out, "recommended.knobs"))
			if !strings.Contains(string(knobs), "server="+server) {
				t.Errorf("recommended.knobs does not set the server:\n%s", knobs)
			}
			t.Logf("%s: pm.max_children=%s, decisions %d, %d trials, %.0fs", server, rec["pm.max_children"], len(res.Decisions), len(res.Trials), res.WallS)
			if hs, _ := lab.List(); len(hs) != 0 {
				t.Fatalf("the tune left labs running: %+v", hs)
			}
		})
	}
}
