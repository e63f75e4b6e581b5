package phpbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLTOMakeArgs runs GNU make with ltoMakeArgs on a Makefile shaped like
// PHP's (compile rules on CFLAGS_CLEAN, which ends in PROF_FLAGS given on
// make's command line): the two files that declare global register
// variables get -fno-lto after -flto and the profile flags, every other
// object keeps LTO.
func TestLTOMakeArgs(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make: apt-get install make")
	}
	dir := t.TempDir()
	mk := "CFLAGS_CLEAN = -O2 " + ltoFlag + " $(PROF_FLAGS)\n" +
		"all: Zend/zend_execute.lo Zend/zend_hash.lo ext/opcache/jit/zend_jit_vm_helpers.lo ext/opcache/jit/zend_jit.lo\n" +
		"%.lo:\n\t@echo $@ $(CFLAGS_CLEAN) -DZEND_ENABLE_STATIC_TSRMLS_CACHE=1\n"
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-s"}, ltoMakeArgs()...)
	cmd := exec.Command("make", append(args, "PROF_FLAGS=-fprofile-use", "all")...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	want := map[string]bool{"Zend/zend_execute.lo": true, "ext/opcache/jit/zend_jit_vm_helpers.lo": true, "Zend/zend_hash.lo": false, "ext/opcache/jit/zend_jit.lo": false}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(want) {
		t.Fatalf("make printed %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for _, l := range lines {
		f := strings.Fields(l)
		noLTO, ok := want[f[0]]
		if !ok {
			t.Fatalf("unexpected target %q", f[0])
		}
		// gcc takes the last of -flto/-fno-lto: -fno-lto must come after
		// -flto and after the profile flags.
		last := strings.LastIndex(l, "-fno-lto")
		if got := last > strings.Index(l, ltoFlag) && last > strings.Index(l, "-fprofile-use"); got != noLTO {
			t.Errorf("%s: compiled without LTO %v, want %v: %s", f[0], got, noLTO, l)
		}
	}
}
