package ansible

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/servers/status/fpmstatus"
	"github.com/phptune/phptune/internal/watch/observe"
)

// writeRole writes a role for rec into a new directory and returns it.
func writeRole(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runPlaybook runs ansible-playbook on this machine (connection local)
// against host h, with the role's variables pointed at the copy.
func runPlaybook(t *testing.T, h *hosttest.Host, dir, book string, args ...string) (string, error) {
	t.Helper()
	return runPlaybookVars(t, h, nil, dir, book, args...)
}

// runPlaybookVars is runPlaybook with more variables (the nginx and
// MariaDB copies').
func runPlaybookVars(t *testing.T, h *hosttest.Host, more map[string]any, dir, book string, args ...string) (string, error) {
	t.Helper()
	all := map[string]any{
		"phptune_hosts":           "localhost",
		"phptune_fpm_binary":      h.Binary,
		"phptune_fpm_conf":        h.Conf,
		"phptune_fpm_pool_dir":    h.PoolDir,
		"phptune_fpm_ini_dir":     h.IniDir,
		"phptune_fpm_reload":      "signal",
		"phptune_fpm_environment": map[string]string{"PHP_INI_SCAN_DIR": h.IniDir},
		"phptune_settle_seconds":  1,
	}
	for k, v := range more {
		all[k] = v
	}
	vars, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	varsFile := filepath.Join(t.TempDir(), "vars.json")
	if err := os.WriteFile(varsFile, vars, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ansible-playbook", append([]string{"-i", "localhost,", "-c", "local", "-e", "@" + varsFile, book}, args...)...)
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8", "ANSIBLE_HOME="+home, "ANSIBLE_LOCAL_TEMP="+filepath.Join(home, "tmp"),
		"ANSIBLE_REMOTE_TEMP="+filepath.Join(home, "tmp"), "ANSIBLE_NOCOLOR=1", "ANSIBLE_RETRY_FILES_ENABLED=0")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// pool reads the copy's status page: its process manager and processes.
func pool(ctx context.Context, h *hosttest.Host) (string, int64, error) {
	body, err := observe.FPMFetcher("unix", h.Socket, "/status", 0)(ctx, "json&full")
	if err != nil {
		return "", 0, err
	}
	st, err := fpmstatus.Parse(body)
	if err != nil {
		return "", 0, err
	}
	return st.ProcessManager, st.TotalProcesses, nil
}

// waitPool waits until the pool runs pm with n processes (0: any).
func waitPool(ctx context.Context, h *hosttest.Host, pm string, n int64) error {
	var got string
	var procs int64
	var err error
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if got, procs, err = pool(ctx, h); err == nil && got == pm && (n == 0 || procs == n) {
			return nil
		}
	}
	return fmt.Errorf("the pool runs pm=%s with %d processes (%v), want pm=%s with %d", got, procs, err, pm, n)
}

// TestPlaybookOnHostCopy runs the exported role with ansible-playbook
// against Debian's php-fpm copied into a directory and started for real:
// --check changes nothing; the real run writes the drop-in, passes
// php-fpm -t and reloads (the pool turns static with 7 workers); a role
// holding a value php-fpm -t refuses fails the host and leaves the
// previous drop-in and configuration serving; rollback.yml removes the
// drop-ins and the host is back on its own files.
func TestPlaybookOnHostCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm and runs ansible-playbook")
	}
	if _, err := exec.LookPath("ansible-playbook"); err != nil {
		t.Fatalf("ansible-playbook is not installed: run phptune setup --with-ansible (%v)", err)
	}
	h := hosttest.Debian(t)
	ctx := context.Background()
	if err := waitPool(ctx, h, "dynamic", 0); err != nil {
		t.Fatal(err)
	}
	files, err := Role(recommendation(t, "pm=static", "pm.max_children=7", "realpath_cache_size=16M"), Options{Pool: "www", PHPVersion: h.Version})
	if err != nil {
		t.Fatal(err)
	}
	dir := writeRole(t, files)

	out, err := runPlaybook(t, h, dir, "playbook.yml", "--check", "--diff")
	if err != nil {
		t.Fatalf("--check: %v\n%s", err, out)
	}
	if err := h.Unchanged(); err != nil {
		t.Fatalf("--check changed the host: %v\n%s", err, out)
	}

	out, err = runPlaybook(t, h, dir, "playbook.yml")
	if err != nil {
		t.Fatalf("the rollout failed: %v\n%s", err, out)
	}
	dropIn := filepath.Join(h.PoolDir, livehost.PoolDropInName)
	applied, err := os.ReadFile(dropIn)
	if err != nil || !strings.Contains(string(applied), "pm.max_children = 7") {
		t.Fatalf("drop-in %s: %v\n%s", dropIn, err, applied)
	}
	if ini, err := os.ReadFile(filepath.Join(h.IniDir, livehost.IniDropInName)); err != nil || !strings.Contains(string(ini), "realpath_cache_size = 16M") {
		t.Errorf("php.ini drop-in: %v\n%s", err, ini)
	}
	if err := waitPool(ctx, h, "static", 7); err != nil {
		t.Fatalf("after the rollout: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(h.PoolDir, "www.conf")); string(b) != string(h.Files[filepath.Join(h.PoolDir, "www.conf")]) {
		t.Error("the role edited www.conf")
	}

	// A value php-fpm -t refuses: the host fails, the previous drop-in is
	// put back byte for byte and the pool still runs it.
	bad := files[filepath.ToSlash(filepath.Join("roles", RoleName, "files", livehost.PoolDropInName))]
	badDir := writeRole(t, files)
	badFile := filepath.Join(badDir, "roles", RoleName, "files", livehost.PoolDropInName)
	if err := os.WriteFile(badFile, []byte(strings.Replace(string(bad), "pm.max_children = 7", "pm.max_children = -3", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = runPlaybook(t, h, badDir, "playbook.yml")
	if err == nil {
		t.Fatalf("a value php-fpm -t refuses was rolled out:\n%s", out)
	}
	if !strings.Contains(out, "Check php-fpm's whole configuration") || !strings.Contains(out, "the previous configuration was put back") {
		t.Errorf("the failure does not say which check failed and that the host was rolled back:\n%s", out)
	}
	if now, _ := os.ReadFile(dropIn); string(now) != string(applied) {
		t.Errorf("after the failed rollout the drop-in is\n%s\nwant the previous one\n%s", now, applied)
	}
	if err := waitPool(ctx, h, "static", 7); err != nil {
		t.Errorf("after the failed rollout: %v", err)
	}

	out, err = runPlaybook(t, h, dir, "rollback.yml")
	if err != nil {
		t.Fatalf("rollback.yml: %v\n%s", err, out)
	}
	if err := h.Unchanged(); err != nil {
		t.Errorf("after rollback.yml: %v", err)
	}
	if err := waitPool(ctx, h, "dynamic", 0); err != nil {
		t.Errorf("after rollback.yml: %v", err)
	}
}

// TestPlaybookNginxAndMariaDB rolls out a recommendation with php-fpm,
// nginx and MariaDB settings to Debian's three servers copied into one
// directory and started: nginx -t passes and nginx reloads (its access
// log stops growing), MariaDB's variables are set live and read back; a
// MariaDB value the server truncates fails the host, and the previous
// drop-ins and live values are back; rollback.yml removes every drop-in,
// nginx logs again and MariaDB runs what its own files say.
func TestPlaybookNginxAndMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm, nginx and MariaDB and runs ansible-playbook")
	}
	if _, err := exec.LookPath("ansible-playbook"); err != nil {
		t.Fatalf("ansible-playbook is not installed: run phptune setup --with-ansible (%v)", err)
	}
	h := hosttest.Debian(t)
	n := h.Nginx(t)
	m := hosttest.DebianMariaDB(t, h.Root)
	ctx := context.Background()
	more := map[string]any{
		"phptune_nginx_binary":          n.Binary,
		"phptune_nginx_conf":            n.Conf,
		"phptune_nginx_args":            []string{"-e", n.ErrorLog},
		"phptune_nginx_dropin_dir":      n.ConfDir,
		"phptune_nginx_reload":          "signal",
		"phptune_nginx_master_pattern":  "^nginx: master process .* -c " + n.Conf + " ",
		"phptune_mariadb_server":        m.Binary,
		"phptune_mariadb_defaults_args": []string{"--defaults-file=" + m.MyCnf},
		"phptune_mariadb_client":        m.Client,
		"phptune_mariadb_socket":        m.Socket,
		"phptune_mariadb_dropin_dir":    m.ConfD,
		"phptune_check_url":             n.URL("/index.php"),
	}
	live := func() string {
		v, err := m.Query("SELECT @@GLOBAL.max_connections, @@GLOBAL.innodb_buffer_pool_size")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := live()
	logSize := func() int64 {
		st, err := os.Stat(n.Access)
		if err != nil {
			return -1
		}
		return st.Size()
	}
	files, err := Role(recommendation(t, "pm=static", "pm.max_children=7", "nginx.access_log=off", "mariadb.max_connections=200", "mariadb.innodb_buffer_pool_size=256M"),
		Options{Pool: "www", PHPVersion: h.Version})
	if err != nil {
		t.Fatal(err)
	}
	dir := writeRole(t, files)
	out, err := runPlaybookVars(t, h, more, dir, "playbook.yml")
	if err != nil {
		t.Fatalf("the rollout failed: %v\n%s", err, out)
	}
	if err := waitPool(ctx, h, "static", 7); err != nil {
		t.Errorf("php-fpm after the rollout: %v", err)
	}
	if got := live(); got != "200\t268435456" {
		t.Errorf("MariaDB runs %q after the rollout, want 200 and 256 MiB", got)
	}
	dropIn := filepath.Join(n.ConfDir, livehost.NginxDropInName)
	if b, err := os.ReadFile(dropIn); err != nil || !strings.Contains(string(b), "access_log off;") {
		t.Errorf("nginx drop-in: %v\n%s", err, b)
	}
	size := logSize()
	for range 3 {
		if code, _, err := n.Get("/index.php"); err != nil || code != 200 {
			t.Fatalf("nginx after the rollout: %d %v", code, err)
		}
	}
	if logSize() != size {
		t.Errorf("nginx still writes its access log after the rollout (%d -> %d bytes): not reloaded", size, logSize())
	}
	cnf := filepath.Join(m.ConfD, livehost.MariaDBDropInName)
	applied, _ := os.ReadFile(cnf)

	// innodb_buffer_pool_size above the server's maximum: SET GLOBAL
	// truncates it with a warning, which fails the host; everything goes
	// back to the first rollout's state.
	bad := writeRole(t, files)
	varsFile := filepath.Join(bad, "roles", RoleName, "vars", "main.yml")
	b, _ := os.ReadFile(varsFile)
	if err := os.WriteFile(varsFile, []byte(strings.Replace(string(b), `"268435456"`, `"1099511627776000"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = runPlaybookVars(t, h, more, bad, "playbook.yml")
	if err == nil {
		t.Fatalf("a value MariaDB truncates was rolled out:\n%s", out)
	}
	if !strings.Contains(out, "Set MariaDB's variables (SET GLOBAL)") || !strings.Contains(out, "the previous configuration was put back") {
		t.Errorf("the failure does not say what failed and that the host was rolled back:\n%s", out)
	}
	if got := live(); got != "200\t268435456" {
		t.Errorf("MariaDB runs %q after the failed rollout, want the first rollout's 200 and 256 MiB", got)
	}
	if now, _ := os.ReadFile(cnf); string(now) != string(applied) {
		t.Errorf("after the failed rollout the MariaDB drop-in is\n%s\nwant\n%s", now, applied)
	}

	out, err = runPlaybookVars(t, h, more, dir, "rollback.yml")
	if err != nil {
		t.Fatalf("rollback.yml: %v\n%s", err, out)
	}
	if got := live(); got != before {
		t.Errorf("MariaDB runs %q after rollback.yml, want its files' %q", got, before)
	}
	for _, f := range []string{dropIn, cnf, filepath.Join(h.PoolDir, livehost.PoolDropInName)} {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("%s is still there after rollback.yml", f)
		}
	}
	if err := h.Unchanged(); err != nil {
		t.Error(err)
	}
	if err := m.Unchanged(); err != nil {
		t.Error(err)
	}
	// A reload is asynchronous: until the master has started its new
	// workers, an old one (access_log off) may answer. Ask again for up
	// to 10 s.
	size = logSize()
	logged := false
	for deadline := time.Now().Add(10 * time.Second); !logged && time.Now().Before(deadline); {
		if code, _, err := n.Get("/index.php"); err != nil || code != 200 {
			t.Fatalf("nginx after rollback.yml: %d %v", code, err)
		}
		if logged = logSize() != size; !logged {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if !logged {
		t.Error("nginx writes no access log after rollback.yml: not reloaded")
	}
}
