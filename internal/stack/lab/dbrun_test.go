package lab

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/servers/mariadb"
	"github.com/phptune/phptune/internal/stack/seal"
)

// TestSiteDBSocketClosedUntilRootHasPassword: a site lab's MariaDB starts
// with a passwordless root, so until provisionSite has set its password
// the socket's directory is MariaDB's account's alone (0700): the site's
// account (www-data, whose live code runs on this host) cannot connect in
// that window; once the lab is up the site's group passes (0750).
func TestSiteDBSocketClosedUntilRootHasPassword(t *testing.T) {
	testHome(t)
	if err := seal.Available(); err != nil {
		t.Skip(err)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	var during os.FileMode
	var connect string
	testHookSiteDBStarted = func(l *Lab) {
		dir := layout{l.Dir}.p(siteDBRunDir)
		if st, err := os.Stat(dir); err == nil {
			during = st.Mode().Perm()
		}
		// As www-data on the host, as the site's live code would.
		cmd := exec.Command("mariadb", "--no-defaults", "--socket="+filepath.Join(dir, "mysqld.sock"), "--user=root", "-e", "SELECT 1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 33, Gid: 33}}
		out, _ := cmd.CombinedOutput()
		connect = string(out)
	}
	defer func() { testHookSiteDBStarted = nil }()
	s, _ := siteFixture(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l, err := Up(ctx, Options{Name: "dbrun", Site: s, FillDatabase: fillSiteDB})
	if err != nil {
		t.Fatal(err)
	}
	defer Down(l.Name)
	if during != 0o700 {
		t.Errorf("the socket's directory was %v while root had no password, want 0700", during)
	}
	if !strings.Contains(connect, "Permission denied") && !strings.Contains(connect, "Can't connect") {
		t.Errorf("www-data connected to the lab's MariaDB while its root had no password: %q", connect)
	}
	st, err := os.Stat(layout{l.Dir}.p(siteDBRunDir))
	if err != nil || st.Mode().Perm() != 0o750 {
		t.Errorf("the socket's directory once up: %v %v, want 0750", st.Mode(), err)
	}
	// The server's file statements are held to its own tmpdir, and LOAD
	// DATA LOCAL is off: a dump's definer-root routine gets no file.
	sec, err := l.ReadSecrets()
	if err != nil {
		t.Fatal(err)
	}
	db, err := mariadb.OpenLab(l.MariaDBSocket, l.DBPeerUID(), "root", sec.MariaDBRootPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var priv string
	var local int
	if err := db.QueryRow("SELECT @@secure_file_priv, @@local_infile").Scan(&priv, &local); err != nil {
		t.Fatal(err)
	}
	if want := (layout{l.Dir}).p(siteDBTmpDir); filepath.Clean(priv) != want || local != 0 {
		t.Errorf("secure_file_priv %q local_infile %d, want %s and 0", priv, local, layout{l.Dir}.p(siteDBTmpDir))
	}
	var got string
	err = db.QueryRow("SELECT LOAD_FILE('/etc/passwd')").Scan(&got)
	if got != "" {
		t.Errorf("LOAD_FILE('/etc/passwd') read %d bytes (err %v)", len(got), err)
	}
}
