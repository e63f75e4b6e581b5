package site

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/phptune/phptune/internal/watch/proc"
)

// TestHolder: the kernel's socket table ties a listening address to the
// process that holds it, for TCP and unix sockets, and to no other.
func TestHolder(t *testing.T) {
	fs, err := proc.Default()
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	sock := filepath.Join(t.TempDir(), "s.sock")
	unix, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close()
	me := os.Getpid()
	for _, addr := range []string{"tcp:" + tcp.Addr().String(), "unix:" + sock} {
		if pid, ok := holder(fs, []int{1, me}, addr); !ok || pid != me {
			t.Errorf("%s: holder %d %v, want this process %d", addr, pid, ok, me)
		}
		if pid, ok := holder(fs, []int{1}, addr); ok {
			t.Errorf("%s: attributed to pid %d, which does not hold it", addr, pid)
		}
		if !listened(addr) {
			t.Errorf("%s: not seen listening", addr)
		}
	}
	if _, ok := holder(fs, []int{me}, "unix:"+sock+".none"); ok {
		t.Error("a path nothing listens on was attributed")
	}
}
