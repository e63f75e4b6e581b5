// Package netnsdial makes sockets in another network namespace, so that
// this process reaches a TCP address that exists only there (a sealed
// lab's 127.0.0.1:80) with no veth and no relay process in the path. The
// kernel puts a socket in the network namespace of the thread that calls
// socket(2); connect and every later call work from any thread. So a
// goroutine of its own, locked to its thread, enters the namespace
// (setns), makes the socket and goes back; the caller's thread is never
// switched. Should the way back fail, that goroutine ends still locked
// and the runtime ends its thread with it, rather than hand another
// goroutine a thread in the wrong namespace.
//
// Entering a namespace needs CAP_SYS_ADMIN (phptune runs as root).
package netnsdial

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// ownNetNS is this thread's own network namespace, opened to come back to.
const ownNetNS = "/proc/thread-self/ns/net"

// runInside runs fn on a new goroutine locked to its thread while that
// thread is in the network namespace ns, and returns fn's error, or why
// the thread could not enter the namespace or come back from it. When it
// could not come back, fn's work is done but the error says so: the
// caller undoes it (closes what fn made).
func runInside(ns *os.File, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		own, err := unix.Open(ownNetNS, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("reading this thread's network namespace: %w", err)
			return
		}
		defer unix.Close(own)
		if err := enter(ns); err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		fnErr := fn()
		if err := comeBack(own); err != nil {
			// Still locked: the thread ends with this goroutine.
			done <- errors.Join(fnErr, err)
			return
		}
		runtime.UnlockOSThread()
		done <- fnErr
	}()
	return <-done
}

// enter moves the calling thread (locked to its goroutine) into the
// network namespace ns.
func enter(ns *os.File) error {
	err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET)
	runtime.KeepAlive(ns)
	if err != nil {
		return fmt.Errorf("entering the network namespace %s: %w", ns.Name(), err)
	}
	return nil
}

// comeBack moves the calling thread back to its own network namespace,
// the nsfs file own.
func comeBack(own int) error {
	if err := unix.Setns(own, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("returning to this process's network namespace (the thread that was in the other one is ended): %w", err)
	}
	return nil
}

// Socket makes a socket (socket(2)'s family, type and protocol; add
// SOCK_CLOEXEC to typ) in the network namespace ns and returns its fd.
// The caller closes it.
func Socket(ns *os.File, family, typ, proto int) (int, error) {
	fd := -1
	err := runInside(ns, func() error {
		var err error
		fd, err = unix.Socket(family, typ, proto)
		if err != nil {
			return fmt.Errorf("making a socket in the network namespace %s: %w", ns.Name(), err)
		}
		return nil
	})
	if err != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return -1, err
	}
	return fd, nil
}

// nsID is what tells network namespaces apart: the device and inode of
// their nsfs file.
type nsID struct {
	dev, ino uint64
}

// idOfFD is the identity of the namespace file open as fd.
func idOfFD(fd int) (nsID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nsID{}, err
	}
	return nsID{dev: st.Dev, ino: st.Ino}, nil
}

// idOfFile is the identity of the namespace file ns.
func idOfFile(ns *os.File) (nsID, error) {
	id, err := idOfFD(int(ns.Fd()))
	runtime.KeepAlive(ns)
	if err != nil {
		return nsID{}, fmt.Errorf("reading the network namespace %s: %w", ns.Name(), err)
	}
	return id, nil
}

// socketNetNS is the identity of the network namespace the socket fd was
// made in (the SIOCGSKNS ioctl, Linux 4.9 and later).
func socketNetNS(fd int) (nsID, error) {
	nsfd, err := unix.IoctlRetInt(fd, unix.SIOCGSKNS)
	if err != nil {
		return nsID{}, fmt.Errorf("asking a socket for its network namespace: %w", err)
	}
	defer unix.Close(nsfd)
	return idOfFD(nsfd)
}
