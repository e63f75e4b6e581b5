package liveapply

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const nobody = 65534

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the directories are another account's")
	}
}

func mkdir(t *testing.T, dir string, mode os.FileMode, uid int) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, 0); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLinkRepointedAfterCheck re-points a directory link on the written
// path after apply checked it and before it writes: the file lands in
// the directory that was checked, nothing in the link's new target.
func TestLinkRepointedAfterCheck(t *testing.T) {
	needRoot(t)
	h := newHost(t)
	checked := mkdir(t, filepath.Join(h.dir, "checked"), 0o755, 0)
	elsewhere := mkdir(t, filepath.Join(h.dir, "elsewhere"), 0o755, 0)
	link := filepath.Join(h.dir, "pool.d")
	if err := os.Symlink("checked", link); err != nil {
		t.Fatal(err)
	}
	calls := 0
	testHookHeld = func(path string) {
		// The first call is prepare's; the second is the write's.
		if calls++; calls != 2 {
			return
		}
		if err := os.Remove(link); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(elsewhere, link); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { testHookHeld = nil })
	opt := Options{Home: filepath.Join(t.TempDir(), "apply")}
	plan := Plan{Changes: []Change{{Path: filepath.Join(link, "zz.conf"), Content: []byte("[www]\npm = static\n")}}}
	if _, err := Apply(context.Background(), plan, opt); err != nil {
		t.Fatal(err)
	}
	if calls < 2 {
		t.Fatalf("the hook between the check and the write ran %d times", calls)
	}
	if b, err := os.ReadFile(filepath.Join(checked, "zz.conf")); err != nil || string(b) != "[www]\npm = static\n" {
		t.Errorf("the checked directory's file: %q, %v", b, err)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("the write followed the re-pointed link: %s holds %v", elsewhere, ents)
	}
}

// TestAccountWritableDirsRefused: a directory on the path that another
// account owns, or that group or others can write, and a link another
// account owns, are refused with the path and the fix, and nothing is
// written.
func TestAccountWritableDirsRefused(t *testing.T) {
	needRoot(t)
	h := newHost(t)
	theirs := mkdir(t, filepath.Join(h.dir, "theirs"), 0o755, nobody)
	mkdir(t, filepath.Join(theirs, "conf.d"), 0o755, 0)
	group := mkdir(t, filepath.Join(h.dir, "group"), 0o775, 0)
	mkdir(t, filepath.Join(group, "conf.d"), 0o755, 0)
	real := mkdir(t, filepath.Join(h.dir, "real"), 0o755, 0)
	theirLink := filepath.Join(h.dir, "their-link")
	if err := os.Symlink(real, theirLink); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(theirLink, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	// A link of root's to a directory whose parent another account owns:
	// checked where it leads, too.
	viaLink := filepath.Join(h.dir, "via")
	if err := os.Symlink(filepath.Join(theirs, "conf.d"), viaLink); err != nil {
		t.Fatal(err)
	}
	opt := Options{Home: filepath.Join(t.TempDir(), "apply")}
	for _, tt := range []struct{ path, want string }{
		{filepath.Join(theirs, "conf.d", "zz.conf"), theirs + " (on the path to " + theirs + "/conf.d/zz.conf) belongs to uid 65534"},
		{filepath.Join(theirs, "conf.d", "zz.conf"), "chown root: " + theirs},
		{filepath.Join(group, "conf.d", "zz.conf"), "chmod go-w " + group},
		{filepath.Join(theirLink, "zz.conf"), "the link " + theirLink + " (on the path to " + theirLink + "/zz.conf) belongs to uid 65534"},
		{filepath.Join(viaLink, "zz.conf"), "chown root: " + theirs},
	} {
		_, err := Apply(context.Background(), Plan{Changes: []Change{{Path: tt.path, Content: []byte("x")}}}, opt)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.path, err, tt.want)
		}
	}
	for _, d := range []string{filepath.Join(theirs, "conf.d"), filepath.Join(group, "conf.d"), real} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("%s was written: %v", d, ents)
		}
	}
	h.unchanged(t)
}

// TestUndoRefusesDirsNoLongerTrusted: between apply and rollback a
// directory on the path is given to another account, or made writable by
// others; rollback puts nothing back through it and says why.
func TestUndoRefusesDirsNoLongerTrusted(t *testing.T) {
	needRoot(t)
	for _, tt := range []struct {
		name  string
		spoil func(etc, pool string)
		want  string
	}{
		{"parent given away", func(etc, pool string) { os.Chown(etc, nobody, nobody) }, "belongs to uid 65534"},
		{"own dir opened", func(etc, pool string) { os.Chmod(pool, 0o777) }, "chmod go-w"},
		{"own dir linked away", func(etc, pool string) {
			os.Rename(pool, pool+".real")
			mkdir(t, pool+".theirs", 0o755, nobody)
			os.Symlink(pool+".theirs", pool)
		}, "belongs to uid 65534"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t)
			etc := mkdir(t, filepath.Join(h.dir, "etc"), 0o755, 0)
			pool := mkdir(t, filepath.Join(etc, "pool.d"), 0o755, 0)
			conf := filepath.Join(pool, "www.conf")
			if err := os.WriteFile(conf, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			opt := Options{Home: filepath.Join(t.TempDir(), "apply")}
			plan := Plan{Changes: []Change{{Path: conf, Content: []byte("new\n")}, {Path: filepath.Join(pool, "zz.conf"), Content: []byte("drop-in\n")}}}
			if _, err := Apply(context.Background(), plan, opt); err != nil {
				t.Fatal(err)
			}
			tt.spoil(etc, pool)
			_, err := Rollback(context.Background(), opt)
			if err == nil || !strings.Contains(err.Error(), "not putting "+conf+" back") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("rollback: %v, want a refusal naming %s and %q", err, conf, tt.want)
			}
			real := pool
			if _, err := os.Stat(pool + ".real"); err == nil {
				real = pool + ".real"
			}
			if b, _ := os.ReadFile(filepath.Join(real, "www.conf")); string(b) != "new\n" {
				t.Errorf("www.conf was put back through an untrusted directory: %q", b)
			}
			if _, err := os.Lstat(filepath.Join(real, "zz.conf")); err != nil {
				t.Errorf("the drop-in was removed through an untrusted directory: %v", err)
			}
			if ents, _ := os.ReadDir(pool + ".theirs"); len(ents) != 0 {
				t.Errorf("rollback wrote into the other account's directory: %v", ents)
			}
			// Refused, the transaction is not marked rolled back: once
			// the directory is fixed, rollback puts the files back.
			if tt.name != "own dir opened" {
				return
			}
			os.Chmod(pool, 0o755)
			if j, err := Rollback(context.Background(), opt); err != nil || j == nil {
				t.Fatalf("rollback once fixed: %+v, %v", j, err)
			}
			if b, _ := os.ReadFile(conf); string(b) != "old\n" {
				t.Errorf("www.conf after the second rollback: %q", b)
			}
			if _, err := os.Lstat(filepath.Join(pool, "zz.conf")); err == nil {
				t.Errorf("the drop-in is still there after the second rollback")
			}
		})
	}
}

// TestOpenParentFollowsRootsLinks: links of root's in root's directories
// are followed by phptune itself (relative, with "..", absolute, chained)
// to the directory they name; a loop is refused.
func TestOpenParentFollowsRootsLinks(t *testing.T) {
	needRoot(t)
	h := newHost(t)
	real := mkdir(t, filepath.Join(h.dir, "a", "real"), 0o755, 0)
	mkdir(t, filepath.Join(h.dir, "b"), 0o755, 0)
	links := map[string]string{
		"b/rel":   "../a/real",
		"b/abs":   real,
		"b/chain": "rel",
		"b/loop1": "loop2",
		"b/loop2": "loop1",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(h.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"b/rel", "b/abs", "b/chain"} {
		p, err := openParent(filepath.Join(h.dir, name, "x.conf"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if p.dir != real {
			t.Errorf("%s: held %s, want %s", name, p.dir, real)
		}
		if err := p.write([]byte(name), 0o644, -1, -1); err != nil {
			t.Error(err)
		}
		p.Close()
		if b, _ := os.ReadFile(filepath.Join(real, "x.conf")); string(b) != name {
			t.Errorf("%s: %s/x.conf holds %q", name, real, b)
		}
	}
	if _, err := openParent(filepath.Join(h.dir, "b", "loop1", "x.conf")); err == nil || !strings.Contains(err.Error(), "too many links") {
		t.Errorf("a link loop: %v, want too many links", err)
	}
}

// TestApplyHomeOfAnotherAccountRefused: the journals tell undo what to
// write where as root, so an apply home that another account could
// write (its own or a directory above) is refused by apply and rollback
// alike, and a journal file not root's is never used.
func TestApplyHomeOfAnotherAccountRefused(t *testing.T) {
	needRoot(t)
	h := newHost(t)
	theirs := mkdir(t, filepath.Join(t.TempDir(), "theirs"), 0o755, nobody)
	opt := Options{Home: filepath.Join(theirs, "apply")}
	if _, err := Apply(context.Background(), h.plan(), opt); err == nil || !strings.Contains(err.Error(), "apply home "+opt.Home) || !strings.Contains(err.Error(), "chown root: "+theirs) {
		t.Errorf("apply with a home under another account's directory: %v", err)
	}
	if _, err := Rollback(context.Background(), opt); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Errorf("rollback with a home under another account's directory: %v", err)
	}
	h.unchanged(t)

	// A forged journal (not root's) in a good home is not undone.
	opt = Options{Home: filepath.Join(t.TempDir(), "apply")}
	j, err := Apply(context.Background(), h.plan(), opt)
	if err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(opt.Home, j.ID, "journal.json")
	if err := os.Chown(journal, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if undone, err := Rollback(context.Background(), opt); undone != nil {
		t.Errorf("rollback used a journal of another account's: %+v, %v", undone, err)
	}
}
