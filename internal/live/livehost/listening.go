package livehost

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/watch/proc"
	"github.com/phptune/phptune/internal/watch/sockq"
)

// listeningUnixPaths is the kernel's word on which unix sockets process
// pid listens on: the socket inodes among its open files (/proc/PID/fd
// links "socket:[N]") matched against the listening sockets' table. A
// server's option files say where it should listen; on a machine where
// several servers read the same files (a copy started with --root's
// configuration beside the system's), only this tells them apart. nil
// when the process's files cannot be read (another account's, without
// root) or the table is empty.
func listeningUnixPaths(fs *proc.FS, pid int, listeners []sockq.Listener) []string {
	if len(listeners) == 0 {
		return nil
	}
	byInode := map[uint64]string{}
	for _, l := range listeners {
		if l.Network == "unix" && strings.HasPrefix(l.Address, "/") {
			byInode[l.Inode] = l.Address
		}
	}
	fdDir := filepath.Join(fs.Root(), strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(fdDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(fdDir, e.Name()))
		if err != nil {
			continue
		}
		ino, ok := socketInode(target)
		if !ok {
			continue
		}
		if p, ok := byInode[ino]; ok {
			out = append(out, p)
		}
	}
	return out
}

// socketInode reads the inode of a /proc/PID/fd link to a socket
// ("socket:[12345]").
func socketInode(link string) (uint64, bool) {
	s, ok := strings.CutPrefix(link, "socket:[")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, "]")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}
