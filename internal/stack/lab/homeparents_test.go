package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHomeParentsStrict: as root, a home under a directory another
// account owns, or that others can write (not sticky), is refused naming
// that directory and the fix; under a root-owned sticky one (/tmp) it is
// allowed.
func TestHomeParentsStrict(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the parents of a home are checked for root")
	}
	base := t.TempDir() // root's, 0700, under sticky /tmp
	if err := checkHomeParents(filepath.Join(base, "home")); err != nil {
		t.Errorf("a home under root's own directory in /tmp: %v", err)
	}
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	if err := checkHomeParents(filepath.Join(open, "home")); err == nil || !strings.Contains(err.Error(), open) || !strings.Contains(err.Error(), "chmod go-w") {
		t.Errorf("a home under a world-writable directory: %v", err)
	}
	os.Chmod(open, 0o777|os.ModeSticky)
	if err := checkHomeParents(filepath.Join(open, "home")); err != nil {
		t.Errorf("a home under a root-owned sticky directory: %v", err)
	}
	theirs := filepath.Join(base, "theirs")
	os.Mkdir(theirs, 0o755)
	os.Chown(theirs, 65534, 65534)
	if err := checkHomeParents(filepath.Join(theirs, "deeper", "home")); err == nil || !strings.Contains(err.Error(), "uid 65534") {
		t.Errorf("a home under nobody's directory: %v", err)
	}
	link := filepath.Join(base, "link")
	os.Symlink(theirs, link)
	if err := checkHomeParents(filepath.Join(link, "home")); err == nil || !strings.Contains(err.Error(), "uid 65534") {
		t.Errorf("a home through a link to nobody's directory: %v", err)
	}
	t.Setenv("PHPTUNE_HOME", filepath.Join(open, "h"))
	os.Chmod(open, 0o777)
	if _, err := EnsureHome(); err == nil {
		t.Error("EnsureHome accepted a home under a world-writable directory")
	}
}
