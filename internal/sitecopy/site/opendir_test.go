package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenDirFollowsOnlyRootsLinks: a directory is opened through a link
// only when the link lies in a directory only root can write (a
// deployment's "current"); a link in a directory the site's account can
// write — one swapped in after the docroot was checked — is refused, so
// root never reads another directory's configuration through it.
func TestOpenDirFollowsOnlyRootsLinks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (directories of another account)")
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	other := filepath.Join(base, "other-site")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "wp-config.php"), []byte("<?php // the other site's"), 0o644)
	release := filepath.Join(base, "releases", "r1")
	os.MkdirAll(release, 0o755)
	os.WriteFile(filepath.Join(release, "wp-config.php"), []byte("<?php // this site's"), 0o644)
	os.Symlink(release, filepath.Join(base, "current")) // root's link in root's directory
	site := filepath.Join(base, "www")                  // the site's own directory
	os.MkdirAll(site, 0o755)
	os.Chown(site, 65534, 65534)
	os.Symlink(other, filepath.Join(site, "public")) // swapped in by the site's account
	tests := []struct {
		dir, want, err string
	}{
		{release, "this site's", ""},
		{filepath.Join(base, "current"), "this site's", ""},
		{filepath.Join(site, "public"), "", "which another account can write"},
	}
	for _, tt := range tests {
		b, err := readBeneath(tt.dir, "wp-config.php", maxAppConf)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("readBeneath(%s): %q, %v; want an error containing %q", tt.dir, b, err, tt.err)
		case tt.err == "" && (err != nil || !strings.Contains(string(b), tt.want)):
			t.Errorf("readBeneath(%s): %q, %v; want %q", tt.dir, b, err, tt.want)
		}
	}
	if fd, err := openDir(filepath.Join(site, "public")); err == nil {
		unix.Close(fd)
		t.Errorf("openDir followed a link in a directory of another account")
	}
}

// TestReadBeneathHardLinks: a configuration with a second name whose
// owner is not the directory's owner — another site's file the site's
// account linked into its own docroot, where the kernel lets it — is
// refused; a file linked between a deployment's releases, of the same
// owner, is read.
func TestReadBeneathHardLinks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (files of other accounts)")
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	other := filepath.Join(base, "other-site")
	os.Mkdir(other, 0o750)
	os.WriteFile(filepath.Join(other, "wp-config.php"), []byte("<?php // the other site's password"), 0o640)
	os.Chown(filepath.Join(other, "wp-config.php"), 1234, 1234)
	site := filepath.Join(base, "site")
	os.Mkdir(site, 0o755)
	os.Chown(site, 65534, 65534)
	if err := os.Link(filepath.Join(other, "wp-config.php"), filepath.Join(site, "wp-config.php")); err != nil {
		t.Fatal(err)
	}
	b, err := readBeneath(site, "wp-config.php", maxAppConf)
	if err == nil || !strings.Contains(err.Error(), "a hard link") || strings.Contains(string(b), "password") {
		t.Errorf("another account's file linked in: %q, %v", b, err)
	}
	release := filepath.Join(base, "r2")
	os.Mkdir(release, 0o755)
	os.Chown(release, 65534, 65534)
	os.WriteFile(filepath.Join(release, "config.php"), []byte("<?php // this site's"), 0o644)
	os.Chown(filepath.Join(release, "config.php"), 65534, 65534)
	if err := os.Link(filepath.Join(release, "config.php"), filepath.Join(site, "config.php")); err != nil {
		t.Fatal(err)
	}
	if b, err := readBeneath(site, "config.php", maxAppConf); err != nil || !strings.Contains(string(b), "this site's") {
		t.Errorf("a release's own hard link: %q, %v", b, err)
	}
}
