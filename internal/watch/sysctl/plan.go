package sysctl

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// Need is what a run, or a recommendation, asks of the kernel.
type Need struct {
	// Backlog is the largest listen backlog asked for; TCPBacklog the
	// largest of a TCP listener.
	Backlog, TCPBacklog int64
	// Connections is the concurrency: the client connections held at
	// once.
	Connections int
}

// NeedOf is what configurations cfgs ask for at conns connections.
func NeedOf(cfgs []knob.Config, conns int) Need {
	n := Need{Connections: conns}
	for _, c := range cfgs {
		for _, b := range c.Backlogs() {
			n.Backlog = max(n.Backlog, b.Value)
			if b.TCP {
				n.TCPBacklog = max(n.TCPBacklog, b.Value)
			}
		}
	}
	return n
}

// PortsNeeded is the ephemeral ports conns connections may hold on one
// host: each of the generator's connections holds one, and so may the
// web server's connection to php-fpm over TCP for it; 1024 are left for
// everything else.
func PortsNeeded(conns int) int64 { return 2*int64(conns) + 1024 }

// FilesNeeded is the open files conns connections may take on one host:
// the generator's socket, the web server's client and upstream sockets,
// php-fpm's accepted one; 4096 are left for everything else.
func FilesNeeded(conns int) int64 { return 4*int64(conns) + 4096 }

// PerProcessFilesNeeded is the open files one process may need: an nginx
// worker holding every client connection and its upstream one.
func PerProcessFilesNeeded(conns int) int64 { return 2*int64(conns) + 64 }

// Plan lists the settings of cur that fall short of need, each with a
// value that meets it. Nothing is ever lowered, and a setting that could
// not be read is not planned. tcp_tw_reuse is never planned: it changes
// TCP's behaviour rather than a limit.
func Plan(cur Values, need Need) []results.SysctlChange {
	var out []results.SysctlChange
	atLeast := func(name string, want int64) {
		if have, ok := cur.Int(name); ok && want > have {
			out = append(out, results.SysctlChange{Name: name, From: cur[name], To: strconv.FormatInt(want, 10)})
		}
	}
	atLeast(Somaxconn, need.Backlog)
	atLeast(TCPMaxSynBacklog, need.TCPBacklog)
	if lo, hi, ok := cur.Ports(); ok && need.Connections > 0 {
		want := PortsNeeded(need.Connections)
		if hi-lo+1 < want {
			// Widen downwards first (the top is usually 60999, below the
			// ports some services take), never into the privileged ones.
			nlo := max(1024, hi-want+1)
			nhi := max(hi, min(65535, nlo+want-1))
			if nlo < lo || nhi > hi {
				out = append(out, results.SysctlChange{Name: PortRange, From: cur[PortRange], To: fmt.Sprintf("%d %d", min(lo, nlo), nhi)})
			}
		}
	}
	if need.Connections > 0 {
		atLeast(FileMax, FilesNeeded(need.Connections))
		atLeast(NrOpen, PerProcessFilesNeeded(need.Connections))
	}
	return out
}

// FragmentPath is where the sysctl fragment is installed: /etc/sysctl.d/
// files are read in name order, and 60- comes after Debian's and
// systemd's own (10-, 50-) and before a local 99-sysctl.conf.
const FragmentPath = "/etc/sysctl.d/60-phptune.conf"

// Fragment is the recommendation for the kernel: the settings of cur
// that fall short of need (Plan), in sysctl.conf syntax, with how to
// apply them; or, when none does, a file of comments saying nothing is
// needed and why.
func Fragment(cur Values, need Need) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	changes := Plan(cur, need)
	what := fmt.Sprintf("listen backlogs up to %d", need.Backlog)
	if need.Connections > 0 {
		what = fmt.Sprintf("%d connections, %s", need.Connections, what)
	}
	w("# phptune recommendation: kernel settings (%s).", what)
	if len(changes) == 0 {
		w("# Nothing to change: this host's limits already hold the recommendation.")
		for _, line := range sufficient(cur, need) {
			w("#   %s", line)
		}
		return b.String()
	}
	w("# listen(2) silently caps every backlog at net.core.somaxconn, so a larger")
	w("# backlog in php-fpm's or the web server's configuration has no effect without it.")
	w("# Save as %s, then apply it without a reboot:", FragmentPath)
	w("#   sysctl -p %s", FragmentPath)
	w("# and restart the web server and php-fpm: a socket keeps the backlog it was opened with.")
	// sysctl.d has no end-of-line comments (the rest of the line is the
	// value): each setting's previous value goes on the line above.
	for _, c := range changes {
		w("# phptune: was %s", c.From)
		w("%s = %s", c.Name, c.To)
	}
	if have, ok := cur.Int(TCPSyncookies); ok && have != 0 && contains(changes, TCPMaxSynBacklog) {
		w("# (tcp_max_syn_backlog matters only while SYN cookies are off; tcp_syncookies is %d here.)", have)
	}
	return b.String()
}

// sufficient says, setting by setting, why cur holds need.
func sufficient(cur Values, need Need) []string {
	var out []string
	if v, ok := cur.Int(Somaxconn); ok {
		out = append(out, fmt.Sprintf("%s %d >= the largest listen backlog (%d)", Somaxconn, v, need.Backlog))
	}
	if v, ok := cur.Int(TCPMaxSynBacklog); ok && need.TCPBacklog > 0 {
		out = append(out, fmt.Sprintf("%s %d >= the largest TCP listen backlog (%d)", TCPMaxSynBacklog, v, need.TCPBacklog))
	}
	if need.Connections > 0 {
		if lo, hi, ok := cur.Ports(); ok {
			out = append(out, fmt.Sprintf("%s %d-%d: %d ports >= %d", PortRange, lo, hi, hi-lo+1, PortsNeeded(need.Connections)))
		}
		if v, ok := cur.Int(FileMax); ok {
			out = append(out, fmt.Sprintf("%s %d >= %d open files", FileMax, v, FilesNeeded(need.Connections)))
		}
		if v, ok := cur.Int(NrOpen); ok {
			out = append(out, fmt.Sprintf("%s %d >= %d open files per process", NrOpen, v, PerProcessFilesNeeded(need.Connections)))
		}
	}
	return out
}

func contains(cs []results.SysctlChange, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}
