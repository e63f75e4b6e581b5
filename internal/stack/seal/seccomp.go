package seal

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// A sealed process may make sockets of the families a lab's programs use
// and nothing else: AF_UNIX (FastCGI, MariaDB's socket, syslog), AF_INET
// and AF_INET6 (the lab's loopback listeners; every outside address is
// refused by the seal's nftables) and AF_NETLINK (glibc's getaddrinfo asks
// the kernel for the addresses of the interfaces with AI_ADDRCONFIG, and
// if_nameindex, ip(8) and servers read links and routes that way; inside
// the seal's network namespace it shows only that namespace). Every other
// family fails with EAFNOSUPPORT, as on a kernel built without it:
// AF_VSOCK above all (not namespaced: a virtual machine's host agents
// listen there, reachable from any network namespace), AF_PACKET (raw
// frames), AF_ALG (the kernel's crypto), AF_BLUETOOTH, AF_KEY, AF_XDP,
// AF_TIPC, AF_RDS, and families the kernel adds later.
//
// io_uring makes sockets without socket(2) (IORING_OP_SOCKET, Linux 5.19
// on), out of the filter's sight: io_uring_setup(2) fails with ENOSYS, as
// on a kernel without io_uring. The lab's MariaDB, built with liburing,
// then does InnoDB's asynchronous I/O with libaio (its innodb_linux_aio
// "auto"); nothing else of a lab uses io_uring.
//
// The filter is a seccomp BPF program that the confining step installs
// right before it execs (confine.go); it stays across exec and is
// inherited by every child, and no_new_privs, already set, lets an
// unprivileged process keep it. It looks at socket(2) and socketpair(2)
// and io_uring_setup only and lets every other system call through. The program is written
// for x86_64 alone. A system call made with another ABI — i386 through
// int 0x80 (AUDIT_ARCH_I386, where socketcall(2) would get around the
// check) or x32 (AUDIT_ARCH_X86_64 with the x32 bit in its number) —
// kills the process (SECCOMP_RET_KILL_PROCESS): the lab's programs are
// x86_64 binaries, so such a call is code trying to get around the filter,
// and dying makes it plain where a refusal could be overlooked. On another
// architecture the confining step refuses to run anything (exit 126): the
// filter is not written for it, and a lab there would run without it.

// allowedFamilies are the socket families a sealed process may use.
var allowedFamilies = []uint32{unix.AF_UNIX, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}

// Offsets in struct seccomp_data (linux/seccomp.h), what the program
// reads: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
// The kernel loads 32-bit words in the machine's byte order: on x86_64
// the low half of args[0] (socket's int family, all the kernel reads of
// it) is at 16.
const (
	dataNr       = 0
	dataArch     = 4
	dataArg0Low  = 16
	dataSize     = 64
	x32SyscallNr = 0x40000000 // __X32_SYSCALL_BIT
	noSyscallNr  = 0xffffffff // -1: a tracer skipping a system call
)

// socketFilterReturns are the program's answers.
const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retRefuse = unix.SECCOMP_RET_ERRNO | uint32(unix.EAFNOSUPPORT)
	retKill   = unix.SECCOMP_RET_KILL_PROCESS
	retNoSys  = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// socketFilter is the seccomp program: other ABIs are killed; socket and
// socketpair with a family outside allowedFamilies get EAFNOSUPPORT;
// io_uring_setup gets ENOSYS; every other call is allowed. nr -1 (no system call: a tracer's skip,
// answered ENOSYS by the kernel) passes, as libseccomp lets it.
func socketFilter() []bpf.Instruction {
	n := len(allowedFamilies)
	// Indexes of the program's blocks.
	const (
		checkArch   = 1
		checkSocket = 3
		checkPair   = 4
		checkUring  = 5
		checkX32    = 6
		checkNone   = 7
		loadFamily  = 8
		firstFamily = 9
	)
	refuse := firstFamily + n
	allow := refuse + 1
	kill := allow + 1
	noUring := kill + 1
	skip := func(from, to int) uint8 { return uint8(to - from - 1) }

	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: dataArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.AUDIT_ARCH_X86_64, SkipFalse: skip(checkArch, kill)},
		bpf.LoadAbsolute{Off: dataNr, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_SOCKET, SkipTrue: skip(checkSocket, loadFamily)},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_SOCKETPAIR, SkipTrue: skip(checkPair, loadFamily)},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_IO_URING_SETUP, SkipTrue: skip(checkUring, noUring)},
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32SyscallNr, SkipFalse: skip(checkX32, allow)},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: noSyscallNr, SkipTrue: skip(checkNone, allow), SkipFalse: skip(checkNone, kill)},
		bpf.LoadAbsolute{Off: dataArg0Low, Size: 4},
	}
	for i, f := range allowedFamilies {
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: f, SkipTrue: skip(firstFamily+i, allow)})
	}
	return append(prog,
		bpf.RetConstant{Val: retRefuse},
		bpf.RetConstant{Val: retAllow},
		bpf.RetConstant{Val: retKill},
		bpf.RetConstant{Val: retNoSys},
	)
}

// installSocketFilter puts socketFilter on the calling thread (the one
// that execs: the caller has locked it) with seccomp(2). no_new_privs must
// be set already.
func installSocketFilter() error {
	if runtime.GOARCH != "amd64" {
		return fmt.Errorf("the seal's socket filter is written for x86_64 (amd64), not %s: a lab's processes would run without it", runtime.GOARCH)
	}
	raw, err := bpf.Assemble(socketFilter())
	if err != nil {
		return fmt.Errorf("assembling the socket filter: %v", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER) of the socket filter: %v", errno)
	}
	runtime.KeepAlive(filter)
	return nil
}
