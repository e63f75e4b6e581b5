// Package labtest is for tests in other packages that start real labs.
package labtest

import (
	"os"
	"testing"

	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest/testhome"
)

// Home points PHPTUNE_HOME at a fresh directory that the lab's
// unprivileged stack user can traverse (t.TempDir's parents are private to
// root) — as root under /var/lib (TempParent), where a sealed site lab can
// live — stamped with the test process (testhome.Stamp), and, when the
// test ends, takes down every lab left in it and removes it. A test
// killed before its cleanup (a timeout's panic) leaves its labs running:
// make test first runs internal/tools/reaptestlabs, which takes down the
// labs of homes whose test process is gone. Without nginx installed, or
// with -short, the test is skipped: it would start real servers.
func Home(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a lab; skipped with -short")
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
		t.Skip("nginx is not installed; run: make setup")
	}
	dir, err := os.MkdirTemp(TempParent(), testhome.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := testhome.Stamp(dir); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PHPTUNE_HOME", dir)
	t.Cleanup(func() {
		hs, _ := lab.List()
		for _, h := range hs {
			if err := lab.Down(h.Lab.Name); err != nil {
				t.Errorf("lab down %s: %v", h.Lab.Name, err)
			}
		}
		os.RemoveAll(dir)
	})
	return dir
}

// TempParent is where tests make phptune's homes and sites' docroots: as
// root /var/lib (root's, not under /tmp, /run or /dev/shm, which a sealed
// lab replaces inside, and with no other account able to write above
// them, as a seal requires), otherwise the system's temporary directory.
func TempParent() string {
	if os.Geteuid() == 0 {
		return "/var/lib"
	}
	return os.TempDir()
}
