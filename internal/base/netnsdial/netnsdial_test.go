package netnsdial

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/phptune/phptune/internal/testkit/netnstest"
	"golang.org/x/sys/unix"
)

// sameAddrInside listens on a free port of the host's loopback and on the
// same port in a new namespace, answering "host" and "inside"; it returns
// the namespace and the address both listen on.
func sameAddrInside(t *testing.T) (*netnstest.Namespace, netip.AddrPort) {
	t.Helper()
	ns := netnstest.New(t)
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close() })
	netnstest.AnswerEach(host, "host")
	addr := host.Addr().(*net.TCPAddr).AddrPort()
	netnstest.AnswerEach(ns.Listen(t, addr.String()), "inside")
	return ns, addr
}

// threadsInside counts this process's threads in the network namespace
// ns, and all its threads.
func threadsInside(t *testing.T, ns *os.File) (inside, all int) {
	t.Helper()
	want, err := idOfFile(ns)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := filepath.Glob("/proc/self/task/*/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tasks {
		var st unix.Stat_t
		if unix.Stat(p, &st) != nil {
			continue // the thread ended meanwhile
		}
		all++
		if (nsID{dev: st.Dev, ino: st.Ino}) == want {
			inside++
		}
	}
	return inside, all
}

// threadNetNS is the identity of the calling thread's network namespace
// (the caller locks its goroutine to its thread).
func threadNetNS(t *testing.T) nsID {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(ownNetNS, &st); err != nil {
		t.Fatal(err)
	}
	return nsID{dev: st.Dev, ino: st.Ino}
}

// TestDialReachesInside: Dial reaches the listener in the namespace, where
// a plain dial of the same address reaches the host's; no thread but the
// one that holds the namespace is left in it, and the dialling goroutines'
// own threads never leave the host's namespace.
func TestDialReachesInside(t *testing.T) {
	ns, addr := sameAddrInside(t)
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	if got := netnstest.ReadWord(t, c); got != "host" {
		t.Fatalf("a plain dial got %q", got)
	}
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			before := threadNetNS(t)
			for range 10 {
				c, err := Dial(context.Background(), ns.File, addr)
				if err != nil {
					t.Error(err)
					return
				}
				if got := netnstest.ReadWord(t, c); got != "inside" {
					t.Errorf("Dial got %q", got)
				}
			}
			if after := threadNetNS(t); after != before {
				t.Errorf("the caller's thread moved from namespace %v to %v", before, after)
			}
		})
	}
	wg.Wait()
	if inside, all := threadsInside(t, ns.File); inside != 1 {
		t.Errorf("%d of the process's %d threads are in the namespace; want only the one that holds it", inside, all)
	}
}

// TestDialRefuses: a file that is no network namespace is refused before
// any socket is made, and a port with no listener inside is refused by the
// namespace's loopback even though the host listens there.
func TestDialRefuses(t *testing.T) {
	ns, addr := sameAddrInside(t)
	plain, err := os.Create(filepath.Join(t.TempDir(), "plain"))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	mnt, err := os.Open("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	defer mnt.Close()
	host, err := net.Listen("tcp", "127.0.0.1:0") // listens on the host only
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	for _, tc := range []struct {
		name string
		ns   *os.File
		addr netip.AddrPort
	}{
		{"a plain file", plain, addr},
		{"a mount namespace", mnt, addr},
		{"no address", ns.File, netip.AddrPort{}},
		{"a port only the host listens on", ns.File, host.Addr().(*net.TCPAddr).AddrPort()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Dial(context.Background(), tc.ns, tc.addr)
			if err == nil {
				c.Close()
				t.Fatal("dialled")
			}
			t.Log(err)
		})
	}
}

// connectBlocking connects the non-blocking socket fd to addr, waiting
// for the handshake, and returns it as a net.Conn.
func connectBlocking(t *testing.T, fd int, addr netip.AddrPort) net.Conn {
	t.Helper()
	if err := unix.SetNonblock(fd, false); err != nil {
		t.Fatal(err)
	}
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: int(addr.Port()), Addr: addr.Addr().As4()}); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "socket")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSocketMaker: every socket taken, by many goroutines at once and far
// more than the buffer holds, is in the namespace and reaches its
// listener; the maker's thread is the only one it puts there and it is
// gone from there after Close, which closes the sockets left and makes
// later Takes fail.
func TestSocketMaker(t *testing.T) {
	ns, addr := sameAddrInside(t)
	m, err := NewSocketMaker(ns.File, unix.AF_INET, 4)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := idOfFile(ns.File)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 25 {
				fd, err := m.Take()
				if err != nil {
					t.Error(err)
					return
				}
				if got, err := socketNetNS(fd); err != nil || got != want {
					t.Errorf("socket in namespace %v (%v), want %v", got, err, want)
				}
				if got := netnstest.ReadWord(t, connectBlocking(t, fd, addr)); got != "inside" {
					t.Errorf("a taken socket got %q", got)
				}
			}
		})
	}
	wg.Wait()
	if inside, all := threadsInside(t, ns.File); inside != 2 {
		t.Errorf("while the maker runs, %d of %d threads are in the namespace; want 2 (the maker's and the holder's)", inside, all)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("closing again: %v", err)
	}
	if fd, err := m.Take(); err != ErrMakerClosed {
		t.Errorf("Take after Close: %d, %v", fd, err)
	}
	if inside, all := threadsInside(t, ns.File); inside != 1 {
		t.Errorf("after Close, %d of %d threads are in the namespace; want only the holder", inside, all)
	}
}

// TestSocketMakerFails: a file that is no network namespace fails at
// once; a family the kernel refuses makes every Take fail with its errno
// (without hanging), and Close still works.
func TestSocketMakerFails(t *testing.T) {
	ns := netnstest.New(t)
	mnt, err := os.Open("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	defer mnt.Close()
	if m, err := NewSocketMaker(mnt, unix.AF_INET, 4); err == nil {
		m.Close()
		t.Fatal("a mount namespace was entered as a network namespace")
	}
	m, err := NewSocketMaker(ns.File, unix.AF_MAX+1, 4)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if fd, err := m.Take(); err != unix.EAFNOSUPPORT && err != unix.EINVAL {
			t.Fatalf("Take of an unknown family: %d, %v", fd, err)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSocket: Socket makes its socket in the namespace.
func TestSocket(t *testing.T) {
	ns := netnstest.New(t)
	fd, err := Socket(ns.File, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	want, _ := idOfFile(ns.File)
	if got, err := socketNetNS(fd); err != nil || got != want {
		t.Errorf("socket in namespace %v (%v), want %v", got, err, want)
	}
}

// TestCheckIn: the dialer's hook refuses a socket made in another
// namespace than the one asked for, and accepts one made there.
func TestCheckIn(t *testing.T) {
	ns := netnstest.New(t)
	want, _ := idOfFile(ns.File)
	inside, err := Socket(ns.File, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	outside, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		fd   int
		ok   bool
	}{
		{"made inside", inside, true},
		{"made on the host", outside, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := os.NewFile(uintptr(tc.fd), tc.name)
			defer f.Close()
			raw, err := f.SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			if err := checkIn(raw, want, ns.File.Name()); (err == nil) != tc.ok {
				t.Errorf("checkIn: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
