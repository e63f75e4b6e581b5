package seal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/watch/sockq"
)

// TestOpenNetNS: the seal's network namespace holds the nginx inside's
// listeners (its TCP port, which the host's table lacks, and its unix
// socket), read from the host through OpenNetNS; a link or a plain file
// planted where the namespace file was is refused.
func TestOpenNetNS(t *testing.T) {
	needRoot(t)
	s, sock, _, _ := sealedSite(t)
	if code, _ := get(t, unixClient(sock), "http://site.test/", "site.test"); code != 200 { // nginx is up
		t.Fatalf("the sealed site answered %d", code)
	}
	ns, err := s.OpenNetNS()
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	r := sockq.Reader{NetNS: ns}
	ls, err := r.Listeners(true, true)
	if err != nil {
		t.Fatal(err)
	}
	tcp, _ := sockq.ParseAddr("127.0.0.1:80")
	if _, ok := sockq.Find(ls, tcp); !ok {
		t.Errorf("the seal's 127.0.0.1:80 is not among its listeners %+v", ls)
	}
	if _, ok := sockq.Find(ls, sockq.Addr{Network: "unix", Address: sock}); !ok {
		t.Errorf("the seal's %s is not among its listeners %+v", sock, ls)
	}

	for name, plant := range map[string]func(p string) error{
		"a link":       func(p string) error { return os.Symlink("/proc/self/ns/net", p) },
		"a plain file": func(p string) error { return os.WriteFile(p, nil, 0o600) },
	} {
		fake := &Seal{Dir: t.TempDir()}
		if err := os.Mkdir(filepath.Join(fake.Dir, "ns"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := plant(fake.netFile()); err != nil {
			t.Fatal(err)
		}
		if f, err := fake.OpenNetNS(); err == nil {
			f.Close()
			t.Errorf("%s at the namespace's place was opened", name)
		} else if !strings.Contains(err.Error(), "namespace") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
