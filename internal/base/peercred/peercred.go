// Package peercred checks who listens on a unix socket before phptune talks
// to it. A lab's sockets live in a directory its unprivileged account can
// write, so a process of that account could swap a socket for a link to
// another server's (the system MariaDB, which trusts root by its uid): root
// connects, then asks the kernel for the listener's credentials
// (SO_PEERCRED) and sends nothing unless they are the lab account's.
package peercred

import (
	"context"
	"fmt"
	"net"
	"syscall"
)

// Any disables the check (a socket not owned by a lab).
const Any = -1

// Check returns an error unless the process that listens on the other end
// of c runs as uid (c must be a unix socket connection; Any accepts all).
func Check(c net.Conn, uid int) error {
	if uid == Any {
		return nil
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil // TCP carries no credentials; nothing to check
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("reading the credentials of %s's listener: %v", c.RemoteAddr(), serr)
	}
	return CheckFD(cred, uid, c.RemoteAddr().String())
}

// CheckFD compares credentials read from a socket with the uid expected.
func CheckFD(cred *syscall.Ucred, uid int, addr string) error {
	if uid == Any || int(cred.Uid) == uid {
		return nil
	}
	return fmt.Errorf("refusing to talk to %s: its listener runs as uid %d (pid %d), not as the lab's account (uid %d); the socket was replaced", addr, cred.Uid, cred.Pid, uid)
}

// Dial connects to network/address and, for a unix socket, checks that its
// listener runs as uid before returning the connection.
func Dial(ctx context.Context, network, address string, uid int) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	if err := Check(c, uid); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// FromFD reads SO_PEERCRED from a raw socket descriptor (the load
// generator's own connections).
func FromFD(fd int) (*syscall.Ucred, error) {
	return syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
}

// Creds returns the credentials (pid, uid, gid) of the process that
// listens on the other end of c, a unix socket connection.
func Creds(c net.Conn) (*syscall.Ucred, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, fmt.Errorf("%s is not a unix socket: it carries no credentials", c.RemoteAddr())
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	if serr != nil {
		return nil, fmt.Errorf("reading the credentials of %s's listener: %v", c.RemoteAddr(), serr)
	}
	return cred, nil
}
