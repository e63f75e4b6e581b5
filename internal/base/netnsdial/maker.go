package netnsdial

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrMakerClosed is what Take returns once the SocketMaker is closed.
var ErrMakerClosed = errors.New("the socket maker is closed")

// madeSocket is one result of the maker's thread: a socket's fd, or the
// errno socket(2) failed with (fd is then -1).
type madeSocket struct {
	fd    int
	errno syscall.Errno
}

// SocketMaker makes sockets in a network namespace ahead of need, for a
// hot path that opens a connection per request (the load generator
// without keep-alive): one goroutine locked to its thread stays in the
// namespace for the maker's life and keeps a buffer of raw non-blocking
// close-on-exec stream sockets filled. No other goroutine ever runs on
// that thread. Takers wake the thread only when the buffer is half empty,
// so a socket costs a channel receive, not a thread switch.
type SocketMaker struct {
	family int
	// made holds the sockets ready to take; the maker's goroutine is its
	// only sender, and Close closes it once that goroutine has ended.
	made chan madeSocket
	// lowMark: a Take that leaves this many sockets or fewer in made
	// wakes the maker (through low, which holds at most one wake-up).
	lowMark int
	low     chan struct{}
	stop    chan struct{}
	// ended receives the maker goroutine's last word: nil, or why its
	// thread could not return to this process's network namespace.
	ended     chan error
	closeOnce sync.Once
	closeErr  error
}

// NewSocketMaker starts a maker of sockets of family (unix.AF_INET or
// AF_INET6) in the network namespace ns, holding up to buffer of them
// ready (at least 1). It returns once its thread is in the namespace, or
// why it could not get there. The maker keeps no reference to ns once it
// has entered it. Close it to free its thread and sockets.
func NewSocketMaker(ns *os.File, family, buffer int) (*SocketMaker, error) {
	buffer = max(buffer, 1)
	m := &SocketMaker{
		family:  family,
		made:    make(chan madeSocket, buffer),
		lowMark: buffer / 2,
		low:     make(chan struct{}, 1),
		stop:    make(chan struct{}),
		ended:   make(chan error, 1),
	}
	entered := make(chan error, 1)
	go m.run(ns, entered)
	if err := <-entered; err != nil {
		return nil, err
	}
	return m, nil
}

// run is the maker's goroutine: it enters ns on a thread of its own,
// tells entered how that went, then fills the buffer whenever a taker
// says it runs low, until Close; then it takes its thread back (or ends
// it, still locked, when it cannot).
func (m *SocketMaker) run(ns *os.File, entered chan<- error) {
	runtime.LockOSThread()
	own, err := unix.Open(ownNetNS, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		entered <- fmt.Errorf("reading this thread's network namespace: %w", err)
		return
	}
	defer unix.Close(own)
	if err := enter(ns); err != nil {
		runtime.UnlockOSThread()
		entered <- err
		return
	}
	entered <- nil
	for {
		m.fill()
		select {
		case <-m.low:
		case <-m.stop:
			m.leave(own)
			return
		}
	}
}

// leave takes the maker's thread back to this process's network
// namespace and unlocks it, or leaves it locked (so the runtime ends it)
// when it cannot, and reports which to Close.
func (m *SocketMaker) leave(own int) {
	if err := comeBack(own); err != nil {
		m.ended <- err
		return
	}
	runtime.UnlockOSThread()
	m.ended <- nil
}

// fill makes sockets until the buffer is full or socket(2) fails (the
// failure is queued for one taker, then the maker waits for the next
// wake-up rather than spin).
func (m *SocketMaker) fill() {
	for len(m.made) < cap(m.made) {
		fd, _, e := unix.RawSyscall(unix.SYS_SOCKET, uintptr(m.family), unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		s := madeSocket{fd: int(fd), errno: e}
		if e != 0 {
			s.fd = -1
		}
		select {
		case m.made <- s:
		default: // full (takers do not add): drop the spare one
			if s.fd >= 0 {
				unix.Close(s.fd)
			}
			return
		}
		if e != 0 {
			return
		}
	}
}

// Take returns a socket made in the namespace, waiting for one if none is
// ready; the caller owns it. It returns socket(2)'s errno when the maker
// could not make one, and ErrMakerClosed after Close. Any number of
// goroutines may take at once.
func (m *SocketMaker) Take() (int, error) {
	s, ok := <-m.made
	if !ok {
		return -1, ErrMakerClosed
	}
	if len(m.made) <= m.lowMark {
		select {
		case m.low <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
	if s.errno != 0 {
		return -1, s.errno
	}
	return s.fd, nil
}

// Close stops the maker, returns its thread to this process's network
// namespace (or ends the thread when that fails, and says so) and closes
// the sockets no one took. Takes waiting then, and later ones, get
// ErrMakerClosed. Closing twice returns the first result.
func (m *SocketMaker) Close() error {
	m.closeOnce.Do(func() {
		close(m.stop)
		m.closeErr = <-m.ended
		close(m.made)
		for s := range m.made {
			if s.fd >= 0 {
				unix.Close(s.fd)
			}
		}
	})
	return m.closeErr
}
