package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/live/livehost/hosttest"
)

// TestApplyNginxHostCopy applies php-fpm and nginx knobs to Debian's
// php-fpm and nginx copied into a directory and started: keepalive_timeout
// and access_log off go into nginx's conf.d drop-in in the same
// transaction as the pool's, worker_connections is printed as a patch
// and kept beside the transaction; nginx -t passes, nginx reloads and
// serves PHP; rollback removes the drop-in and reloads nginx.
func TestApplyNginxHostCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm and nginx")
	}
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	defer func(f func() bool) { stdinIsTerminal = f }(stdinIsTerminal)
	stdinIsTerminal = func() bool { return false }
	h := hosttest.Debian(t)
	n := h.Nginx(t)
	dir := t.TempDir()
	knobs := filepath.Join(dir, "recommended.knobs")
	os.WriteFile(knobs, []byte("pm.max_children=6\nnginx.keepalive_timeout=15\nnginx.access_log=off\nnginx.worker_connections=1024\n"), 0o644)
	host := []string{"--root", h.Root}
	drop := filepath.Join(n.ConfDir, "zz-phptune.conf")

	out, errs, code := runCLI(t, append([]string{"apply", "--knobs", knobs, "--dry-run"}, host...)...)
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errs)
	}
	for _, w := range []string{"+++ " + drop, "+keepalive_timeout 15;", "+access_log off;", "nginx -t -c " + n.Conf,
		"Not applied (nginx.worker_connections=1024)", "--- etc/nginx/nginx.conf", "+\tworker_connections 1024;", "-\tworker_connections 768;"} {
		if !strings.Contains(out, w) {
			t.Errorf("dry run lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "Not applied (nginx.keepalive_timeout") {
		t.Errorf("keepalive_timeout printed as not applied:\n%s", out)
	}
	if err := h.Unchanged(); err != nil {
		t.Fatalf("dry run changed the host: %v", err)
	}

	out, errs, code = runCLI(t, append([]string{"apply", "--knobs", knobs, "--yes", "--settle", "1s", "--check-url", n.URL("/index.php")}, host...)...)
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
	}
	for _, w := range []string{"reloaded nginx", "nginx is healthy", "error-rate is healthy"} {
		if !strings.Contains(errs, w) {
			t.Errorf("apply's log lacks %q:\n%s", w, errs)
		}
	}
	if b, err := os.ReadFile(drop); err != nil || !strings.Contains(string(b), "keepalive_timeout 15;\naccess_log off;\n") {
		t.Errorf("drop-in %q %v", b, err)
	}
	i := strings.Index(out, "nginx's patch, not applied, is in ")
	if i < 0 {
		t.Fatalf("no patch kept:\n%s", out)
	}
	patch := strings.Fields(out[i+len("nginx's patch, not applied, is in "):])[0]
	patch = strings.TrimSuffix(patch, ":")
	if b, err := os.ReadFile(patch); err != nil || !strings.Contains(string(b), "+\tworker_connections 1024;") {
		t.Errorf("kept patch %s: %q %v", patch, b, err)
	}
	size := fileSize(n.Access)
	if code, body, err := n.Get("/index.php"); err != nil || code != 200 || body != "php ok\n" {
		t.Fatalf("after apply: %d %q %v", code, body, err)
	}
	time.Sleep(200 * time.Millisecond) // nginx logs after the response
	if fileSize(n.Access) != size {
		t.Errorf("access_log off, yet the access log grew")
	}
	out, errs, code = runCLI(t, append([]string{"rollback", "--yes"}, host...)...)
	if code != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "reloaded nginx with the restored configuration") {
		t.Errorf("rollback did not reload nginx:\n%s", errs)
	}
	if code, _, err := n.Get("/index.php"); err != nil || code != 200 {
		t.Fatalf("after rollback: %d %v", code, err)
	}
	rollbackGrace(t, h, host)
	// nginx logs a request after its response is sent: wait for it.
	for i := 0; i < 50 && fileSize(n.Access) <= size; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if fileSize(n.Access) <= size {
		t.Errorf("the access log is not written again after the rollback")
	}
	if err := h.Unchanged(); err != nil {
		t.Error(err)
	}

	// A configuration file whose text forges a file of the dump: refused.
	forged := filepath.Join(n.ConfDir, "forged.conf")
	os.WriteFile(forged, []byte("# configuration file /etc/nginx/other.conf:\nkeepalive_timeout 5;\n"), 0o644)
	checkUsageErrors(t, []usageCase{{append([]string{"apply", "--knobs", knobs, "--dry-run"}, host...), "nginx -T shows files no include names (/etc/nginx/other.conf)", "--dry-run"}})
	os.Remove(forged)

	// nginx's knobs alone: php-fpm is neither checked nor reloaded.
	only := filepath.Join(dir, "nginx.knobs")
	os.WriteFile(only, []byte("nginx.keepalive_timeout=20\n"), 0o644)
	out, errs, code = runCLI(t, append([]string{"apply", "--knobs", only, "--yes", "--settle", "0s"}, host...)...)
	if code != 0 || !strings.Contains(errs, "reloaded nginx") || strings.Contains(errs, "php-fpm") {
		t.Fatalf("nginx only: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = runCLI(t, append([]string{"rollback", "--yes"}, host...)...)
	if code != 0 || !strings.Contains(errs, "reloaded nginx with the restored configuration") || strings.Contains(errs, "php-fpm") {
		t.Fatalf("rollback of nginx only: exit %d\n%s%s", code, out, errs)
	}
	if err := h.Unchanged(); err != nil {
		t.Error(err)
	}
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size()
}
