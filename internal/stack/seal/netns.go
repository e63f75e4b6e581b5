package seal

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// OpenNetNS opens the seal's network namespace, for reading what the
// kernel holds there (its listeners' accept queues) from this process:
// the file bound to it, not through a link, and only when it is one (an
// nsfs file of a network namespace). The caller closes it.
func (s *Seal) OpenNetNS() (*os.File, error) {
	p := s.netFile()
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the seal's network namespace: %w", &os.PathError{Op: "open", Path: p, Err: err})
	}
	f := os.NewFile(uintptr(fd), p)
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil || st.Type != unix.NSFS_MAGIC {
		f.Close()
		return nil, fmt.Errorf("%s is not a namespace (is the seal gone? phptune lab down, then up again)", p)
	}
	if t, err := unix.IoctlRetInt(fd, unix.NS_GET_NSTYPE); err != nil || t != unix.CLONE_NEWNET {
		f.Close()
		return nil, fmt.Errorf("%s is not a network namespace", p)
	}
	return f, nil
}
