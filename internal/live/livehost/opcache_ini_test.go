package livehost

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/livehost/hosttest"
	"github.com/phptune/phptune/internal/watch/proc"
)

// TestReadOpcacheINIOpenBasedir: an open_basedir set in php.ini (not in
// the pool, so nothing refuses it beforehand) makes php-fpm refuse the
// script; the error says where to look, and the directory is removed.
func TestReadOpcacheINIOpenBasedir(t *testing.T) {
	h := hosttest.Debian(t)
	if err := os.WriteFile(filepath.Join(h.IniDir, "50-basedir.ini"), []byte("open_basedir = /srv/site/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.Stop()
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	os.Chmod(filepath.Dir(parent), 0o755)
	os.Chmod(parent, 0o755)
	fs, _ := proc.Default()
	ms, _ := Masters(fs)
	var m Master
	for _, x := range ms {
		if x.Conf == h.Conf {
			m = x
		}
	}
	fpm, err := ReadFPM(h.Conf, "")
	if err != nil || m.PID == 0 {
		t.Fatalf("master %+v: %v", m, err)
	}
	_, err = ReadOpcache(context.Background(), m, fpm.Pools[0], parent)
	t.Logf("%v", err)
	if err == nil || !strings.Contains(err.Error(), "give --opcache-dir a directory the pool sees and may read") {
		t.Errorf("php.ini's open_basedir: %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
