package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/sitecopy/site"
)

// TestSiteDBFlagsNeedSite: --db and its fellows name a site lab's
// database, so they go with --site.
func TestSiteDBFlagsNeedSite(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	checkUsageErrors(t, []usageCase{
		{[]string{"lab", "up", "--db", "shop"}, "--db name a site lab's database: give --site too", "--site NAME --db NAME"},
		{[]string{"tune", "--app", "hello", "--db-user", "u", "--db-host", "localhost"}, "--db-user, --db-host name a site lab's database: give --site too", "--site NAME"},
		{[]string{"servers", "--db", "x"}, "--db does not go with phptune servers", ""},
	})
}

// TestReadPasswordFile: a pipe, or a file of root's that others cannot
// read; one trailing newline dropped.
func TestReadPasswordFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	private := write("private", "s3cret\n", 0o600)
	open := write("open", "s3cret\n", 0o644)
	twoLines := write("two", "a\nb\n", 0o600)
	if os.Geteuid() == 0 {
		if pw, err := readPasswordFile(private); err != nil || pw != "s3cret" {
			t.Errorf("private file: %q %v", pw, err)
		}
	} else if _, err := readPasswordFile(private); err == nil || !strings.Contains(err.Error(), "not owned by root") {
		t.Errorf("a file of another account was read: %v", err)
	}
	for _, p := range []string{open, twoLines, dir} {
		if _, err := readPasswordFile(p); err == nil {
			t.Errorf("%s was read", p)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.WriteString("from-a-pipe\n"); w.Close() }()
	defer r.Close()
	if pw, err := readPasswordFile("/proc/self/fd/" + strconv.Itoa(int(r.Fd()))); err != nil || pw != "from-a-pipe" {
		t.Errorf("pipe: %q %v", pw, err)
	}
	if os.Geteuid() != 0 {
		return
	}
	// A directory the site's account can write: neither a file in it nor
	// a link it swapped in (to another of root's one-line files) is read.
	siteDir := filepath.Join(dir, "site")
	os.Mkdir(siteDir, 0o755)
	os.Chown(siteDir, 65534, 65534)
	inSite := filepath.Join(siteDir, "dbpass")
	os.WriteFile(inSite, []byte("s3cret\n"), 0o600)
	link := filepath.Join(siteDir, "link")
	os.Symlink(private, link)
	for _, p := range []string{inSite, link} {
		if pw, err := readPasswordFile(p); err == nil || !strings.Contains(err.Error(), "not root's") {
			t.Errorf("%s in a directory of another account: %q %v", p, pw, err)
		}
	}
	// A link in root's own directory is not followed either.
	rootLink := filepath.Join(dir, "rootlink")
	os.Symlink(private, rootLink)
	if pw, err := readPasswordFile(rootLink); err == nil {
		t.Errorf("a link was followed: %q", pw)
	}
}

// TestSiteDataEngineRefused: a site whose database is not MariaDB/MySQL
// is refused for a copy, with the reason and what to do.
func TestSiteDataEngineRefused(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	a := &site.App{Kind: "nextcloud", File: "/srv/nc/config/config.php", Line: 4, DB: site.Database{Driver: "pgsql", Name: "nc", User: "nc"}}
	s := &site.Site{App: a, DB: &site.DBTarget{Error: "the site's database nc is on PostgreSQL"}}
	_, err := siteData(&Env{}, s, "auto", "", 0)
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "PostgreSQL") || !strings.Contains(ue.Hint, "--db-from none") {
		t.Errorf("err %v", err)
	}
}
