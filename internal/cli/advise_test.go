package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
)

// TestAdviseHostCopy reads Debian's php-fpm copied into a directory and
// started for real: the pool, its 5-children default, its workers' memory
// and its status page; then a pool far too large for the machine's memory
// makes --exit-code exit 1.
func TestAdviseHostCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm")
	}
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	h := hosttest.Debian(t)
	out, errs, code := runCLI(t, "advise", "--fpm-config", h.Conf, "--json", "--exit-code", "--no-mariadb")
	if code != 0 {
		t.Fatalf("advise: exit %d\n%s%s", code, out, errs)
	}
	var a advise.Advice
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(a.Pools) != 1 {
		t.Fatalf("pools %+v", a.Pools)
	}
	p := a.Pools[0]
	if p.Pool != "www" || p.PM != "dynamic" || p.MaxChildren != 5 || p.Workers < 1 || p.WorkerPSSP95 <= 0 || p.Recommended != 5 {
		t.Errorf("pool %+v: want www, dynamic, 5 children kept, its workers' PSS read", p)
	}
	text := ""
	for _, f := range a.Findings {
		text += f.Message + "\n"
	}
	if !strings.Contains(text, "too short to trust its peaks") || strings.Contains(text, "status_path is off") || strings.Contains(text, "could not be read") {
		t.Errorf("findings (the status page was read, the master just started):\n%s", text)
	}

	out, errs, code = runCLI(t, "advise", "--fpm-config", h.Conf)
	if code != 0 || !strings.Contains(out, "www   dynamic  5") {
		t.Errorf("text: exit %d\n%s%s", code, out, errs)
	}

	big := hosttest.Debian(t, func(www string) string {
		return strings.Replace(www, "pm.max_children = 5", "pm.max_children = 100000", 1)
	})
	out, errs, code = runCLI(t, "advise", "--fpm-config", big.Conf, "--exit-code", "--no-mariadb")
	if code != 1 || !strings.Contains(out, "pm.max_children 100000 -> ") || !strings.Contains(out, "phptune apply --pool www") {
		t.Errorf("a pool too large for memory: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = runCLI(t, "advise", "--fpm-config", h.Conf, "--watch", "1s", "--every", "300ms")
	if code != 0 || !strings.Contains(out, "watched for") || !strings.Contains(out, "samples, every 300ms") {
		t.Errorf("--watch: exit %d\n%s%s", code, out, errs)
	}
	checkUsageErrors(t, []usageCase{
		{[]string{"advise", "--watch", "1m", "--every", "0s"}, "--every 0s", "Try: --watch 10m --every 10s"},
		{[]string{"advise", "--fpm-config", "/nonexistent/php-fpm.conf"}, "--fpm-config /nonexistent/php-fpm.conf: no running php-fpm master", "Running masters:"},
	})
}
