package hosttest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// MariaDB is Debian's MariaDB configuration (/etc/mysql: my.cnf, conf.d,
// mariadb.conf.d) copied under a temporary root with its paths moved into
// it and networking off, its data directory made by mariadb-install-db,
// and mariadbd started for real from it, as root dropping to the mysql
// account, as on a Debian host (root logs in by unix_socket).
type MariaDB struct {
	Root    string
	MyCnf   string // ROOT/etc/mysql/my.cnf (a regular file: Debian's mariadb.cnf)
	ConfD   string // ROOT/etc/mysql/mariadb.conf.d
	Server  string // ROOT/etc/mysql/mariadb.conf.d/50-server.cnf
	Socket  string
	DataDir string
	Log     string
	Binary  string
	Client  string
	// Files holds every configuration file of the copy as it was before
	// the test.
	Files Files
	cmd   *exec.Cmd
	done  chan struct{}
}

// DebianMariaDB copies the installed MariaDB's configuration under root
// (a directory of the test's; "" makes one) and starts the server. It
// skips the test without root or MariaDB and stops the server when the
// test ends. edits change 50-server.cnf's text before the server starts.
func DebianMariaDB(t testing.TB, root string, edits ...func(server string) string) *MariaDB {
	t.Helper()
	if testing.Short() {
		t.Skip("starts MariaDB; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("a host's MariaDB is started by root")
	}
	bin, install, client := mariaDBBinaries(t)
	acct, err := user.Lookup("mysql")
	if err != nil {
		t.Skip("no mysql account")
	}
	uid, _ := strconv.Atoi(acct.Uid)
	gid, _ := strconv.Atoi(acct.Gid)
	if root == "" {
		root = t.TempDir()
	}
	// mysqld (as mysql) must reach its data directory below the root.
	for d := root; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	etc := filepath.Join(root, "etc", "mysql")
	m := &MariaDB{Root: root, MyCnf: filepath.Join(etc, "my.cnf"), ConfD: filepath.Join(etc, "mariadb.conf.d"),
		Server: filepath.Join(etc, "mariadb.conf.d", "50-server.cnf"), Socket: filepath.Join(root, "run", "mysqld", "mysqld.sock"),
		DataDir: filepath.Join(root, "var", "lib", "mysql"), Log: filepath.Join(root, "var", "log", "mysql", "error.log"),
		Binary: bin, Client: client, Files: map[string][]byte{}}
	for _, d := range []string{filepath.Join(etc, "conf.d"), m.ConfD} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{filepath.Dir(m.Socket), m.DataDir, filepath.Dir(m.Log)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	m.copyConfig(t, etc, edits)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, install, "--defaults-file="+m.MyCnf, "--user=mysql", "--skip-test-db").CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	return m
}

// mariaDBBinaries finds Debian's mariadbd, mariadb-install-db and the
// mariadb client, and skips the test when one is not installed.
func mariaDBBinaries(t testing.TB) (bin, install, client string) {
	t.Helper()
	bin, err := exec.LookPath("mariadbd")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/mariadbd"); err != nil {
			t.Skip("mariadbd is not installed")
		}
	}
	install, err = exec.LookPath("mariadb-install-db")
	if err != nil {
		t.Skip("mariadb-install-db is not installed")
	}
	client, err = exec.LookPath("mariadb")
	if err != nil {
		t.Skip("the mariadb client is not installed")
	}
	return bin, install, client
}

// copyConfig copies Debian's /etc/mysql into etc, its paths moved under
// the root; 50-server.cnf gets the copy's data directory, no network, a
// log of its own, and edits.
func (m *MariaDB) copyConfig(t testing.TB, etc string, edits []func(server string) string) {
	t.Helper()
	root := m.Root
	move := func(b []byte) []byte {
		s := strings.ReplaceAll(string(b), "/run/mysqld/", root+"/run/mysqld/")
		s = strings.ReplaceAll(s, "/var/log/mysql/", root+"/var/log/mysql/")
		s = strings.ReplaceAll(s, "/etc/mysql/", etc+"/")
		return []byte(s)
	}
	main, err := os.ReadFile("/etc/mysql/mariadb.cnf")
	if err != nil {
		t.Skip(err)
	}
	m.Files.write(t, m.MyCnf, move(main))
	for _, sub := range []string{"conf.d", "mariadb.conf.d"} {
		files, _ := filepath.Glob(filepath.Join("/etc/mysql", sub, "*.cnf"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b = move(b)
			if filepath.Base(f) == "50-server.cnf" {
				s := strings.Replace(string(b), "#datadir                 = /var/lib/mysql", "datadir                 = "+m.DataDir, 1)
				// The copy stays off the network and logs into itself.
				s = strings.Replace(s, "bind-address            = 127.0.0.1", "skip-networking\nlog_error = "+m.Log, 1)
				for _, edit := range edits {
					s = edit(s)
				}
				b = []byte(s)
			}
			m.Files.write(t, filepath.Join(etc, sub, filepath.Base(f)), b)
		}
	}
	if _, ok := m.Files[m.Server]; !ok {
		t.Skip("Debian's 50-server.cnf is not installed")
	}
}

// Start runs mariadbd with the copy's my.cnf and waits until root
// answers on its socket.
func (m *MariaDB) Start() error {
	m.cmd = exec.Command(m.Binary, "--defaults-file="+m.MyCnf, "--user=mysql")
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := m.cmd.Start(); err != nil {
		return err
	}
	m.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(m.cmd, m.done)
	var last error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-m.done:
			log, _ := os.ReadFile(m.Log)
			return fmt.Errorf("mariadbd exited while starting:\n%s", lastLines(log, 10))
		default:
		}
		if _, last = m.Query("SELECT 1"); last == nil {
			return nil
		}
	}
	return fmt.Errorf("mariadbd did not answer within a minute: %v", last)
}

// PID is the server's process.
func (m *MariaDB) PID() int { return m.cmd.Process.Pid }

// Stop ends the server and waits for it.
func (m *MariaDB) Stop() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(30 * time.Second):
		m.cmd.Process.Kill()
		<-m.done
	}
}

// Query runs one statement as root (unix_socket) with the mariadb client
// and returns its output, tab-separated without headers.
func (m *MariaDB) Query(q string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, m.Client, "--no-defaults", "--socket="+m.Socket, "--user=root", "--batch", "--skip-column-names", "-e", q).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %v: %s", q, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// Unchanged reports the first configuration file of the copy that is not
// byte-identical to what it was, and the first file added beside them.
func (m *MariaDB) Unchanged() error {
	return m.Files.unchanged(m.ConfD, filepath.Join(filepath.Dir(m.ConfD), "conf.d"))
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
