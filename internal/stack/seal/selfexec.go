package seal

import (
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Two parts of a seal must run as code of ours inside it, where Go cannot
// enter (a mount namespace cannot be entered by a multi-threaded process):
// confining each process with Landlock before it execs (confine.go), and
// the seal's init, which builds its file system and holds its pid
// namespace (init.go). The binary that imports this package (phptune, or
// a test binary) does both: the seal runs it through nsenter, passed as an
// open file (its path is not inside: a test binary under /tmp, phptune
// itself), with a flag as its first argument, and this package's init
// does the part and exits or execs before main runs.

// confineFlag, as the first argument followed by "--", makes the binary
// confine itself and exec the arguments after "--".
const confineFlag = "--phptune-seal-confine"

// selfFD is the file descriptor the binary has in the child:
// cmd.ExtraFiles[0].
const selfFD = 3

func init() {
	switch {
	case len(os.Args) > 3 && os.Args[1] == confineFlag && os.Args[2] == "--":
		confineAndExec(os.Args[3:])
	case len(os.Args) == 2 && os.Args[1] == initFlag:
		runInit()
	}
}

// closeSelf keeps the binary's file from reaching what it execs.
func closeSelf() {
	if os.Args[0] == selfPath() {
		unix.CloseOnExec(selfFD)
	}
}

// selfPath is how a child names the confining binary it was given.
func selfPath() string { return fmt.Sprintf("/proc/self/fd/%d", selfFD) }

var self struct {
	once sync.Once
	f    *os.File
	err  error
}

// selfFile is this process's own executable, opened once and kept open
// for every Command to pass to its child: inside the seal its path may be
// hidden (a test binary under /tmp) or replaced, the open file is not.
func selfFile() (*os.File, error) {
	self.once.Do(func() {
		f, err := os.Open("/proc/self/exe")
		if err != nil {
			self.err = fmt.Errorf("opening phptune's own executable to confine the seal's processes: %v", err)
			return
		}
		self.f = f
	})
	return self.f, self.err
}
