package load

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartCPUProfileRefusesPlantedNames: the profile is written to a new
// file or one of this account's, never through a link or into another
// account's file.
func TestStartCPUProfileRefusesPlantedNames(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if _, err := StartCPUProfile(link); err == nil {
		t.Error("a link was written through")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target now holds %q", b)
	}
	if os.Geteuid() == 0 {
		other := filepath.Join(dir, "other")
		if err := os.WriteFile(other, []byte("theirs"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := StartCPUProfile(other); err == nil || !strings.Contains(err.Error(), "owner 65534") {
			t.Errorf("another account's file: %v", err)
		}
		if b, _ := os.ReadFile(other); string(b) != "theirs" {
			t.Errorf("another account's file now holds %q", b)
		}
	}
	for _, name := range []string{"new.prof", "victim"} {
		stop, err := StartCPUProfile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		stop()
		if b, _ := os.ReadFile(filepath.Join(dir, name)); strings.Contains(string(b), "keep") || len(b) == 0 {
			t.Errorf("%s: not a fresh profile (%d bytes)", name, len(b))
		}
	}
}
