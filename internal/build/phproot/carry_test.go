package phproot

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCarryFrom: an installed PHP whose php.ini raises post_max_size (and
// memory_limit, a knob: the lab sets it),
// whose conf.d sets upload_max_filesize and a setting the root's PHP
// does not know, and links its opcache.ini from mods-available, carried
// onto a root whose php.ini keeps Debian's memory_limit; the knob's
// opcache.memory_consumption stays the lab's.
func TestCarryFrom(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the installed PHP's files are read as root's")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	write := func(p, text string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	etc := filepath.Join(dir, "etc/php/8.2")
	ini := write(filepath.Join(etc, "fpm/php.ini"), "[PHP]\nmemory_limit = 512M\npost_max_size = 64M\nmax_execution_time = 30\nopcache.memory_consumption = 256\n")
	stock := write(filepath.Join(dir, "usr/lib/php/8.2/php.ini-production"), "[PHP]\nmemory_limit = 128M\nmax_execution_time = 30\n")
	write(filepath.Join(etc, "fpm/conf.d/99-site.ini"), "upload_max_filesize = \"64M\"\nimap.enable_insecure_rsh = 1\n")
	write(filepath.Join(etc, "mods-available/opcache.ini"), "zend_extension=opcache.so\n")
	if err := os.Symlink(filepath.Join(etc, "mods-available/opcache.ini"), filepath.Join(etc, "fpm/conf.d/10-opcache.ini")); err != nil {
		t.Fatal(err)
	}
	r := newRoot(filepath.Join(dir, "root84"), Manifest{Version: "8.4", Debian: "13",
		Directives: []string{"max_execution_time", "memory_limit", "opcache.memory_consumption", "post_max_size", "upload_max_filesize"}})
	write(r.Host(r.FPMIni), "[PHP]\nmemory_limit = 128M\nmax_execution_time = 30\n")

	lines, notes := carryFrom(r, "8.2", ini, filepath.Join(etc, "fpm/conf.d"), stock)
	text := strings.Join(notes, "\n")
	want := []string{"; carried from PHP 8.2's configuration (changed from Debian's defaults):", "post_max_size = 64M", `upload_max_filesize = "64M"`}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("lines %q\nwant  %q", lines, want)
	}
	for _, w := range []string{
		"PHP 8.2's settings carried onto Debian 13's php.ini: post_max_size (" + ini + ":3), upload_max_filesize (",
		"not carried: imap.enable_insecure_rsh (" + etc + "/fpm/conf.d/99-site.ini:2): PHP 8.4 here has no such setting",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("notes lack %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "not read") {
		t.Errorf("a file was not read:\n%s", text)
	}

	// cgi.fix_pathinfo is php-fpm's own setting: the root's CLI does not
	// list it, and it is carried all the same.
	write(filepath.Join(etc, "fpm/conf.d/97-fpm.ini"), "cgi.fix_pathinfo = 0\n")
	// A root link to a directory the site's account owns, where a link of
	// that account's leads to a secret file of root's: not followed.
	site := filepath.Join(dir, "site")
	write(filepath.Join(dir, "secret.ini"), "db_password = hunter2\n")
	if err := os.MkdirAll(site, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "secret.ini"), filepath.Join(site, "php.ini")); err != nil {
		t.Fatal(err)
	}
	os.Lchown(filepath.Join(site, "php.ini"), 65534, 65534)
	os.Chown(site, 65534, 65534)
	if err := os.Symlink(filepath.Join(site, "php.ini"), filepath.Join(etc, "fpm/conf.d/98-chain.ini")); err != nil {
		t.Fatal(err)
	}
	lines, notes = carryFrom(r, "8.2", ini, filepath.Join(etc, "fpm/conf.d"), stock)
	text = strings.Join(notes, "\n")
	if !strings.Contains(strings.Join(lines, "\n"), "cgi.fix_pathinfo = 0") {
		t.Errorf("cgi.fix_pathinfo was not carried: %q\n%s", lines, text)
	}
	if strings.Contains(text+strings.Join(lines, "\n"), "hunter2") || strings.Contains(text, "db_password") || !strings.Contains(text, "98-chain.ini") {
		t.Errorf("the chain of links was followed, or not named:\n%s", text)
	}
	os.Remove(filepath.Join(etc, "fpm/conf.d/98-chain.ini"))

	// A conf.d file another account can write is not read, and said so.
	os.Chmod(filepath.Join(etc, "fpm/conf.d/99-site.ini"), 0o666)
	_, notes = carryFrom(r, "8.2", ini, filepath.Join(etc, "fpm/conf.d"), stock)
	if text := strings.Join(notes, "\n"); !strings.Contains(text, "99-site.ini") || !strings.Contains(text, "not read") {
		t.Errorf("a writable conf.d file was read:\n%s", text)
	}
}
