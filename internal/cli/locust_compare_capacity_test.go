package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/traffic/locust"
)

func TestCompareCapacityEngineRefused(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "--workers", "2", "default"}, "go with --engine locust"},
		{[]string{"compare", "--engine", "k6", "default"}, `--engine "k6": want phptune or locust`},
		{[]string{"compare", "--engine", "locust", "--site", "site.test", "default"}, "a sealed site lab is reached through a unix socket"},
		{[]string{"capacity", "--app", "hello", "--workers", "2"}, "go with --engine locust"},
		{[]string{"capacity", "--engine", "locust", "--site", "site.test"}, "a sealed site lab is reached through a unix socket"},
	} {
		_, errs, code := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q in:\n%s", c.args, code, c.want, errs)
		}
	}
	// Not installed: said before any lab starts, with the command that
	// installs it.
	_, errs, code := runCLI(t, "compare", "--engine", "locust", "--app", "io", "default")
	if code == 0 || !strings.Contains(errs, "setup --with-locust") {
		t.Errorf("compare --engine locust without Locust: exit %d\n%s", code, errs)
	}
}

// TestCompareCapacityLocustIOLab runs compare and capacity on Locust on
// the io lab (20 ms per request, server-bound): a pool of 4 against one of
// 8, 2 rounds each, every round measured and recorded as Locust's, without
// errors; a short capacity search on Locust
// records its engine, each step Locust's open model at its rate, and
// says that its latency is not corrected for coordinated omission.
func TestCompareCapacityLocustIOLab(t *testing.T) {
	home := labtest.Home(t)
	t.Chdir(t.TempDir())
	if _, err := locust.Install(context.Background(), home, io.Discard); err != nil {
		t.Fatal(err)
	}
	s8, s4 := filepath.Join(home, "s8.knobs"), filepath.Join(home, "s4.knobs")
	for f, n := range map[string]string{s8: "8", s4: "4"} {
		if err := os.WriteFile(f, []byte("pm=static\npm.max_children="+n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errs, code := runCLI(t, "compare", "--app", "io", "--engine", "locust", "--workers", "2", "-c", "16", "-d", "4s", "--warmup", "1s",
		"--rounds", "2", "--json", "s8="+s8, "s4="+s4)
	if code != 0 {
		t.Fatalf("compare --engine locust: exit %d\n%s", code, errs)
	}
	var res results.Compare
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("compare --json: %v\n%s", err, out)
	}
	t.Logf("compare's rounds:\n%s", errs)
	if res.Engine != "locust" || res.EngineVersion != locust.PinnedVersion() || res.Workers != 2 {
		t.Errorf("compare's engine: %q %q, %d workers", res.Engine, res.EngineVersion, res.Workers)
	}
	for _, cc := range res.Configs {
		if len(cc.Engines) != 2 || cc.Engines[0] != "locust" || cc.Engines[1] != "locust" {
			t.Errorf("%s: engines by round %v, want locust twice", cc.Label, cc.Engines)
		}
		for i, rps := range cc.RPS {
			if rps <= 0 || cc.Errors[i] > 0 {
				t.Errorf("%s round %d: %.1f rps, error rate %.3f", cc.Label, i+1, rps, cc.Errors[i])
			}
		}
	}
	if len(res.Summary) != 2 || res.Summary[0].MedianRPS <= 0 || res.Summary[1].MedianRPS <= 0 {
		t.Fatalf("compare's summary: %+v", res.Summary)
	}
	// 4 workers of 20 ms each serve about half of what 8 do; on a
	// machine this busy a round varies too much to hold compare to it.
	t.Logf("compare on Locust: s8 %.1f rps, s4 %.1f rps (ratio %.2f, about 0.5 on a quiet machine)", res.Summary[0].MedianRPS, res.Summary[1].MedianRPS, res.Summary[1].RatioRPS)

	out, errs, code = runCLI(t, "capacity", "--app", "io", "--set", "pm=static", "--set", "pm.max_children=8", "--engine", "locust",
		"--slo", "p99<200ms", "--start-rate", "100", "--growth", "2", "--max-steps", "3", "--step", "5s", "--step-warmup", "1s", "--no-save", "--json")
	if code != 0 && code != 1 {
		t.Fatalf("capacity --engine locust: exit %d\n%s", code, errs)
	}
	var c results.Capacity
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("capacity --json: %v\n%s\n%s", err, out, errs)
	}
	if c.Engine != "locust" || c.EngineVersion != locust.PinnedVersion() {
		t.Errorf("capacity's engine: %q %q", c.Engine, c.EngineVersion)
	}
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "not corrected for coordinated omission") || !strings.Contains(errs, "not corrected for coordinated omission") {
		t.Errorf("capacity on Locust does not say its latency is not corrected for coordinated omission:\n%v\n%s", c.Warnings, errs)
	}
	if len(c.Steps) == 0 {
		t.Fatalf("capacity ran no step:\n%s", errs)
	}
	// The verdicts are the machine's (a busy one fails at a low rate);
	// every step must be Locust's open model at its rate, warmed up.
	for _, st := range c.Steps {
		b := st.Bench
		if b == nil || b.Engine != "locust" || b.Model != "open" || b.RateAskedRPS != st.RateRPS || st.AchievedRPS <= 0 || b.WarmupS <= 0 || b.Errors > 0 {
			t.Errorf("capacity step %d on Locust: %+v\n%s", st.N, st, errs)
			continue
		}
		if !strings.Contains(strings.Join(b.Warnings, "\n"), "does not correct coordinated omission") {
			t.Errorf("step %d's bench does not say Locust does not correct coordinated omission: %v", st.N, b.Warnings)
		}
	}
	for _, s := range c.Steps {
		t.Logf("step %d: %.0f rps asked, %.1f achieved, pass %v %v", s.N, s.RateRPS, s.AchievedRPS, s.Pass, s.FailReasons)
	}
}
