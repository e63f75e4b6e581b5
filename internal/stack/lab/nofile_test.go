package lab

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
)

func TestOpenFilesNeeded(t *testing.T) {
	for _, tt := range []struct {
		set  []string
		want uint64
	}{
		{nil, 2*768 + 64},
		{[]string{"nginx.worker_connections=4096"}, 8256},
		{[]string{"nginx.worker_connections=1000", "nginx.worker_rlimit_nofile=100000"}, 100000},
		{[]string{"server=apache-event-fpm"}, 0},
	} {
		cfg, err := knob.Defaults().Apply(tt.set)
		if err != nil {
			t.Fatal(err)
		}
		if got := openFilesNeeded(cfg); got != tt.want {
			t.Errorf("%v: %d, want %d", tt.set, got, tt.want)
		}
	}
}

// TestOpenFilesRefusedAboveHardLimit: under a hard limit of 4096, a
// configuration needing more is refused before anything starts, with the
// fix (run in a child whose hard limit bash lowered).
func TestOpenFilesRefusedAboveHardLimit(t *testing.T) {
	if os.Getenv("PHPTUNE_NOFILE_CHILD") != "" {
		cfg, _ := knob.Defaults().Apply([]string{"nginx.worker_connections=4096"})
		err := raiseOpenFiles(cfg)
		if err == nil || !strings.Contains(err.Error(), "above this process's hard limit of 4096") || !strings.Contains(err.Error(), "ulimit -Hn") {
			t.Fatalf("got %v", err)
		}
		small, _ := knob.Defaults().Apply([]string{"nginx.worker_connections=1000"})
		if err := raiseOpenFiles(small); err != nil {
			t.Fatal(err)
		}
		return
	}
	out, err := exec.Command("bash", "-c", `ulimit -Sn 1024 && ulimit -Hn 4096 && PHPTUNE_NOFILE_CHILD=1 exec "$0" -test.run='^TestOpenFilesRefusedAboveHardLimit$' -test.v`, os.Args[0]).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
