package seal

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// readOnlyHost makes every mount of the calling process's mount namespace
// read-only, recursively from /, but /dev and /proc (a process writes
// /dev/null and its own /proc/self files): run inside a new seal's mount
// namespace before the seal mounts its own (fresh tmpfs, binds, the
// docroot's overlay), so that a lab's processes can write nowhere of the
// host's, even where their account may (another site of the same owner,
// /var/lib/php/sessions), but in what the seal gives them.
func readOnlyHost() error {
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(-1, "/", unix.AT_RECURSIVE, &ro); err != nil {
		return fmt.Errorf("mount_setattr(/, read-only, recursive): %v", err)
	}
	rw := unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}
	for _, p := range []string{"/dev", "/dev/pts", "/proc"} {
		if err := unix.MountSetattr(-1, p, 0, &rw); err != nil && err != unix.EINVAL {
			return fmt.Errorf("mount_setattr(%s, read-write): %v", p, err)
		}
	}
	return nil
}
