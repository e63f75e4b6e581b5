package load

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/base/cpulist"
)

// Raw non-blocking syscalls for the hot path. They never block, so they
// need not tell the Go scheduler (RawSyscall skips entersyscall/exitsyscall,
// which is a measurable share of a 2-syscall request).

//
// recvfrom and sendto rather than read and write: they go straight to the
// socket layer, skipping the VFS (fdget_pos, rw_verify_area, fsnotify),
// and MSG_NOSIGNAL turns a write to a reset connection into EPIPE without
// a SIGPIPE for the runtime's signal handler to swallow.

func rawRead(fd int, b []byte) (int, syscall.Errno) {
	n, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), unix.MSG_DONTWAIT, 0, 0)
	return int(n), e
}

func rawWrite(fd int, b []byte) (int, syscall.Errno) {
	n, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, 0, 0)
	return int(n), e
}

// epollWait waits for events with a nanosecond timeout (epoll_pwait2,
// Linux 5.11; older kernels fall back to epoll_wait's milliseconds, rounded
// up). timeoutNs < 0 blocks until an event.
//
// It is a raw syscall even though it blocks: telling the scheduler about
// every wait (entersyscall) let the runtime's sysmon take the P away from a
// loop that had waited in the kernel on and off for 10 ms; every such
// retake reset sysmon to polling every 20 µs, and its nanosleep wake-ups
// alone cost 10-15% of the generator's CPU (perf: runtime.usleep under
// runtime.sysmon), on top of futex hand-offs of the P. Run gives the loops one P each plus one spare
// (GOMAXPROCS = threads + 1), so the rest of the program keeps running, and
// the runtime's preemption signal interrupts the wait (EINTR) when it needs
// the loop to stop for a garbage collection.
func epollWait(epfd int, events []unix.EpollEvent, timeoutNs int64, pwait2 *bool) (int, error) {
	if *pwait2 {
		var ts *unix.Timespec
		if timeoutNs >= 0 {
			t := unix.NsecToTimespec(timeoutNs)
			ts = &t
		}
		n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(unsafe.Pointer(ts)), 0, 0)
		if e != unix.ENOSYS {
			if e != 0 {
				return 0, e
			}
			return int(n), nil
		}
		*pwait2 = false
	}
	ms := -1
	if timeoutNs >= 0 {
		ms = int((timeoutNs + 999999) / 1000000)
	}
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_WAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(ms), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// CPUTime is the CPU time (user + system) this process has used, in seconds.
func CPUTime() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// usableCPUs is the number of CPUs the process may run on (its affinity
// mask), which is what --cpus restricts.
func usableCPUs() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil && set.Count() > 0 {
		return set.Count()
	}
	return 1
}

// PinProcess restricts every thread of this process (and so every thread it
// creates later, which inherits its creator's mask) to cpus. Go has no
// process-wide affinity call: sched_setaffinity applies to one thread, so
// each thread in /proc/self/task is pinned.
func PinProcess(cpus []int) error {
	var set unix.CPUSet
	online := onlineCPUs()
	for _, c := range cpus {
		if online > 0 && c >= online {
			return fmt.Errorf("CPU %d does not exist (this machine has CPUs 0-%d)", c, online-1)
		}
		set.Set(c)
	}
	tasks, err := filepath.Glob("/proc/self/task/*")
	if err != nil || len(tasks) == 0 {
		return unix.SchedSetaffinity(0, &set)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(filepath.Base(t))
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("pin thread %d to CPUs %v: %w", tid, cpus, err)
		}
	}
	return nil
}

// onlineCPUs is one more than the highest online CPU, 0 when unknown.
func onlineCPUs() int {
	cpus, _, err := cpulist.Online()
	if err != nil || len(cpus) == 0 {
		return 0
	}
	return cpus[len(cpus)-1] + 1
}

// CheckFDLimit makes sure connections sockets fit under RLIMIT_NOFILE,
// raising the soft limit to the hard one if that is enough, and says what to
// do when it is not.
func CheckFDLimit(connections int) error {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return nil
	}
	need := uint64(connections) + 64 // stdio, epoll, the runtime, /proc reads
	if rl.Cur >= need {
		return nil
	}
	if rl.Max >= need {
		rl.Cur = rl.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &rl); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%d connections need about %d file descriptors but the limit is %d (hard limit %d); raise it with: ulimit -n %d (as root, or in /etc/security/limits.conf), or use fewer connections",
		connections, need, rl.Cur, rl.Max, need)
}

// cpuTimes reads the machine's total and idle jiffies from /proc/stat.
func cpuTimes() (total, idle uint64) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, 0
	}
	fields := bytes.Fields(sc.Bytes())
	if len(fields) < 5 || string(fields[0]) != "cpu" {
		return 0, 0
	}
	for i, v := range fields[1:] {
		n, _ := strconv.ParseUint(string(v), 10, 64)
		if i == 7 { // steal: time another VM had, not ours to use
			continue
		}
		if i >= 8 { // guest time is already counted in user
			break
		}
		total += n
		if i == 3 || i == 4 { // idle, iowait
			idle += n
		}
	}
	return total, idle
}

// rawAddr is a socket address as the kernel reads it (struct sockaddr_in,
// sockaddr_in6 or sockaddr_un), encoded once per run so that connect can
// be a raw syscall.
type rawAddr []byte

func newRawAddr(sa unix.Sockaddr) (rawAddr, error) {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		b := make([]byte, unix.SizeofSockaddrInet4)
		binary.NativeEndian.PutUint16(b[0:], unix.AF_INET)
		binary.BigEndian.PutUint16(b[2:], uint16(a.Port))
		copy(b[4:8], a.Addr[:])
		return b, nil
	case *unix.SockaddrInet6:
		b := make([]byte, unix.SizeofSockaddrInet6)
		binary.NativeEndian.PutUint16(b[0:], unix.AF_INET6)
		binary.BigEndian.PutUint16(b[2:], uint16(a.Port))
		copy(b[8:24], a.Addr[:])
		binary.NativeEndian.PutUint32(b[24:], a.ZoneId)
		return b, nil
	case *unix.SockaddrUnix:
		name := a.Name
		if len(name) == 0 || len(name) >= 108 {
			return nil, fmt.Errorf("unix socket path %q: want 1 to 107 bytes", name)
		}
		b := make([]byte, 2+len(name)+1) // with the terminating NUL
		binary.NativeEndian.PutUint16(b[0:], unix.AF_UNIX)
		copy(b[2:], name)
		if name[0] == '@' { // abstract: a leading NUL, no terminator
			b[2] = 0
			b = b[:len(b)-1]
		}
		return b, nil
	}
	return nil, fmt.Errorf("unsupported socket address %T", sa)
}

func rawSocket(family int) (int, syscall.Errno) {
	fd, _, e := unix.RawSyscall(unix.SYS_SOCKET, uintptr(family), unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	return int(fd), e
}

// rawConnect starts a non-blocking connect. On loopback the kernel runs
// the whole handshake inside this call, which can take long enough for the
// runtime's sysmon to retake the loop's P were it a scheduler-aware call.
func rawConnect(fd int, a rawAddr) syscall.Errno {
	_, _, e := unix.RawSyscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&a[0])), uintptr(len(a)))
	return e
}

func rawClose(fd int) {
	unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
}

func rawEpollCtl(epfd, op, fd int, ev *unix.EpollEvent) syscall.Errno {
	_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(epfd), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(ev)), 0, 0)
	return e
}
