package perf

import (
	"os"
	"strings"
	"testing"
)

func TestRootOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the files checked belong to root; the check is for root")
	}
	if err := RootOnly("/usr/bin/env"); err != nil {
		t.Errorf("/usr/bin/env: %v", err)
	}
	dir := t.TempDir() // below /tmp: sticky, writable by all
	f := dir + "/x.so"
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RootOnly(f); err == nil || !strings.Contains(err.Error(), "writable") {
		t.Errorf("a file below /tmp: %v", err)
	}
	if err := os.Symlink("/usr/bin/env", dir+"/link"); err != nil {
		t.Fatal(err)
	}
	if err := RootOnly(dir + "/link"); err == nil {
		t.Error("a link was accepted")
	}
	if err := RootOnly("/usr/bin/../bin/env"); err == nil {
		t.Error("an unclean path was accepted")
	}
}

func TestDebugFile(t *testing.T) {
	got := debugFile("/usr/bin/env")
	if !strings.HasPrefix(got, "/usr/lib/debug/.build-id/") || !strings.HasSuffix(got, ".debug") || len(got) != len("/usr/lib/debug/.build-id/")+2+1+38+6 {
		t.Errorf("debugFile(/usr/bin/env) = %q", got)
	}
}
