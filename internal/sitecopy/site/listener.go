package site

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/watch/proc"
	"github.com/phptune/phptune/internal/watch/sockq"
)

// holder returns which of pids holds the listening socket at addr
// ("unix:/path" or "tcp:IP:PORT"), by the kernel's table of listening
// sockets (their inodes) and the processes' open files: the word of the
// kernel, not of a configuration file. ok is false when none of them
// does or the table cannot be read.
func holder(fs *proc.FS, pids []int, addr string) (int, bool) {
	a, err := sockq.ParseAddr(addr)
	if err != nil {
		return 0, false
	}
	var ls []sockq.Listener
	if a.Network == "unix" {
		ls, err = sockq.Unix()
	} else {
		ls, err = sockq.TCP()
	}
	if err != nil {
		return 0, false
	}
	inodes := map[uint64]bool{}
	for _, l := range sockq.FindAll(ls, a) {
		inodes[l.Inode] = true
	}
	if len(inodes) == 0 {
		return 0, false
	}
	for _, pid := range pids {
		fdDir := filepath.Join(fs.Root(), strconv.Itoa(pid), "fd")
		ents, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			target, err := os.Readlink(filepath.Join(fdDir, e.Name()))
			if err != nil {
				continue
			}
			s, ok := strings.CutPrefix(target, "socket:[")
			if !ok {
				continue
			}
			if ino, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil && inodes[ino] {
				return pid, true
			}
		}
	}
	return 0, false
}

// listened reports whether anything listens at addr (for a message
// about a process of another account, which phptune does not trust).
func listened(addr string) bool {
	a, err := sockq.ParseAddr(addr)
	if err != nil {
		return false
	}
	var ls []sockq.Listener
	if a.Network == "unix" {
		ls, err = sockq.Unix()
	} else {
		ls, err = sockq.TCP()
	}
	return err == nil && len(sockq.FindAll(ls, a)) > 0
}
