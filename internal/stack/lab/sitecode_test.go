package lab

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/seal"
)

// TestSiteCode: include_path directories and php.ini's prepend/append
// files outside the app's root are bound read-only when
// seal.CheckCodeSource allows it; one holding a unix socket refuses the
// lab, naming the setting, where it is set and the fix.
func TestSiteCode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the bound sources must be root's: run as root")
	}
	base, err := os.MkdirTemp("/var/tmp", "phptune-sitecode-") // not /tmp: the seal replaces it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	mk := func(rel string) string {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file := func(rel string) string {
		p := filepath.Join(base, rel)
		if err := os.WriteFile(p, []byte("<?php\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	app := mk("app")
	docroot := mk("app/public")
	lib := mk("pear")
	file("pear/header.php")
	prepend := file("prepend.php")
	inApp := mk("app/lib")
	sockDir := mk("sockets")
	ln, err := net.Listen("unix", filepath.Join(sockDir, "redis.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	missing := filepath.Join(base, "gone")
	inRun := filepath.Join("/run", filepath.Base(base)+"-append.php")
	if err := os.WriteFile(inRun, []byte("<?php\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(inRun)

	set := func(kv ...string) *site.Site {
		s := &site.Site{DocRoot: site.DocRoot{Path: docroot}, PHP: &site.PHPConfig{Settings: map[string]site.Setting{}}}
		for i := 0; i+2 < len(kv)+1; i += 3 {
			s.PHP.Settings[kv[i]] = site.Setting{Value: kv[i+1], From: kv[i+2]}
		}
		return s
	}
	for _, c := range []struct {
		name  string
		s     *site.Site
		known []string
		paths []string
		said  string // in said[0]
		note  string // in notes[0]
		err   string
		fix   string // "" for the usual one
	}{
		{name: "include_path and php.ini's prepend", s: set("include_path", `".:/usr/share/php:`+lib+":"+inApp+`"`, "php.ini:10", "auto_prepend_file", prepend, "php.ini:20"),
			paths: []string{lib, prepend}, said: "the include_path directory (php.ini:10): " + lib + " is outside the app's root: bound read-only into the seal at the same path"},
		{name: "the pool's prepend is sitePHPFiles'", s: set("auto_prepend_file", prepend, "pool www (php_admin_value[auto_prepend_file])")},
		{name: "already bound", s: set("auto_append_file", prepend, "php.ini:3"), known: []string{prepend}},
		{name: "relative prepend found in include_path", s: set("include_path", lib, "php.ini:1", "auto_prepend_file", "header.php", "php.ini:2"), paths: []string{lib}, said: "include_path"},
		{name: "relative prepend found nowhere", s: set("auto_prepend_file", "nowhere.php", "php.ini:2"), note: "relative path found in no absolute include_path directory"},
		{name: "missing on the host too", s: set("include_path", missing, "php.ini:1"), note: "does not exist on the host either"},
		{name: "a socket in an include_path directory", s: set("include_path", ".:"+sockDir, "conf.d/30-lib.ini:4"),
			err: "the include_path directory (conf.d/30-lib.ini:4) names " + sockDir + ", outside the app's root " + app},
		{name: "holds the app's root", s: set("include_path", ".:"+base, "php.ini:7"), err: "holds the app's root " + app, fix: "name the directories of code in it instead"},
		{name: "under /run", s: set("auto_append_file", inRun, "php.ini:9"), err: "lies in /run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			paths, said, notes, err := siteCode(c.s, app, c.known)
			if c.err != "" {
				if c.fix == "" {
					c.fix = "move that code to a directory of its own"
				}
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), c.fix) {
					t.Fatalf("err = %v, want it to say %q and the fix", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(paths, c.paths) {
				t.Errorf("paths = %q, want %q", paths, c.paths)
			}
			if (c.said == "") != (len(said) == 0) || c.said != "" && !strings.Contains(said[0], c.said) {
				t.Errorf("said = %q, want %q", said, c.said)
			}
			if (c.note == "") != (len(notes) == 0) || c.note != "" && !strings.Contains(notes[0], c.note) {
				t.Errorf("notes = %q, want %q", notes, c.note)
			}
		})
	}
}

// TestSiteLabIncludePathBound: a site whose pool's include_path names a
// PEAR-like directory outside its app's root comes up sealed with that
// directory bound read-only (its code runs, a write to it is refused, lab
// up says so); one holding a unix socket refuses lab up, naming it.
func TestSiteLabIncludePathBound(t *testing.T) {
	testHome(t)
	if err := seal.Available(); err != nil {
		t.Skip(err)
	}
	s, docroot := siteFixture(t, 1)
	pear, err := os.MkdirTemp("/var/lib", "phptune-pear-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(pear) })
	os.Chmod(pear, 0o755)
	if err := os.WriteFile(filepath.Join(pear, "PearLib.php"), []byte("<?php function pear_lib() { return 'pear-lib-ok'; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	page := "<?php\n$r = @include 'PearLib.php';\necho '<html><head><title>Site Test</title></head><body>';\n" +
		"echo $r ? pear_lib() : 'pear-lib-missing';\n" +
		"echo @file_put_contents('" + pear + "/w', 'x') === false ? ' pear-write-refused' : ' pear-written';\necho '</body></html>';\n"
	if err := os.WriteFile(filepath.Join(docroot, "index.php"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	inc := ".:/usr/share/php:" + pear
	s.Pool.Overrides = map[string]string{"php_value[include_path]": inc}
	s.PHP = &site.PHPConfig{Settings: map[string]site.Setting{"include_path": {Value: inc, From: "pool www (php_value[include_path])"}}}
	live := site.LiveStart(s)
	var said []string
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l, err := Up(ctx, Options{Name: "pear", Site: s, Live: &live, FillDatabase: fillSiteDB, Progress: func(m string) { said = append(said, m) }})
	if err != nil {
		t.Fatal(err)
	}
	defer Down("pear")
	got, err := l.FetchPage(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Body, "pear-lib-ok") || !strings.Contains(got.Body, "pear-write-refused") {
		t.Errorf("the page: %s, want the include_path's code run and its directory read-only", got.Body)
	}
	if _, err := os.Stat(filepath.Join(pear, "w")); err == nil {
		t.Error("the lab wrote into the host's include_path directory")
	}
	if !slices.Contains(l.SiteCode, pear) {
		t.Errorf("site_code %q lacks %s", l.SiteCode, pear)
	}
	if msgs := strings.Join(said, "\n"); !strings.Contains(msgs, "the include_path directory (pool www (php_value[include_path])): "+pear+" is outside the app's root: bound read-only") {
		t.Errorf("lab up did not say it bound %s:\n%s", pear, msgs)
	}
	if err := Down("pear"); err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("unix", filepath.Join(pear, "cache.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = Up(ctx, Options{Name: "pear2", Site: s, Live: &live, FillDatabase: fillSiteDB})
	if err == nil {
		Down("pear2")
		t.Fatal("lab up bound an include_path directory holding a unix socket")
	}
	if !strings.Contains(err.Error(), "holds a unix socket, "+filepath.Join(pear, "cache.sock")) {
		t.Errorf("lab up: %v, want it to name the socket", err)
	}
}
