package proc

import (
	"bytes"
	"fmt"
)

// CPUTimes are the machine's cumulative CPU times from /proc/stat in
// seconds, summed over all cores.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal float64
}

// Total is the sum of all the fields. Guest time is not added: the kernel
// already counts it in user time.
func (c CPUTimes) Total() float64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// Machine is the whole machine at one instant.
type Machine struct {
	CPU CPUTimes
	// Cores is the number of cpuN lines in /proc/stat.
	Cores int
	// ProcsRunning is the run queue: runnable threads, the reader itself
	// included.
	ProcsRunning    uint64
	ProcsBlocked    uint64
	ContextSwitches uint64
	MemTotal        int64
	MemAvailable    int64
	SwapTotal       int64
	SwapFree        int64
}

// ReadMachine reads /proc/stat and /proc/meminfo (ReadMeminfo).
func (p *FS) ReadMachine() (Machine, error) {
	var m Machine
	st, err := p.lib.Stat()
	if err != nil {
		return m, fmt.Errorf("reading %s/stat: %w", p.proc, err)
	}
	c := st.CPUTotal
	m.CPU = CPUTimes{User: c.User, Nice: c.Nice, System: c.System, Idle: c.Idle, IOWait: c.Iowait,
		IRQ: c.IRQ, SoftIRQ: c.SoftIRQ, Steal: c.Steal}
	m.Cores = len(st.CPU)
	m.ProcsRunning = st.ProcessesRunning
	m.ProcsBlocked = st.ProcessesBlocked
	m.ContextSwitches = st.ContextSwitches
	mi, err := p.ReadMeminfo()
	if err != nil {
		return m, err
	}
	m.MemTotal, m.MemAvailable, m.SwapTotal, m.SwapFree = mi.Total, mi.Available, mi.SwapTotal, mi.SwapFree
	return m, nil
}

// Meminfo is the machine's memory and swap from /proc/meminfo, in bytes (0
// for a line the kernel does not write).
type Meminfo struct {
	Total, Available, SwapTotal, SwapFree int64
}

// ReadMeminfo reads /proc/meminfo. It is phptune's one reader of that file:
// the observer's samples, the environment a result records and a tune's
// memory budget all come from it.
func (p *FS) ReadMeminfo() (Meminfo, error) {
	mi, err := p.lib.Meminfo()
	if err != nil {
		return Meminfo{}, fmt.Errorf("reading %s/meminfo: %w", p.proc, err)
	}
	get := func(v *uint64) int64 {
		if v == nil {
			return 0
		}
		return int64(*v)
	}
	return Meminfo{Total: get(mi.MemTotalBytes), Available: get(mi.MemAvailableBytes),
		SwapTotal: get(mi.SwapTotalBytes), SwapFree: get(mi.SwapFreeBytes)}, nil
}

// SystemMeminfo is ReadMeminfo on the running system's /proc, for callers
// that keep no FS.
func SystemMeminfo() (Meminfo, error) {
	fs, err := Default()
	if err != nil {
		return Meminfo{}, err
	}
	return fs.ReadMeminfo()
}

// ReadCmdline returns /proc/PID/cmdline with NULs as spaces, trimmed. php-fpm
// and nginx rewrite their argv in place ("php-fpm: pool www", "nginx: worker
// process") and pad it with spaces or NULs.
func (p *FS) ReadCmdline(pid int) (string, error) {
	b, err := p.readPID(pid, "cmdline")
	if err != nil {
		return "", err
	}
	return string(bytes.TrimSpace(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))), nil
}
