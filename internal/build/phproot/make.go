package phproot

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Add makes version's root under o.Home unless it exists, and returns it;
// made is false for a root that was already there. Every check of Prepare
// runs first and refuses before anything is written. A missing home is
// made 0755; phptune's command line makes it first (lab.EnsureHome: its
// owner, group and mode) and calls Prepare and Make itself.
func Add(ctx context.Context, o Options) (r *Root, made bool, err error) {
	if _, err := CheckVersion(o.Version); err != nil {
		return nil, false, err
	}
	if r, err := Find(o.Home, o.Version); err == nil {
		return r, false, nil
	}
	p, err := Prepare(ctx, o)
	if err != nil {
		return nil, false, err
	}
	r, err = Make(ctx, p, o.Home, o.Progress)
	return r, err == nil, err
}

// Make makes the root p prepared under home: mmdebstrap into a work
// directory beside its place, the checks, the manifest, then a rename
// into place. On any failure (or ctx's end) the work directory is removed
// and make.log is kept as php-roots/VERSION.failed.log.
func Make(ctx context.Context, p *Prepared, home string, w io.Writer) (*Root, error) {
	dir := Dir(home)
	if err := ensureRootDir(dir); err != nil {
		return nil, err
	}
	unlock, err := lock(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if r, err := Find(home, p.Version); err == nil {
		return r, nil // made by another run while this one prepared
	}
	removeStale(dir, w)
	work, err := os.MkdirTemp(dir, ".work-"+p.Version+"-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(work, 0o755); err != nil {
		return nil, err
	}
	m, err := makeIn(ctx, p, work, w)
	if err != nil {
		failed := filepath.Join(dir, p.Version+".failed.log")
		_ = os.Rename(filepath.Join(work, "make.log"), failed)
		if rmErr := removeTree(work); rmErr != nil {
			err = fmt.Errorf("%v; and the half-made root could not be removed: %v", err, rmErr)
		}
		return nil, fmt.Errorf("%w (log: %s)", err, failed)
	}
	final := filepath.Join(dir, p.Version)
	if err := os.Rename(work, final); err != nil {
		_ = removeTree(work)
		return nil, err
	}
	_ = os.Remove(filepath.Join(dir, p.Version+".failed.log"))
	return newRoot(final, *m), nil
}

// makeIn runs mmdebstrap into work/root, checks the tree and writes
// work/manifest.json.
func makeIn(ctx context.Context, p *Prepared, work string, w io.Writer) (*Manifest, error) {
	start := time.Now()
	logf, err := os.OpenFile(filepath.Join(work, "make.log"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	fs := filepath.Join(work, "root")
	progress(w, "mmdebstrap: Debian %s (%s) from %s with %s (a minute or two; log %s)", p.Info.Debian, p.Info.Suite, p.Mirrors.Archive, strings.Join(p.Plan.Packages, " "), logf.Name())
	if err := runLogged(ctx, logf, "mmdebstrap", MmdebstrapArgs(p, fs)...); err != nil {
		return nil, fmt.Errorf("mmdebstrap: %v", err)
	}
	if err := dropPrivileges(fs); err != nil {
		return nil, err
	}
	progress(w, "checking php-fpm%s and its extensions in the root", p.Version)
	php, err := Verify(ctx, fs, p.Version, p.Plan.Exts)
	if err != nil {
		return nil, err
	}
	pkgs, err := installed(ctx, fs)
	if err != nil {
		return nil, err
	}
	size, err := DiskBytes(fs)
	if err != nil {
		return nil, err
	}
	directives, err := iniDirectives(ctx, fs, p.Version)
	if err != nil {
		return nil, err
	}
	m := &Manifest{
		Version: p.Version, PHP: php, Debian: p.Info.Debian, Suite: p.Info.Suite,
		Archive: p.Mirrors.Archive, Security: p.Mirrors.Security, Keyring: p.Keyring,
		MadeAt: time.Now().UTC().Round(time.Second), Seconds: time.Since(start).Seconds(), DiskBytes: size,
		Requested: p.Plan.Packages, Extensions: p.Plan.Exts, Skipped: p.Plan.Skipped, Packages: pkgs,
		Mmdebstrap: toolVersion(ctx, "mmdebstrap"), Directives: directives,
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(work, "manifest.json"), append(data, '\n'), 0o644); err != nil {
		return nil, err
	}
	return m, nil
}

// MmdebstrapArgs is mmdebstrap's command line for p into fs: root mode,
// the apt variant (Essential and apt), the plan's packages, the keyring
// for the initial setup only, and the release's suite (and security
// suite) on the chosen mirrors.
func MmdebstrapArgs(p *Prepared, fs string) []string {
	args := []string{"--mode=root", "--variant=apt", "--keyring=" + p.Keyring,
		"--include=" + strings.Join(p.Plan.Packages, ","), p.Info.Suite, fs,
		"deb " + p.Mirrors.Archive + " " + p.Info.Suite + " main"}
	if p.Mirrors.Security != "" {
		args = append(args, "deb "+p.Mirrors.Security+" "+p.Info.Suite+"-security main")
	}
	return args
}

// runLogged runs name with its output to log; ctx's end sends SIGTERM
// (mmdebstrap then unmounts and cleans up) and, 60 s later, SIGKILL.
func runLogged(ctx context.Context, log io.Writer, name string, args ...string) error {
	fmt.Fprintf(log, "$ %s %s\n", name, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8", "DEBIAN_FRONTEND=noninteractive")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 60 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// toolVersion is `name --version`'s first line, or "".
func toolVersion(ctx context.Context, name string) string {
	out, _ := exec.CommandContext(ctx, name, "--version").Output()
	l, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(l)
}

// inRoot runs a command inside fs as nobody (65534), with a clean
// environment, and returns its standard output.
func inRoot(ctx context.Context, fs string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "chroot", append([]string{"--userspec=65534:65534", fs}, args...)...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
	cmd.Dir = "/"
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s in the root: %v: %s", strings.Join(args, " "), err, lastLine(stderr.String()))
	}
	return string(out), nil
}

// Verify checks the tree fs: php-fpmVERSION -v prints PHP VERSION.x of
// the fpm SAPI, and phpVERSION -m lists every module of exts. It returns
// php-fpm -v's first line.
func Verify(ctx context.Context, fs, version string, exts []Ext) (string, error) {
	out, err := inRoot(ctx, fs, "/usr/sbin/php-fpm"+version, "-v")
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(out, "\n")
	if !strings.HasPrefix(first, "PHP "+version+".") || !strings.Contains(first, "(fpm-fcgi)") {
		return "", fmt.Errorf("php-fpm%s -v in the root printed %q, not PHP %s's fpm", version, first, version)
	}
	out, err = inRoot(ctx, fs, "/usr/bin/php"+version, "-m")
	if err != nil {
		return "", err
	}
	if missing := MissingModules(ParseModules(out), exts); len(missing) > 0 {
		return "", fmt.Errorf("php%s -m in the root lacks %s though their packages are installed", version, strings.Join(missing, ", "))
	}
	return strings.TrimSpace(first), nil
}

// MissingModules are the modules of exts that loaded (a ParseModules
// list) lacks.
func MissingModules(loaded []string, exts []Ext) []string {
	have := map[string]bool{}
	for _, m := range loaded {
		have[m] = true
	}
	var out []string
	for _, e := range exts {
		if !have[e.Module] {
			out = append(out, e.Module)
		}
	}
	return out
}

// installed is dpkg-query -W run in the root.
func installed(ctx context.Context, fs string) ([]PkgVersion, error) {
	out, err := inRoot(ctx, fs, "dpkg-query", "-W", "-f=${Package}\t${Version}\n")
	if err != nil {
		return nil, err
	}
	return ParseDpkgQuery(out), nil
}

// ParseDpkgQuery reads "NAME\tVERSION" lines.
func ParseDpkgQuery(out string) []PkgVersion {
	var ps []PkgVersion
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		n, v, ok := strings.Cut(sc.Text(), "\t")
		if ok && n != "" {
			ps = append(ps, PkgVersion{Name: n, Version: v})
		}
	}
	return ps
}
