package livehost

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/phptune/phptune/internal/watch/proc"
)

// fakeProc writes a /proc with the given processes: pid -> (ppid, cmdline).
func fakeProc(t *testing.T, procs map[int]struct {
	ppid    int
	cmdline string
	setuid  bool // real uid another account's, as a set-uid program's
}) *proc.FS {
	t.Helper()
	root := t.TempDir()
	// Every process runs this binary, as this user (all four uids).
	bin := filepath.Join(t.TempDir(), "php-fpm8.2")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	me := os.Geteuid()
	for pid, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := fmt.Sprintf("%d (php-fpm8.2) S %d %d %d 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n", pid, p.ppid, p.ppid, p.ppid)
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cmdline"), []byte(p.cmdline), 0o644); err != nil {
			t.Fatal(err)
		}
		uids := fmt.Sprintf("Name:\tphp-fpm8.2\nUid:\t%d\t%d\t%d\t%d\n", me, me, me, me)
		if p.setuid {
			uids = fmt.Sprintf("Name:\tsu\nUid:\t65534\t%d\t%d\t%d\n", me, me, me)
		}
		if err := os.WriteFile(filepath.Join(dir, "status"), []byte(uids), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(bin, filepath.Join(dir, "exe")); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := proc.NewFS(root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// A worker just forked still carries its master's title: it is the
// master's child, not a second master (CI saw this as "2 masters running"
// while a reload started its workers).
func TestMastersSkipsForkedChild(t *testing.T) {
	type p = struct {
		ppid    int
		cmdline string
		setuid  bool
	}
	fs := fakeProc(t, map[int]p{
		100: {1, "php-fpm: master process (/etc/php/8.2/fpm/php-fpm.conf)", false},
		101: {100, "php-fpm: master process (/etc/php/8.2/fpm/php-fpm.conf)", false},
		102: {100, "php-fpm: pool www", false},
		200: {1, "php-fpm: master process (/srv/other.conf)", false},
		201: {1, "php-fpm: master process (/etc/php/8.2/fpm/php-fpm.conf)", false},
		// su run by nobody with the master's title: effective uid root,
		// real uid nobody (the review reproduced it): not a master.
		300: {1, "php-fpm: master process (/tmp/evil.conf)", true},
	})
	ms, err := Masters(fs)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, m := range ms {
		got = append(got, m.PID)
	}
	// 201 is a second master of the same file with no master parent: kept,
	// so Master() reports two and refuses to pick one.
	want := map[int]bool{100: true, 200: true, 201: true}
	if len(got) != len(want) {
		t.Fatalf("masters %v, want the pids of %v", got, want)
	}
	for _, pid := range got {
		if !want[pid] {
			t.Fatalf("masters %v: %d is not a master", got, pid)
		}
	}
}
