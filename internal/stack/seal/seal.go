package seal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Seal is a made seal: its directory and the namespace files in it.
type Seal struct {
	Dir string
}

// Layout of a seal's directory.
func (s *Seal) nsDir() string      { return filepath.Join(s.Dir, "ns") }
func (s *Seal) netFile() string    { return filepath.Join(s.Dir, "ns", "net") }
func (s *Seal) mntFile() string    { return filepath.Join(s.Dir, "ns", "mnt") }
func (s *Seal) ipcFile() string    { return filepath.Join(s.Dir, "ns", "ipc") }
func (s *Seal) hostsPath() string  { return filepath.Join(s.Dir, "hosts") }
func (s *Seal) overlayDir() string { return filepath.Join(s.Dir, "overlay") }

// UpperDir is where the writes to the overlaid directory (the docroot,
// or the app's root that holds it) land: the overlay's upper layer, its
// paths relative to that directory.
func (s *Seal) UpperDir() string { return filepath.Join(s.Dir, "overlay", "upper") }

// Open is the seal made at dir earlier (by another phptune process), to
// run commands in, read its attempts or destroy it.
func Open(dir string) (*Seal, error) {
	if err := checkPath("the seal's directory", dir); err != nil {
		return nil, err
	}
	return &Seal{Dir: dir}, nil
}

// stepLimit bounds each helper Create and Attempts run.
const stepLimit = 30 * time.Second

// Create makes the seal spec describes. It runs as root. A failure
// destroys what was made so far.
func Create(ctx context.Context, spec Spec) (*Seal, error) {
	if err := spec.check(); err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("sealing a lab needs root (namespaces and mounts); run phptune as root")
	}
	if landlockABI() < 1 {
		return nil, errNoLandlock
	}
	if err := rootOwnedParents(spec.Dir); err != nil {
		return nil, err
	}
	if err := ensureRootDir(spec.Dir, 0o711); err != nil {
		return nil, err
	}
	s := &Seal{Dir: spec.Dir}
	if err := os.Mkdir(s.nsDir(), 0o700); err != nil {
		if os.IsExist(err) {
			return nil, fmt.Errorf("a seal already exists in %s; destroy it first (phptune lab down)", spec.Dir)
		}
		return nil, fmt.Errorf("creating %s: %v", s.nsDir(), err)
	}
	if err := s.make(ctx, spec); err != nil {
		if derr := s.Destroy(); derr != nil {
			err = fmt.Errorf("%v (and undoing it: %v)", err, derr)
		}
		return nil, err
	}
	return s, nil
}

func (s *Seal) make(ctx context.Context, spec Spec) error {
	// A mount namespace can be bound only to a file on a private mount:
	// on a shared one the binding would propagate into the namespace it
	// names.
	ns := s.nsDir()
	if err := unix.Mount(ns, ns, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mounting %s onto itself: %v", ns, err)
	}
	if err := unix.Mount("", ns, "", unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making %s a private mount: %v", ns, err)
	}
	for _, f := range []string{s.netFile(), s.mntFile(), s.ipcFile()} {
		fd, err := unix.Open(f, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return fmt.Errorf("creating %s: %v", f, err)
		}
		unix.Close(fd)
	}
	err := unshareBound(ctx, func() io.Reader { return strings.NewReader(routes) }, func() {
		for _, f := range []string{s.netFile(), s.mntFile(), s.ipcFile()} {
			_ = unix.Unmount(f, unix.MNT_DETACH)
		}
	}, "--net="+s.netFile(), "--mount="+s.mntFile(), "--ipc="+s.ipcFile(),
		"--propagation", "private", "--", tool("ip"), "-batch", "-")
	if err != nil {
		return fmt.Errorf("making the namespaces: %v", err)
	}
	// The lab's servers run as its account and listen where the site's
	// configuration says, 127.0.0.1:80 or :3306: inside the namespace no
	// port is privileged (ports there reach nothing of the host).
	if err := s.inNet(ctx, nil, "sysctl", "-q", "-w", "net.ipv4.ip_unprivileged_port_start=0"); err != nil {
		return fmt.Errorf("opening the namespace's low ports to the lab: %v", err)
	}
	if err := s.addServed(ctx, spec.Served); err != nil {
		return err
	}
	if err := s.inNet(ctx, strings.NewReader(ruleset(spec.Own)), "nft", "-f", "-"); err != nil {
		return fmt.Errorf("loading the seal's nftables rules: %v (Debian's nftables package: apt-get install nftables)", err)
	}
	return s.mountInside(ctx, spec)
}

// mountInside checks what the seal binds and overlays, prepares the
// overlay's layers, and starts the seal's init, which builds the file
// system from the allowlist (root.go) in the mount namespace, pivots into
// it and holds the seal's pid namespace (init.go, pidns.go).
func (s *Seal) mountInside(ctx context.Context, spec Spec) error {
	for _, b := range spec.Binds {
		if err := CheckBindSource(b.Source); err != nil {
			return err
		}
		if b.Code {
			if err := CheckCodeSource(b.Source, spec.Refuse...); err != nil {
				return fmt.Errorf("the site's code outside its app root cannot be bound into the seal: %v", err)
			}
		}
	}
	if o := spec.overlaid(); o != "" {
		if err := s.overlay(o); err != nil {
			return err
		}
	}
	steps, err := plan(spec)
	if err != nil {
		return err
	}
	return s.startInit(ctx, steps, spec.Start)
}

// CheckBindSource refuses a bind source that is a link or sits where
// another account could swap it (a directory above it that is not
// root's, or that others can write): Create refuses a spec that binds
// one.
func CheckBindSource(source string) error {
	if err := rootOwnedParents(source); err != nil {
		return err
	}
	st, err := os.Lstat(source)
	if err != nil {
		return fmt.Errorf("the bind mount source %s: %v; create it before sealing", source, err)
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("the bind mount source %s is a symbolic link; name what it points to", source)
	}
	return nil
}

// overlay prepares the layers of the overlay of docroot (the docroot, or
// the app's root that holds it), which the init mounts inside at its own
// path: the real directory as the read-only lower layer, Dir/overlay/upper
// (owned and moded as the directory is, for the merged directory shows
// the upper layer's attributes) as the upper one, and a root-only work
// directory. Dir/overlay is root's, mode 0700:
// the lab reaches the layers only through the mount.
func (s *Seal) overlay(docroot string) error {
	if err := rootOwnedParents(docroot); err != nil {
		return err
	}
	st, err := os.Lstat(docroot)
	if err != nil {
		return fmt.Errorf("the directory to overlay %s: %v", docroot, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("the directory to overlay %s is not a directory (a symbolic link or a file); name the site's directory itself", docroot)
	}
	sys := st.Sys().(*syscall.Stat_t)
	if err := os.Mkdir(s.overlayDir(), 0o700); err != nil {
		return fmt.Errorf("creating %s: %v", s.overlayDir(), err)
	}
	upper, work := s.UpperDir(), filepath.Join(s.overlayDir(), "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		return fmt.Errorf("creating %s: %v", work, err)
	}
	if err := os.Mkdir(upper, 0o700); err != nil {
		return fmt.Errorf("creating %s: %v", upper, err)
	}
	if err := os.Chown(upper, int(sys.Uid), int(sys.Gid)); err != nil {
		return fmt.Errorf("giving %s the owner of %s: %v", upper, docroot, err)
	}
	if err := os.Chmod(upper, st.Mode().Perm()|st.Mode()&(os.ModeSetgid|os.ModeSticky)); err != nil {
		return fmt.Errorf("giving %s the mode of %s: %v", upper, docroot, err)
	}
	return nil
}

// Command prepares bin to run inside the seal as uid and gid, in /; see
// CommandIn.
func (s *Seal) Command(uid, gid int, bin string, args ...string) *exec.Cmd {
	return s.CommandIn("/", uid, gid, bin, args...)
}

// CommandIn prepares bin to run inside the seal as uid and gid with no
// supplementary groups and no way to gain privileges (no set-uid program
// works inside), in dir as the mount namespace sees it (a docroot is its
// overlay there), confined by Landlock (see confine.go). Start it with
// Start or StartWith (in the seal's pid namespace); started otherwise it
// does not run. It runs nsenter, which enters the namespaces and execs
// this very binary (passed as cmd.ExtraFiles[0]: a caller adds its files
// after it), which confines itself and execs setpriv, which execs bin: the
// process Start makes is bin itself, so its (host) pid, the SysProcAttr
// the caller sets (Setsid, a cgroup fd) and its environment (cmd.Env) are
// bin's. cmd.Dir is "/" and must stay so: entering a mount namespace
// resets the working directory, and a directory opened outside would be
// the real docroot, not its overlay. Root (uid or gid 0) is refused:
// Start returns the error.
func (s *Seal) CommandIn(dir string, uid, gid int, bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(tool("nsenter"))
	cmd.Dir = "/"
	if uid <= 0 || gid <= 0 {
		cmd.Err = fmt.Errorf("running %s as uid %d, gid %d inside the seal: root never runs inside a sealed lab; run it as the lab's account", bin, uid, gid)
		return cmd
	}
	if err := checkPath("the working directory", dir); err != nil {
		cmd.Err = err
		return cmd
	}
	exe, err := selfFile()
	if err != nil {
		cmd.Err = err
		return cmd
	}
	cmd.ExtraFiles = []*os.File{exe}
	cmd.Args = append([]string{cmd.Path, "--net=" + s.netFile(), "--mount=" + s.mntFile(), "--ipc=" + s.ipcFile(), "--wdns=" + dir, "--",
		selfPath(), confineFlag, "--", tool("setpriv"), "--reuid=" + strconv.Itoa(uid), "--regid=" + strconv.Itoa(gid), "--clear-groups", "--no-new-privs", "--", bin}, args...)
	return cmd
}

// Attempts are the connections processes in the seal tried to open
// anywhere but the lab's own listeners, by destination, most first.
func (s *Seal) Attempts(ctx context.Context) ([]Attempt, error) {
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(ctx, stepLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool("nsenter"), "--net="+s.netFile(), "--", tool("nft"), "-j", "list", "table", "inet", table)
	cmd.Env = []string{"PATH=" + toolPath}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("reading the seal's counters in %s: %v: %s", s.Dir, err, strings.TrimSpace(stderr.String()))
	}
	return parseAttempts(out.Bytes())
}

// inNet runs a tool as root in the network namespace.
func (s *Seal) inNet(ctx context.Context, stdin io.Reader, name string, args ...string) error {
	return run(ctx, stdin, "nsenter", append([]string{"--net=" + s.netFile(), "--", tool(name)}, args...)...)
}

// toolPath is where the seal's tools are looked up: the system's
// directories only, never the caller's PATH.
const toolPath = "/usr/sbin:/usr/bin:/sbin:/bin"

// tool is the full path of a system tool, or its name when it is in none
// of toolPath's directories (the command then fails naming it).
func tool(name string) string {
	for _, d := range filepath.SplitList(toolPath) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return name
}

// run runs a tool as root with a fixed PATH and returns its output in the
// error when it fails.
func run(ctx context.Context, stdin io.Reader, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, stepLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool(name), args...)
	cmd.Env = []string{"PATH=" + toolPath}
	cmd.Stdin = stdin
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}
