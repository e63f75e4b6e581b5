// Package locust runs phptune's workloads on Locust (https://locust.io, MIT),
// the load tool with a master/worker protocol, when one machine's generator
// is not enough: it installs a pinned Locust into a private virtual
// environment, writes a locustfile from phptune's workload description,
// runs Locust's master and workers as the lab's account, and reads its
// statistics back into phptune's bench record.
package locust

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// Requirements pins Locust and every package it pulls in to exact
// versions; Install installs exactly these (pip --no-deps).
//
//go:embed requirements.txt
var Requirements string

// PinnedVersion is the Locust version of Requirements.
func PinnedVersion() string {
	sc := bufio.NewScanner(strings.NewReader(Requirements))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "locust=="); ok {
			return v
		}
	}
	return ""
}

// Packages are the Debian packages the virtual environment is made with.
var Packages = []string{"python3", "python3-venv"}

// Python is Debian's interpreter the virtual environment is made with
// (python3-venv): never a python3 found on PATH, which may be someone's.
var Python = "/usr/bin/python3"

// VenvDir is where Locust's virtual environment lives under phptune's
// state directory home.
func VenvDir(home string) string { return filepath.Join(home, "locust", "venv") }

// Bin is the locust program of the virtual environment under home.
func Bin(home string) string { return filepath.Join(VenvDir(home), "bin", "locust") }

// Install makes the virtual environment under home and installs
// Requirements into it, owned by the user running phptune (root: root) and
// writable by nobody else, so that Locust running as a lab's account can
// run it but not change it. An environment that already holds the pinned
// version is kept. It returns the installed version.
func Install(ctx context.Context, home string, log io.Writer) (string, error) {
	if v, err := Version(ctx, home); err == nil && v == PinnedVersion() {
		fmt.Fprintf(log, "setup: Locust %s is installed in %s\n", v, VenvDir(home))
		return v, nil
	}
	if _, err := os.Stat(Python); err != nil {
		return "", fmt.Errorf("Debian's %s is missing (%v); install it: apt-get install -y python3 python3-venv", Python, err)
	}
	dir := filepath.Join(home, "locust")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	if err := checkOwned(dir); err != nil {
		return "", err
	}
	req := filepath.Join(dir, "requirements.txt")
	if err := os.WriteFile(req, []byte(Requirements), 0o644); err != nil {
		return "", err
	}
	venv := VenvDir(home)
	if err := os.RemoveAll(venv); err != nil {
		return "", err
	}
	fmt.Fprintf(log, "setup: %s -m venv %s\n", Python, venv)
	if err := runLogged(ctx, log, Python, "-m", "venv", venv); err != nil {
		return "", fmt.Errorf("making Locust's virtual environment: %v; install Debian's python3-venv: apt-get install -y python3-venv", err)
	}
	fmt.Fprintf(log, "setup: pip install --no-deps -r %s (Locust %s and its pinned dependencies)\n", req, PinnedVersion())
	if err := runLogged(ctx, log, filepath.Join(venv, "bin", "python"), "-m", "pip", "install", "--quiet", "--no-input",
		"--disable-pip-version-check", "--require-virtualenv", "--no-deps", "-r", req); err != nil {
		os.RemoveAll(venv)
		return "", fmt.Errorf("installing Locust from PyPI: %v; check that pypi.org is reachable, then run phptune setup --with-locust again", err)
	}
	// Nothing in it may be writable by anyone but its owner.
	if err := filepath.WalkDir(venv, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o022 != 0 {
			return os.Chmod(p, info.Mode().Perm()&^0o022)
		}
		return nil
	}); err != nil {
		return "", err
	}
	v, err := Version(ctx, home)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(log, "setup: Locust %s installed in %s\n", v, VenvDir(home))
	return v, nil
}

// Version runs the environment's locust --version.
func Version(ctx context.Context, home string) (string, error) {
	if err := CheckVenv(home); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, Bin(home), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v; reinstall it: phptune setup --with-locust", Bin(home), err)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 || f[0] != "locust" {
		return "", fmt.Errorf("%s --version said %q; reinstall it: phptune setup --with-locust", Bin(home), strings.TrimSpace(string(out)))
	}
	return f[1], nil
}

// CheckVenv verifies that the virtual environment, and every directory
// above it, belongs to the user running phptune and that nothing in it can
// be written by anyone else: root runs it, and a lab's account runs it for
// root, so a file the lab could change would be code root runs.
func CheckVenv(home string) error {
	venv := VenvDir(home)
	// Missing (or a directory above it missing): not installed, said so
	// before the directories above are checked.
	if _, err := os.Lstat(venv); err != nil {
		return fmt.Errorf("Locust is not installed (%v); install it: phptune setup --with-locust", err)
	}
	for d := filepath.Dir(venv); ; d = filepath.Dir(d) {
		if err := checkNotWritable(d, true); err != nil {
			return err
		}
		if d == "/" || d == "." {
			break
		}
	}
	return filepath.WalkDir(venv, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			// The directory holding the link is checked; a link's own
			// mode means nothing.
			return nil
		}
		return checkNotWritable(p, false)
	})
}

func checkOwned(p string) error {
	st, err := os.Lstat(p)
	if err != nil {
		return err
	}
	s := st.Sys().(*syscall.Stat_t)
	if int(s.Uid) != os.Geteuid() || !st.IsDir() {
		return fmt.Errorf("%s must be a directory of uid %d (it is uid %d, mode %v); remove it and run phptune setup --with-locust", p, os.Geteuid(), s.Uid, st.Mode())
	}
	return nil
}

// checkNotWritable refuses p when its owner is neither root nor the user
// running phptune, or when group or others may write it (a directory with
// the sticky bit, /tmp, is allowed above the environment: its entries
// cannot be renamed by others).
func checkNotWritable(p string, above bool) error {
	st, err := os.Lstat(p)
	if err != nil {
		return err
	}
	s := st.Sys().(*syscall.Stat_t)
	if s.Uid != 0 && int(s.Uid) != os.Geteuid() {
		return fmt.Errorf("%s belongs to uid %d: Locust's environment must be owned by the user running phptune; remove it and run phptune setup --with-locust", p, s.Uid)
	}
	if st.Mode().Perm()&0o022 != 0 && !(above && st.Mode()&os.ModeSticky != 0) {
		return fmt.Errorf("%s is writable by others (mode %v): Locust's environment must be writable by its owner only; remove it and run phptune setup --with-locust", p, st.Mode().Perm())
	}
	return nil
}

func runLogged(ctx context.Context, log io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "PIP_NO_CACHE_DIR=1", "PYTHONDONTWRITEBYTECODE=")
	return cmd.Run()
}
