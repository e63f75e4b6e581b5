// Package netnstest gives a test a network namespace of its own: empty but
// for its loopback, which is up, and kept by one thread that entered it
// for good (unshare) and runs the test's work there, such as listening on
// 127.0.0.1, where the host's own listeners are out of reach. It needs
// root; New skips the test otherwise.
package netnstest

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Namespace is a test's network namespace.
type Namespace struct {
	// File is the namespace's nsfs file (as a lab's OpenNetNS gives); its
	// name opens the namespace again while the test runs.
	File *os.File
	// jobs carries work to the thread in the namespace; closing it ends
	// that thread.
	jobs chan func()
}

// New makes a network namespace with its loopback up, for the test's
// duration: the thread that holds it ends and File is closed when the test
// ends. It skips the test unless it runs as root.
func New(t testing.TB) *Namespace {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making a network namespace needs root")
	}
	n := &Namespace{jobs: make(chan func())}
	made := make(chan error, 1)
	go n.hold(made)
	if err := <-made; err != nil {
		t.Fatalf("making a network namespace: %v", err)
	}
	t.Cleanup(func() {
		close(n.jobs)
		n.File.Close()
	})
	return n
}

// hold is the namespace's thread: it leaves this process's network
// namespace for a new one, brings its loopback up, opens its file, says
// how that went on made, then runs jobs until they are closed. It never
// unlocks: the runtime ends the thread with the goroutine.
func (n *Namespace) hold(made chan<- error) {
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		made <- err
		return
	}
	if err := loopbackUp(); err != nil {
		made <- err
		return
	}
	// Named by the thread's id, not thread-self: a name any thread can
	// open again while this one lives.
	f, err := os.Open(fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid()))
	if err != nil {
		made <- err
		return
	}
	n.File = f
	made <- nil
	for job := range n.jobs {
		job()
	}
}

// loopbackUp sets the flag IFF_UP on the calling thread's lo.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// Do runs fn on the thread in the namespace and returns when it has.
func (n *Namespace) Do(fn func()) {
	done := make(chan struct{})
	n.jobs <- func() { fn(); close(done) }
	<-done
}

// Listen listens on the TCP address addr ("127.0.0.1:0") in the
// namespace; the listener is closed when the test ends.
func (n *Namespace) Listen(t testing.TB, addr string) net.Listener {
	t.Helper()
	var ln net.Listener
	var err error
	n.Do(func() { ln, err = net.Listen("tcp", addr) })
	if err != nil {
		t.Fatalf("listening on %s in the test's network namespace: %v", addr, err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// AnswerEach answers every connection to ln with word and closes it,
// until ln is closed.
func AnswerEach(ln net.Listener, word string) {
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(word))
			c.Close()
		}
	}()
}

// ReadWord reads what the other end of c sends before it closes (five
// seconds at most) and closes c.
func ReadWord(t *testing.T, c net.Conn) string {
	t.Helper()
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
