package seal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The seal's init is this package's binary run with initFlag as pid 1 of
// the seal's new pid namespace, inside its network, mount and IPC
// namespaces (Create starts it through nsenter with CLONE_NEWPID). It reads
// the plan of the seal's file system (root.go) on its standard input,
// builds the new root in the mount namespace and pivots into it, mounts
// the pid namespace's /proc there, answers "ok" on its standard output
// (or the error) and then stays, root and idle, as the namespace's init:
// a pid namespace takes new processes only while its init lives, and
// init reaps the orphans of the lab's processes. Killing it (Destroy)
// kills every process of the namespace.

// initFlag, as the only argument, makes the binary the seal's init.
const initFlag = "--phptune-seal-init"

// initRequest is what Create sends the init: where to build the new root
// (a directory of the host, seen in the mount namespace) and the plan.
type initRequest struct {
	Root  string `json:"root"`
	Steps []step `json:"steps"`
}

// runInit is the init's life; it never returns.
func runInit() {
	fail := func(err error) {
		fmt.Fprintf(os.Stdout, "phptune: the seal's init: %v\n", err)
		os.Exit(1)
	}
	if os.Getpid() != 1 {
		fail(errors.New("not the first process of a new pid namespace"))
	}
	var req initRequest
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fail(fmt.Errorf("reading the plan: %v", err))
	}
	unix.Umask(0o022)
	if err := buildRoot(req.Root, req.Steps); err != nil {
		fail(err)
	}
	// Signals a stray kill(1) of the host might send do not end the
	// seal; SIGKILL (Destroy) does.
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGPIPE)
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	os.Stdout.WriteString("ok\n")
	if null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0); err == nil {
		for fd := 0; fd <= 2; fd++ {
			_ = unix.Dup3(null, fd, 0)
		}
		unix.Close(null)
	}
	unix.Close(selfFD)
	for {
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WALL, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
		<-children
	}
}

// buildRoot mounts a fresh tmpfs at root, carries out steps inside it,
// makes it read-only and pivots the mount namespace into it, detaching
// the host's tree.
func buildRoot(root string, steps []step) error {
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=4m"); err != nil {
		return fmt.Errorf("mounting the new root at %s: %v", root, err)
	}
	for _, s := range steps {
		if err := s.apply(root); err != nil {
			return err
		}
	}
	if err := unix.Mount("", root, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("making the new root read-only: %v", err)
	}
	if err := unix.Chdir(root); err != nil {
		return err
	}
	// The new root stacks the old one on itself; detaching the top of
	// the stack then leaves the new root alone at /.
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root into %s: %v", root, err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the host's tree: %v", err)
	}
	return unix.Chdir("/")
}

// apply carries out one step inside root.
func (s step) apply(root string) error {
	p := filepath.Join(root, s.Path)
	wrap := func(what string, err error) error {
		if err == nil {
			return nil
		}
		return fmt.Errorf("%s %s inside the seal: %v", what, s.Path, err)
	}
	switch s.Kind {
	case "dir":
		return wrap("making the directory", mkdirs(p, s.Mode))
	case "file":
		if err := mkdirs(filepath.Dir(p), 0o755); err != nil {
			return wrap("making the file", err)
		}
		return wrap("writing", writeNew(p, s.Data, s.Mode))
	case "link":
		if err := mkdirs(filepath.Dir(p), 0o755); err != nil {
			return wrap("making the link", err)
		}
		return wrap("making the link", os.Symlink(s.Source, p))
	case "bind":
		if err := mountPoint(p, s.Dir); err != nil {
			return wrap("making the mount point", err)
		}
		flags := uintptr(unix.MS_BIND)
		if s.Recursive {
			flags |= unix.MS_REC
		}
		if err := unix.Mount(s.Source, p, "", flags, ""); err != nil {
			return fmt.Errorf("binding %s at %s inside the seal: %v", s.Source, s.Path, err)
		}
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID}
		if s.Dev {
			attr.Attr_set |= unix.MOUNT_ATTR_NOEXEC
		} else {
			attr.Attr_set |= unix.MOUNT_ATTR_NODEV
		}
		if s.ReadOnly {
			attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
		} else {
			attr.Attr_clr |= unix.MOUNT_ATTR_RDONLY
		}
		at := 0
		if s.Recursive {
			at = unix.AT_RECURSIVE
		}
		return wrap("setting the flags of", unix.MountSetattr(-1, p, uint(at), &attr))
	case "tmpfs":
		if err := mkdirs(p, 0o755); err != nil {
			return wrap("making the mount point", err)
		}
		flags, data := mountOptions(s.Data)
		return wrap("mounting a tmpfs at", unix.Mount("tmpfs", p, "tmpfs", flags, data))
	case "proc":
		if err := mkdirs(p, 0o555); err != nil {
			return wrap("making the mount point", err)
		}
		return wrap("mounting the seal's /proc at", unix.Mount("proc", p, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, s.Data))
	case "mask":
		if st, err := os.Lstat(p); err != nil || st.IsDir() {
			return nil
		}
		if err := unix.Mount("/dev/null", p, "", unix.MS_BIND, ""); err != nil {
			return wrap("covering the socket", err)
		}
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NOEXEC}
		return wrap("covering the socket", unix.MountSetattr(-1, p, 0, &attr))
	case "hide":
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			return nil // nothing there to hide
		}
		return wrap("hiding", unix.Mount("tmpfs", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=4k"))
	case "overlay":
		if err := mountPoint(p, true); err != nil {
			return wrap("making the mount point", err)
		}
		opts := "lowerdir=" + s.Source + ",upperdir=" + s.Upper + ",workdir=" + s.Work
		return wrap("mounting the docroot's overlay at", unix.Mount("overlay", p, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts))
	}
	return fmt.Errorf("unknown step %q for %s", s.Kind, s.Path)
}

// mountPoint makes p, a directory or an empty file, unless something of
// that kind is there (a directory of a read-only bind above, which must
// already hold it).
func mountPoint(p string, dir bool) error {
	st, err := os.Lstat(p)
	if err == nil {
		if st.IsDir() != dir || st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is there but not a %s", p, map[bool]string{true: "directory", false: "file"}[dir])
		}
		return nil
	}
	if dir {
		return mkdirs(p, 0o755)
	}
	if err := mkdirs(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return writeNew(p, "", 0o644)
}

// mkdirs is os.MkdirAll with an error that says what a read-only bind
// means.
func mkdirs(p string, mode fs.FileMode) error {
	err := os.MkdirAll(p, mode)
	if errors.Is(err, unix.EROFS) {
		return fmt.Errorf("%v (a bind below a read-only one must name a path that exists in it)", err)
	}
	return err
}

// writeNew creates p with content and mode, refusing anything already
// there.
func writeNew(p, content string, mode fs.FileMode) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// mountOptions splits "mode=0755,nosuid,nodev" into mount flags and the
// file system's own options.
func mountOptions(opts string) (uintptr, string) {
	var flags uintptr
	var data []string
	for _, o := range strings.Split(opts, ",") {
		switch o {
		case "nosuid":
			flags |= unix.MS_NOSUID
		case "nodev":
			flags |= unix.MS_NODEV
		case "noexec":
			flags |= unix.MS_NOEXEC
		case "ro":
			flags |= unix.MS_RDONLY
		case "":
		default:
			data = append(data, o)
		}
	}
	return flags, strings.Join(data, ",")
}
