package seal

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A network and a mount namespace do not separate a lab's processes from
// the host's processes of the same account: through /proc/PID/root of any
// such process (nginx makes its workers dumpable) a process inside reaches
// the host's whole file system — the production MariaDB socket, the real
// docroot — and it may signal them. So every process Command starts is
// first confined with Landlock: a process in a Landlock domain cannot read
// /proc/PID/root, cwd, fd or environ of a process outside its domain (any
// kernel with Landlock, Linux 5.13 on), and, from Landlock ABI 6 (Linux
// 6.12), cannot signal it nor connect to an abstract unix socket made
// outside it. The confinement is done by the binary that imports this
// package (phptune, or a test binary): Command runs it, passed as an open
// file, with confineFlag; its init confines the process and execs the rest
// of its arguments (see selfexec.go). Each Command makes its own domain: a process of one
// cannot signal one started by another Command (a server's own children
// share its domain), so the lab signals its servers from outside, as root.

// confineAndExec confines this process and execs args; it never returns.
// Any failure ends the process with status 126 before args run: a process
// that could not be confined never starts.
func confineAndExec(args []string) {
	runtime.LockOSThread() // Landlock confines the calling thread; it execs
	closeSelf()
	if !inSealPID() {
		fmt.Fprintf(os.Stderr, "phptune: %s was not started in the seal's pid namespace (start it with (*seal.Seal).Start); it does not run\n", args[0])
		os.Exit(126)
	}
	if err := confine(); err != nil {
		fmt.Fprintf(os.Stderr, "phptune: confining %s inside the seal: %v\n", args[0], err)
		os.Exit(126)
	}
	// Last, right before exec: the socket filter (seccomp.go) binds
	// only what args run, not the confining step itself.
	if err := installSocketFilter(); err != nil {
		fmt.Fprintf(os.Stderr, "phptune: confining %s inside the seal: %v\n", args[0], err)
		os.Exit(126)
	}
	err := syscall.Exec(args[0], args, os.Environ())
	fmt.Fprintf(os.Stderr, "phptune: running %s inside the seal: %v\n", args[0], err)
	os.Exit(126)
}

// landlockABI is the kernel's Landlock ABI version, 0 when it has none.
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// errNoLandlock is returned when the kernel cannot confine the seal's
// processes.
var errNoLandlock = errors.New("the kernel has no Landlock (Linux 5.13 or later with landlock in its lsm= boot parameter): a sealed lab's processes could reach the host's processes of their account through /proc; boot a kernel with Landlock enabled")

// confine puts the calling thread in a new Landlock domain that denies
// making block devices (a right nothing in a lab uses: a domain must
// handle one) and, where the kernel can, signals and abstract unix
// sockets across its boundary. Being in a domain is what cuts /proc/PID
// access to processes outside it.
func confine() error {
	abi := landlockABI()
	if abi < 1 {
		return errNoLandlock
	}
	attr := unix.LandlockRulesetAttr{Handled_access_fs: unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK}
	if abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %v", errno)
	}
	defer unix.Close(int(fd))
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %v", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %v", errno)
	}
	return nil
}

// Available says whether a seal can be made here: it needs root and a
// kernel with Landlock. Callers refuse a sealed lab with its error before
// anything starts (Create checks the same again).
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("sealing a lab needs root (namespaces and mounts); run phptune as root")
	}
	if landlockABI() < 1 {
		return errNoLandlock
	}
	return nil
}

// LandlockABI is the kernel's Landlock ABI version (0: none). From 6
// (Linux 6.12) a sealed process cannot signal processes outside its
// domain; before, only /proc access to them is cut.
func LandlockABI() int { return landlockABI() }
