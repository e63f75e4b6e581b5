package seal

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompData is struct seccomp_data as the filter sees it. bpf.VM loads
// words in network byte order and the kernel in the machine's (little
// endian on x86_64), so each 32-bit word is written big-endian at its
// offset: the VM then reads the value the kernel would. args[0] is two
// words, its low half first.
func seccompData(arch, nr, arg0 uint64) []byte {
	b := make([]byte, dataSize)
	binary.BigEndian.PutUint32(b[dataNr:], uint32(nr))
	binary.BigEndian.PutUint32(b[dataArch:], uint32(arch))
	binary.BigEndian.PutUint32(b[dataArg0Low:], uint32(arg0))
	binary.BigEndian.PutUint32(b[dataArg0Low+4:], uint32(arg0>>32))
	return b
}

// runFilter is the filter's answer to one system call, run by bpf.VM on
// the program as the kernel gets it (assembled, then read back).
func runFilter(t *testing.T, arch, nr, arg0 uint64) uint32 {
	t.Helper()
	raw, err := bpf.Assemble(socketFilter())
	if err != nil {
		t.Fatal(err)
	}
	prog, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatalf("the assembled filter does not disassemble: %v", prog)
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	ret, err := vm.Run(seccompData(arch, nr, arg0))
	if err != nil {
		t.Fatal(err)
	}
	return uint32(ret)
}

func answer(r uint32) string {
	switch r {
	case retAllow:
		return "allow"
	case retRefuse:
		return "EAFNOSUPPORT"
	case retKill:
		return "kill"
	case retNoSys:
		return "ENOSYS"
	}
	return "unknown"
}

// TestSocketFilterFamilies: socket and socketpair get EAFNOSUPPORT for
// every family but AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK, up to and
// past AF_MAX; only the low 32 bits of the family count (the kernel reads
// an int).
func TestSocketFilterFamilies(t *testing.T) {
	allowed := map[uint64]bool{unix.AF_UNIX: true, unix.AF_INET: true, unix.AF_INET6: true, unix.AF_NETLINK: true}
	for _, nr := range []uint64{unix.SYS_SOCKET, unix.SYS_SOCKETPAIR} {
		for fam := uint64(0); fam <= unix.AF_MAX+2; fam++ {
			want := retRefuse
			if allowed[fam] {
				want = retAllow
			}
			for _, arg := range []uint64{fam, fam | 0xffffffff00000000, fam | 1<<32} {
				if got := runFilter(t, unix.AUDIT_ARCH_X86_64, nr, arg); got != want {
					t.Errorf("syscall %d, family %#x: %s, want %s", nr, arg, answer(got), answer(want))
				}
			}
		}
		for _, fam := range []uint64{0xffffffff, 0x80000000, 0x10000 | unix.AF_INET} {
			if got := runFilter(t, unix.AUDIT_ARCH_X86_64, nr, fam); got != retRefuse {
				t.Errorf("syscall %d, family %#x: %s, want EAFNOSUPPORT", nr, fam, answer(got))
			}
		}
	}
	named := map[string]uint64{"AF_VSOCK": unix.AF_VSOCK, "AF_PACKET": unix.AF_PACKET, "AF_ALG": unix.AF_ALG,
		"AF_BLUETOOTH": unix.AF_BLUETOOTH, "AF_KEY": unix.AF_KEY, "AF_XDP": unix.AF_XDP}
	for name, fam := range named {
		if got := runFilter(t, unix.AUDIT_ARCH_X86_64, unix.SYS_SOCKET, fam); got != retRefuse {
			t.Errorf("socket(%s): %s, want EAFNOSUPPORT", name, answer(got))
		}
	}
}

// TestSocketFilterOthers: io_uring_setup gets ENOSYS; every other x86_64
// system call passes, whatever its first argument; another ABI (i386, x32) or architecture is killed;
// nr -1 (no call) passes.
func TestSocketFilterOthers(t *testing.T) {
	for _, nr := range []uint64{unix.SYS_READ, unix.SYS_CONNECT, unix.SYS_BIND, unix.SYS_SENDTO, unix.SYS_OPENAT,
		unix.SYS_EXECVE, unix.SYS_CLONE3, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER, 460, 0x3fffffff} {
		for _, arg := range []uint64{0, unix.AF_VSOCK, unix.AF_PACKET} {
			if got := runFilter(t, unix.AUDIT_ARCH_X86_64, nr, arg); got != retAllow {
				t.Errorf("x86_64 syscall %d(%d): %s, want allow", nr, arg, answer(got))
			}
		}
	}
	if got := runFilter(t, unix.AUDIT_ARCH_X86_64, unix.SYS_IO_URING_SETUP, 4); got != retNoSys {
		t.Errorf("io_uring_setup: %s, want ENOSYS", answer(got))
	}
	if got := runFilter(t, unix.AUDIT_ARCH_X86_64, 0xffffffff, 0); got != retAllow {
		t.Errorf("nr -1: %s, want allow", answer(got))
	}
	const x32 = x32SyscallNr
	for _, nr := range []uint64{x32 | unix.SYS_SOCKET, x32 | unix.SYS_SOCKETPAIR, x32 | unix.SYS_READ, x32 | 0x3fffffff, 0x80000000, 0xfffffffe} {
		if got := runFilter(t, unix.AUDIT_ARCH_X86_64, nr, unix.AF_VSOCK); got != retKill {
			t.Errorf("x32 or bad syscall %#x: %s, want kill", nr, answer(got))
		}
	}
	// i386 through int 0x80: socketcall is 102, socket 359; another
	// architecture's token.
	for _, arch := range []uint64{unix.AUDIT_ARCH_I386, unix.AUDIT_ARCH_AARCH64, 0} {
		for _, nr := range []uint64{102, 359, unix.SYS_SOCKET, unix.SYS_READ} {
			if got := runFilter(t, arch, nr, unix.AF_INET); got != retKill {
				t.Errorf("arch %#x syscall %d: %s, want kill", arch, nr, answer(got))
			}
		}
	}
}

// TestSocketFilterAssembles: the program assembles within the kernel's
// limits, reads back to the same instructions, every jump inside it.
func TestSocketFilterAssembles(t *testing.T) {
	prog := socketFilter()
	raw, err := bpf.Assemble(prog)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 4096 {
		t.Fatalf("%d instructions, more than BPF_MAXINSNS", len(raw))
	}
	back, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatalf("does not read back: %v", back)
	}
	again, err := bpf.Assemble(back)
	if err != nil || !reflect.DeepEqual(again, raw) {
		t.Errorf("read back and assembled again: %v, %v\nwant %v", again, err, raw)
	}
	for i, r := range raw {
		if r.Op&0x07 == 0x05 && (i+1+int(r.Jt) >= len(raw) || i+1+int(r.Jf) >= len(raw)) { // BPF_JMP
			t.Errorf("instruction %d jumps out of the program: %+v", i, r)
		}
	}
}

// familiesScript tries each family with socket(2) (and socketpair(2)) and
// prints its name and "ok" or the errno's name.
const familiesScript = `import socket, errno
def t(name, fam, typ, pair=False):
    try:
        (socket.socketpair if pair else socket.socket)(fam, typ)
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
t("AF_VSOCK", socket.AF_VSOCK, socket.SOCK_STREAM)
t("AF_PACKET", socket.AF_PACKET, socket.SOCK_RAW)
t("AF_ALG", socket.AF_ALG, socket.SOCK_SEQPACKET)
t("AF_BLUETOOTH", socket.AF_BLUETOOTH, socket.SOCK_STREAM)
t("AF_KEY", 15, socket.SOCK_RAW)
t("AF_XDP", 44, socket.SOCK_RAW)
t("socketpair(AF_VSOCK)", socket.AF_VSOCK, socket.SOCK_STREAM, True)
t("AF_UNIX", socket.AF_UNIX, socket.SOCK_STREAM)
t("AF_INET", socket.AF_INET, socket.SOCK_STREAM)
t("AF_INET6", socket.AF_INET6, socket.SOCK_DGRAM)
t("AF_NETLINK", socket.AF_NETLINK, socket.SOCK_RAW)
t("socketpair(AF_UNIX)", socket.AF_UNIX, socket.SOCK_STREAM, True)
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
print("io_uring_setup", "ok" if libc.syscall(425, 4, params, 0) >= 0 else errno.errorcode[ctypes.get_errno()])
print([l for l in open("/proc/self/status") if l.startswith("Seccomp:")][0].split()[1])
`

func families(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			m[f[0]] = f[1]
		} else if len(f) == 1 {
			m["Seccomp"] = f[0]
		}
	}
	return m
}

// TestSealedSocketFamilies: python3 inside a seal, as the lab's account,
// gets EAFNOSUPPORT from socket(AF_VSOCK), AF_PACKET, AF_ALG,
// AF_BLUETOOTH, AF_KEY, AF_XDP and socketpair(AF_VSOCK), and makes
// AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK sockets and a unix pair, and
// io_uring_setup gets ENOSYS; its
// shell's children are filtered too. The same script run on the host as
// the same account shows which refusals only the filter makes.
func TestSealedSocketFamilies(t *testing.T) {
	needRoot(t)
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("python3 is not installed")
	}
	uid, gid := account(t)
	s := create(t, Spec{Dir: filepath.Join(base(t), "seal")})
	// Through bash, so that a child of the confined process runs it.
	out, err := inside(t, s, uid, gid, "/usr/bin/bash", "-c", python+` -c "$1"`, "bash", familiesScript)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := families(out)

	host := exec.Command(python, "-c", familiesScript)
	host.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	hostOut, err := host.CombinedOutput()
	if err != nil {
		t.Fatalf("on the host: %v: %s", err, hostOut)
	}
	onHost := families(string(hostOut))
	t.Logf("inside: %v; on the host, as the same account: %v", got, onHost)

	for _, name := range []string{"AF_VSOCK", "AF_PACKET", "AF_ALG", "AF_BLUETOOTH", "AF_KEY", "AF_XDP", "socketpair(AF_VSOCK)"} {
		if got[name] != "EAFNOSUPPORT" {
			t.Errorf("inside, %s: %s, want EAFNOSUPPORT", name, got[name])
		}
	}
	if onHost["AF_VSOCK"] != "ok" {
		t.Logf("on the host AF_VSOCK gives %s (no vsock here?): inside, its refusal shows less", onHost["AF_VSOCK"])
	}
	for _, name := range []string{"AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK", "socketpair(AF_UNIX)"} {
		if got[name] != "ok" {
			t.Errorf("inside, %s: %s, want ok", name, got[name])
		}
	}
	if got["io_uring_setup"] != "ENOSYS" {
		t.Errorf("inside, io_uring_setup: %s, want ENOSYS (io_uring makes sockets the filter does not see)", got["io_uring_setup"])
	}
	if got["Seccomp"] != "2" {
		t.Errorf("inside, /proc/self/status Seccomp: %q, want 2 (a filter)", got["Seccomp"])
	}
}

// otherABIScript makes getpid through the i386 ABI (int 0x80 from
// executable memory) or the x32 ABI (its number with the x32 bit), as
// named by its first argument.
const otherABIScript = `import ctypes, mmap, sys
if sys.argv[1] == "i386":
    code = bytes([0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3])  # mov eax, 20; int 0x80; ret
    m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    m.write(code)
    r = ctypes.CFUNCTYPE(ctypes.c_long)(ctypes.addressof(ctypes.c_char.from_buffer(m)))()
else:
    r = ctypes.CDLL(None, use_errno=True).syscall(0x40000000 | 39)
print("survived", r & 0xffffffff)
`

// TestSealedOtherABIKilled: inside a seal, a system call through the i386
// or the x32 ABI kills the process with SIGSYS; the same calls on the host
// return.
func TestSealedOtherABIKilled(t *testing.T) {
	needRoot(t)
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("python3 is not installed")
	}
	uid, gid := account(t)
	s := create(t, Spec{Dir: filepath.Join(base(t), "seal")})
	for _, abi := range []string{"i386", "x32"} {
		host := exec.Command(python, "-c", otherABIScript, abi)
		host.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
		if out, err := host.CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "survived") {
			t.Logf("%s on the host: %v: %s (this kernel cannot run it; inside, the kill shows less)", abi, err, out)
		}
		out, err := inside(t, s, uid, gid, "/usr/bin/bash", "-c", python+` -c "$1" "$2"; echo "status $?"`, "bash", otherABIScript, abi)
		if err != nil {
			t.Fatalf("%s: %v: %s", abi, err, out)
		}
		if !strings.Contains(out, "status 159") || strings.Contains(out, "survived") { // 128 + SIGSYS
			t.Errorf("inside, a call through the %s ABI: %q, want the process killed by SIGSYS (status 159)", abi, out)
		}
	}
}
