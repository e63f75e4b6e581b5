package outdir

import (
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// trusted reports whether files of uid may steer what phptune writes or
// reads: the effective user's, root's and, when running as root under
// sudo, the account in SUDO_UID (which could run anything as root).
func trusted(uid int) bool {
	euid := os.Geteuid()
	if uid == euid || uid == 0 {
		return true
	}
	if euid == 0 {
		if s, err := strconv.Atoi(os.Getenv("SUDO_UID")); err == nil && s == uid {
			return true
		}
	}
	return false
}

// ownerOf is the uid owning a file (-1 when the system does not say).
func ownerOf(st os.FileInfo) int {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid)
	}
	return -1
}

// account names uid for a message: "uid 65534 (nobody)".
func account(uid int) string {
	s := "uid " + strconv.Itoa(uid)
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		s += " (" + u.Username + ")"
	}
	return s
}
