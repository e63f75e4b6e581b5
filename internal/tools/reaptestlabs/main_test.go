package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/stack/lab/labtest/testhome"
)

// TestReapTakesDownWhatAKilledTestLeft starts a real lab in a home whose
// test process has exited (a sleep stands in for the killed test binary)
// and one in a home of this live process: reap takes down the first's
// servers and removes it, and leaves the second running.
func TestReapTakesDownWhatAKilledTestLeft(t *testing.T) {
	labtest.Home(t) // skips with -short or without nginx
	parent := t.TempDir()
	if os.Geteuid() == 0 {
		var err error
		if parent, err = os.MkdirTemp(labtest.TempParent(), "phptune-reap-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(parent) })
		if err := os.Chmod(parent, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dead := filepath.Join(parent, testhome.Prefix+"dead")
	if err := os.Mkdir(dead, 0o755); err != nil {
		t.Fatal(err)
	}
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	if err := testhome.StampFor(dead, sleeper.Process.Pid); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t.Setenv("PHPTUNE_HOME", dead)
	orphan, err := lab.Up(ctx, lab.Options{Name: "orphan", App: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // if reap failed
		os.Setenv("PHPTUNE_HOME", dead)
		lab.Down("orphan")
	})
	sleeper.Process.Kill()
	sleeper.Wait()
	// The live home, stamped by this process, with a lab of its own.
	live := filepath.Join(parent, testhome.Prefix+"live")
	if err := os.Mkdir(live, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := testhome.Stamp(live); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PHPTUNE_HOME", live)
	kept, err := lab.Up(ctx, lab.Options{Name: "kept", App: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Setenv("PHPTUNE_HOME", live)
		if err := lab.Down("kept"); err != nil {
			t.Error(err)
		}
	})

	var out bytes.Buffer
	if err := reap(parent, time.Now(), &out); err != nil {
		t.Fatalf("reap: %v\n%s", err, out.String())
	}
	t.Logf("%s", out.String())
	if !strings.Contains(out.String(), "removed "+dead) || !strings.Contains(out.String(), "is gone") {
		t.Errorf("reap said %q", out.String())
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead test's home is still there: %v", err)
	}
	c := http.Client{Timeout: 5 * time.Second}
	if r, err := c.Get(orphan.URL); err == nil {
		r.Body.Close()
		t.Errorf("the orphan lab still answers at %s", orphan.URL)
	}
	r, err := c.Get(kept.URL)
	if err != nil {
		t.Fatalf("the live test's lab no longer answers: %v", err)
	}
	r.Body.Close()
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the live test's home: %v", err)
	}
}
