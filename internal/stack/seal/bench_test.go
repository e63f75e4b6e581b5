package seal

import (
	"context"
	"github.com/phptune/phptune/internal/base/peercred"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStart is the cost of starting a short program as the lab's
// account: directly (exec with a credential) and inside a seal (nsenter
// and setpriv before it).
func BenchmarkStart(b *testing.B) {
	needRoot(b)
	uid, gid := account(b)
	s := create(b, Spec{Dir: filepath.Join(base(b), "seal")})
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("/bin/true")
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sealed", func(b *testing.B) {
		for b.Loop() {
			if _, err := run0(s, s.Command(uid, gid, "/bin/true")); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRequest is the cost of one HTTP request (keep-alive, a small
// static page) to nginx: on the host's loopback TCP, into a seal through
// its unix socket, and through Forward's loopback TCP listener.
func BenchmarkRequest(b *testing.B) {
	needRoot(b)
	uid, gid := account(b)
	_, sock, root, _ := sealedSite(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	nginx(b, nil, base(b), uid, gid, root, "127.0.0.1:"+strconv.Itoa(port))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fwd, err := Forward(ctx, "127.0.0.1:0", sock, peercred.Any)
	if err != nil {
		b.Fatal(err)
	}
	tcp := &http.Client{Timeout: 5 * time.Second}
	for _, c := range []struct {
		name   string
		client *http.Client
		url    string
	}{
		{"host-tcp", tcp, "http://127.0.0.1:" + strconv.Itoa(port) + "/"},
		{"sealed-unix", unixClient(sock), "http://site.test/"},
		{"sealed-forward", tcp, "http://" + fwd.String() + "/"},
	} {
		get(b, c.client, c.url, "site.test")
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if code, _ := get(b, c.client, c.url, "site.test"); code != 200 {
					b.Fatalf("GET %s: %d", c.url, code)
				}
			}
		})
	}
}

// BenchmarkCreateDestroy is the cost of making a seal with a docroot
// overlay, a bind and a host name, and of destroying it.
func BenchmarkCreateDestroy(b *testing.B) {
	needRoot(b)
	uid, gid := account(b)
	dir := base(b)
	root := docroot(b, dir, uid, gid)
	for b.Loop() {
		s, err := Create(context.Background(), Spec{Dir: filepath.Join(dir, "seal"), Hosts: []string{"site.test"}, Docroot: root,
			Binds: []Bind{{Source: root, Target: "/run/mysqld"}}})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Destroy(); err != nil {
			b.Fatal(err)
		}
	}
}
