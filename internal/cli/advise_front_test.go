package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
)

// TestAdviseNginxHostCopy: advise on Debian's php-fpm and nginx copied
// into a directory and started names the nginx server that passes to the
// pool's socket, and the listen address.
func TestAdviseNginxHostCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm and nginx")
	}
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	h := hosttest.Debian(t)
	n := h.Nginx(t)
	out, errs, code := runCLI(t, "advise", "--fpm-config", h.Conf, "--root", h.Root, "--json")
	if code != 0 {
		t.Fatalf("advise: exit %d\n%s%s", code, out, errs)
	}
	var a advise.Advice
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if a.Front == nil || len(a.Front.Servers) != 1 || a.Front.Servers[0].Conf != n.Conf || a.Front.Servers[0].Workers < 1 || a.Front.Servers[0].WorkerConnections != 768 {
		t.Fatalf("front %+v", a.Front)
	}
	if len(a.Front.Pools) != 1 || len(a.Front.Pools[0].PassedBy) != 1 {
		t.Fatalf("pools %+v", a.Front.Pools)
	}
	by := a.Front.Pools[0].PassedBy[0]
	if !strings.HasPrefix(by, "nginx _ (listen 127.0.0.1:") || !strings.Contains(by, "sites-enabled/default:") {
		t.Errorf("passed by %q", by)
	}
	out, errs, code = runCLI(t, "advise", "--fpm-config", h.Conf, "--root", h.Root)
	if code != 0 || !strings.Contains(out, "info: pool www: passed to by nginx _ (listen 127.0.0.1:") {
		t.Errorf("text: exit %d\n%s%s", code, out, errs)
	}
	checkUsageErrors(t, []usageCase{
		{[]string{"advise", "--fpm-config", h.Conf, "--nginx-config", "/nonexistent/nginx.conf"}, "--nginx-config /nonexistent/nginx.conf: no running nginx master", "Running nginx masters:"},
		{[]string{"advise", "--fpm-config", h.Conf, "--root", "relative"}, "--root", "absolute"},
	})
}
