package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// raceHome makes a home with labs/victim (unmarked, so `lab down victim`
// removes it as named) and, outside the home, a directory a racing
// account would like root to remove.
func raceHome(t *testing.T) (home, outside string) {
	t.Helper()
	if _, err := stackAccount(); err != nil {
		t.Skipf("no stack account (%v); run: phptune setup", err)
	}
	home = t.TempDir()
	outside = t.TempDir()
	t.Setenv("PHPTUNE_HOME", home)
	if err := os.MkdirAll(filepath.Join(home, "labs", "victim", "log"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(home, "labs"), 0o710); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(outside, "keep"), filepath.Join(outside, "victim", "keep")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { testHookLabsOpened = nil })
	return home, outside
}

func mustExist(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed through a swapped name: %v", p, err)
		}
	}
}

// TestDownSwappedLabDir swaps the lab's directory for a link to a
// directory elsewhere after `lab down` checked it and before it removes
// it: the link goes, what it points to stays.
func TestDownSwappedLabDir(t *testing.T) {
	home, outside := raceHome(t)
	victim := filepath.Join(home, "labs", "victim")
	ran := false
	testHookLabsOpened = func(name string) {
		ran = true
		if err := os.Rename(victim, filepath.Join(home, "moved")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, victim); err != nil {
			t.Fatal(err)
		}
	}
	if err := Down("victim"); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if !ran {
		t.Fatal("the hook between the check and the removal never ran")
	}
	mustExist(t, filepath.Join(outside, "keep"), filepath.Join(outside, "victim", "keep"))
	if _, err := os.Lstat(victim); !os.IsNotExist(err) {
		t.Errorf("the link %s is still there: %v", victim, err)
	}
}

// TestDownSwappedLabsDir swaps labs/ itself for a link to a directory
// that holds a "victim" of its own: the removal acts on the labs
// directory that was checked (now renamed), never on the link's target.
func TestDownSwappedLabsDir(t *testing.T) {
	home, outside := raceHome(t)
	labs := filepath.Join(home, "labs")
	ran := false
	testHookLabsOpened = func(name string) {
		ran = true
		if err := os.Rename(labs, filepath.Join(home, "labs.old")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, labs); err != nil {
			t.Fatal(err)
		}
	}
	if err := Down("victim"); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if !ran {
		t.Fatal("the hook between the check and the removal never ran")
	}
	mustExist(t, filepath.Join(outside, "keep"), filepath.Join(outside, "victim", "keep"))
	if _, err := os.Lstat(filepath.Join(home, "labs.old", "victim")); !os.IsNotExist(err) {
		t.Errorf("the checked lab directory was not removed: %v", err)
	}
}

// TestDownRefusesOpenLabsDir: a labs directory others can write (or a
// link in its place) is refused before anything is removed, naming the fix.
func TestDownRefusesOpenLabsDir(t *testing.T) {
	home, outside := raceHome(t)
	labs := filepath.Join(home, "labs")
	if err := os.Chmod(labs, 0o777); err != nil {
		t.Fatal(err)
	}
	err := Down("victim")
	if err == nil || !strings.Contains(err.Error(), "chmod go-w "+labs) {
		t.Errorf("Down with labs/ mode 0777: %v, want a refusal naming chmod go-w %s", err, labs)
	}
	mustExist(t, filepath.Join(labs, "victim"))
	if err := os.Chmod(labs, 0o710); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(labs, filepath.Join(home, "labs.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, labs); err != nil {
		t.Fatal(err)
	}
	err = Down("victim")
	if err == nil || !strings.Contains(err.Error(), "not a link") {
		t.Errorf("Down with labs/ a link: %v, want a refusal", err)
	}
	mustExist(t, filepath.Join(outside, "victim", "keep"))
}
