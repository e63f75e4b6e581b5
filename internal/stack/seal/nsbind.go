package seal

import (
	"context"
	"io"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// unshareBound runs util-linux's unshare with args that bind the new
// namespaces to files (--mount=FILE...), pinned to one CPU after another
// until the binding takes; undo unbinds what a failed try left.
//
// Why: the kernel binds a mount namespace to a file only when that
// namespace is newer than the binder's own (it refuses a loop with
// EINVAL), and it tells newer by the namespaces' ids. Since Linux 6.18
// those ids come from per-CPU batches, so a namespace made on one CPU can
// carry a lower id than an older one made on another. Run in a mount
// namespace of its own (a container, a test harness), unshare then fails
// every time on the CPUs whose batch is behind, and succeeds every time on
// the CPU that made the binder's namespace (measured on this 2-core
// machine: 6 of 6 failed on one CPU, 6 of 6 took on the other). One try
// per allowed CPU therefore always finds one that takes.
func unshareBound(ctx context.Context, stdin func() io.Reader, undo func(), args ...string) error {
	err := run(ctx, stdin(), "unshare", args...)
	if err == nil || !strings.Contains(err.Error(), "Invalid argument") {
		return err
	}
	for _, cpu := range allowedCPUs() {
		undo()
		err = run(ctx, stdin(), "taskset", append([]string{"--cpu-list", strconv.Itoa(cpu), tool("unshare")}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "Invalid argument") {
			return err
		}
	}
	return err
}

// allowedCPUs are the CPUs this process may run on, in order.
func allowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cpus []int
	for cpu := 0; cpu < len(set)*64 && len(cpus) < set.Count(); cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}
