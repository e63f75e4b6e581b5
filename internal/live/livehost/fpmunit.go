package livehost

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// FPMService decides whether systemctl reloads a php-fpm master (pid
// master) rather than a signal to it: only on the host itself (root "/"),
// with systemd as init, when the master's cgroup names a service (unit,
// from SystemdUnit) whose main process is that master (mainPID, as
// systemctl shows it). A master a service did not start (the copy of
// --fpm-config, one started by hand, a php-fpm another service runs as a
// child) is signalled: systemctl would reload another master, or another
// service. "" means no systemd.
func FPMService(root string, systemd bool, unit string, mainPID, master int) string {
	if root != "/" || !systemd || unit == "" || master <= 0 || mainPID != master {
		return ""
	}
	return unit
}

// SystemdRuns reports whether systemd is this machine's init.
func SystemdRuns() bool {
	st, err := os.Stat("/run/systemd/system")
	return err == nil && st.IsDir()
}

// MainService is FPMService's rule for any server's running master pid
// (php-fpm, nginx, MariaDB), read from this machine: systemd as init
// (/run/systemd/system), the master's cgroup and the unit's MainPID. A
// process whose cgroup names a service it is not the main process of
// (one started by hand from a service's shell, a test's copy) is not
// that service's: systemctl would reload or restart another process.
func MainService(ctx context.Context, root string, master int) string {
	systemd := SystemdRuns()
	unit := SystemdUnit("/proc", master)
	if root != "/" || !systemd || unit == "" {
		return ""
	}
	out, err := exec.CommandContext(ctx, "systemctl", "show", "--property=MainPID", "--value", unit+".service").Output()
	if err != nil {
		return ""
	}
	mainPID, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return FPMService(root, systemd, unit, mainPID, master)
}
