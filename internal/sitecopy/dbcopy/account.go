package dbcopy

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Account is the unprivileged account the client programs run as: the
// lab's. The zero value is the account phptune runs as, refused when that
// is root.
type Account struct {
	Name     string
	UID, GID uint32
	// Start starts a prepared command, for a caller that puts it in the
	// lab's cgroup and records its pid (the lab's startCapped); nil is
	// cmd.Start.
	Start func(cmd *exec.Cmd) error
}

// sysProcAttr starts a client as a, in its own session.
func (a Account) sysProcAttr() (*syscall.SysProcAttr, error) {
	attr := &syscall.SysProcAttr{Setsid: true}
	if os.Geteuid() != 0 {
		if a.Name != "" && a.UID != uint32(os.Geteuid()) {
			return nil, fmt.Errorf("only root can run the database copy as %s; run phptune as root, or as %s", a.Name, a.Name)
		}
		return attr, nil
	}
	if a.UID == 0 || a.GID == 0 {
		return nil, errors.New("the database copy's client programs never run as root (the dump is the site's data): give the lab's unprivileged account")
	}
	attr.Credential = &syscall.Credential{Uid: a.UID, Gid: a.GID, Groups: []uint32{}}
	return attr, nil
}

// optionFD is the descriptor the option file reaches a client on.
const optionFD = 3

// clientCommand prepares bin to run as a with the option file conf as
// its only one: a pipe owned by a, read at /dev/fd/3. The pipe is filled
// and closed before the program starts (an option file is far below a
// pipe's buffer), so conf is nowhere else: not on disk, not in argv or the
// environment.
func (a Account) clientCommand(bin string, conf string, args ...string) (*exec.Cmd, error) {
	attr, err := a.sysProcAttr()
	if err != nil {
		return nil, err
	}
	if len(conf) > 16<<10 {
		return nil, errors.New("the client option file is too large for its pipe")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if attr.Credential != nil {
		// The pipe is root's, mode 0600: the client opens it again by
		// /dev/fd/3, as its own account.
		if err := unix.Fchown(int(r.Fd()), int(a.UID), int(a.GID)); err != nil {
			r.Close()
			return nil, fmt.Errorf("handing the option pipe to %s: %v", a.Name, err)
		}
	}
	if _, err := w.WriteString(conf); err != nil {
		r.Close()
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{"--defaults-file=/dev/fd/" + strconv.Itoa(optionFD)}, args...)...)
	cmd.SysProcAttr = attr
	cmd.ExtraFiles = []*os.File{r} // fd 3
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/nonexistent", "LC_ALL=C.UTF-8"}
	cmd.Dir = "/"
	return cmd, nil
}

// closeExtra closes the parent's end of the option pipe once the child
// has it.
func closeExtra(cmd *exec.Cmd) {
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
}
