package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/servers/status/fpmstatus"
	"github.com/phptune/phptune/internal/watch/observe"
)

// poolState reads the copy's www pool: process manager and size.
func poolState(t *testing.T, h *hosttest.Host) (string, int64) {
	t.Helper()
	body, err := observe.FPMFetcher("unix", h.Socket, "/status", 0)(context.Background(), "json&full")
	if err != nil {
		t.Fatalf("status page: %v", err)
	}
	st, err := fpmstatus.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	return st.ProcessManager, st.TotalProcesses
}

// TestApplyToHostCopy applies a recommendation to Debian's php-fpm copied
// into a directory and started for real, then rolls it back.
func TestApplyToHostCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm")
	}
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	defer func(f func() bool) { stdinIsTerminal = f }(stdinIsTerminal)
	stdinIsTerminal = func() bool { return false }
	h := hosttest.Debian(t)
	dir := t.TempDir()
	knobs := filepath.Join(dir, "recommended.knobs")
	if err := os.WriteFile(knobs, []byte("pm=static\npm.max_children=7\nopcache.validate_timestamps=off\nnginx.worker_processes=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer page.Close()
	host := []string{"--root", h.Root}

	// Dry run: the diff and the plan, nothing changed.
	out, errs, code := runCLI(t, append([]string{"apply", dir, "--dry-run", "--settle", "100ms"}, host...)...)
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errs)
	}
	for _, w := range []string{"+[www]", "+pm = static", "+pm.max_children = 7", "+opcache.validate_timestamps = 0", "zz-phptune.conf", "99-phptune.ini",
		"read pool www's status page /status", "Not applied (nginx.worker_processes=2)", "worker_processes 2;"} {
		if !strings.Contains(out, w) {
			t.Errorf("dry run lacks %q:\n%s", w, out)
		}
	}
	if err := h.Unchanged(); err != nil {
		t.Fatalf("dry run changed the host: %v", err)
	}

	out, errs, code = runCLI(t, append([]string{"apply", dir, "--yes", "--settle", "100ms", "--check-url", page.URL + "/"}, host...)...)
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
	}
	// A reloaded master spawns its workers after it answers.
	pm, n := poolState(t, h)
	for i := 0; i < 30 && (pm != "static" || n != 7); i++ {
		time.Sleep(100 * time.Millisecond)
		pm, n = poolState(t, h)
	}
	if pm != "static" || n != 7 {
		t.Errorf("after apply the pool runs pm=%s with %d workers", pm, n)
	}
	ini, _ := os.ReadFile(filepath.Join(h.IniDir, "99-phptune.ini"))
	if !strings.Contains(string(ini), "opcache.validate_timestamps = 0") {
		t.Errorf("ini drop-in: %q", ini)
	}
	for path, want := range h.Files {
		if got, _ := os.ReadFile(path); string(got) != string(want) {
			t.Errorf("apply edited %s", path)
		}
	}

	// rollback asks like apply: without a terminal it refuses.
	checkUsageErrors(t, []usageCase{{append([]string{"rollback"}, host...), "rollback asks before changing a live host", "Add --yes to rollback without asking"}})
	out, errs, code = runCLI(t, append([]string{"rollback", "--yes"}, host...)...)
	if code != 0 || !strings.Contains(out, "Rolled back transaction") {
		t.Fatalf("rollback: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "rollback: during php-fpm's reload, 0 of ") {
		t.Errorf("rollback did not report its reload probe:\n%s", errs)
	}
	rollbackGrace(t, h, host)
	if err := h.Unchanged(); err != nil {
		t.Error(err)
	}
	if pm, _ := poolState(t, h); pm != "dynamic" {
		t.Errorf("after rollback the pool runs pm=%s", pm)
	}

	// Refused before anything changes, naming the problem and the fix.
	writeKnobs := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	checkUsageErrors(t, []usageCase{
		{append([]string{"apply", "--knobs", knobs, "--pool", "shop", "--yes"}, host...), "--pool shop", "(it has: www)"},
		{append([]string{"apply", "--knobs", writeKnobs("tcp.knobs", "listen=tcp\n"), "--yes"}, host...), "does not move pool www's socket", "--dry-run"},
		{append([]string{"apply", "--knobs", writeKnobs("pools.knobs", "pm.max_children=8\nfpm.pools=2\n"), "--yes"}, host...), "does not split a live pool", "--dry-run"},
		{append([]string{"apply", "--knobs", writeKnobs("bad.knobs", "pm.max_children=lots\n"), "--yes"}, host...), `knob pm.max_children: value "lots"`, "phptune knobs"},
		{append([]string{"apply", "--knobs", knobs}, host...), "standard input is not a terminal", "Add --yes"},
		{append([]string{"apply", "--knobs", knobs, "--yes", "--check-url", "http://example.com/"}, host...), "--check-url", "loopback"},
		{[]string{"apply", "--knobs", knobs, "--root", "relative"}, "--root", "absolute"},
		{append([]string{"apply", otherPHP(t, dir), "--yes"}, host...), "was measured on PHP 8.3.4; this host runs php-fpm 8.2", "Tune again on this host's PHP"},
	})
	if err := h.Unchanged(); err != nil {
		t.Errorf("a refused apply changed the host: %v", err)
	}
}

// otherPHP is a tune's directory measured on another PHP branch.
func otherPHP(t *testing.T, dir string) string {
	d := filepath.Join(dir, "php83-tune")
	os.MkdirAll(d, 0o755)
	os.WriteFile(filepath.Join(d, "recommended.knobs"), []byte("pm.max_children=7\n"), 0o644)
	os.WriteFile(filepath.Join(d, "result.json"), []byte(`{"environment":{"versions":{"php-fpm":"8.3.4"}}}`), 0o644)
	return d
}
