package phpbuild

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// aptDirs are the private apt configuration's places: etc (root's: the
// sources list, written here, never under /etc) and state (the build
// account's: lists, caches, kept between builds so a second fetch does not
// download the indexes again).
func aptDirs() (etc, state string) {
	return filepath.Join(Dir(), ".apt-etc"), filepath.Join(Dir(), ".apt")
}

// SystemSources reads the system's apt sources (never writing them):
// /etc/apt/sources.list and sources.list.d's .list and .sources files.
func SystemSources() []AptSource {
	var out []AptSource
	if data, err := os.ReadFile("/etc/apt/sources.list"); err == nil {
		out = append(out, ParseOneLine(string(data))...)
	}
	for _, pat := range []string{"/etc/apt/sources.list.d/*.list", "/etc/apt/sources.list.d/*.sources"} {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			if strings.HasSuffix(f, ".sources") {
				out = append(out, ParseDeb822(string(data))...)
			} else {
				out = append(out, ParseOneLine(string(data))...)
			}
		}
	}
	return out
}

// aptArgs are apt-get's options for the private configuration.
func aptArgs(etc, state string) []string {
	return []string{
		"-o", "Dir::Etc::sourcelist=" + filepath.Join(etc, "sources.list"),
		"-o", "Dir::Etc::sourceparts=" + filepath.Join(etc, "sources.list.d"),
		"-o", "Dir::State=" + filepath.Join(state, "state"),
		"-o", "Dir::State::status=/var/lib/dpkg/status",
		"-o", "Dir::Cache=" + filepath.Join(state, "cache"),
		"-o", "Debug::NoLocking=1",
		// The system's apt.conf.d may hook commands on update (Docker
		// images clean /var/cache/apt there); none of them are ours to run.
		"-o", "APT::Update::Post-Invoke::=",
		"-o", "APT::Update::Post-Invoke-Success::=",
		"-q",
	}
}

// fetch puts the source tree into src/: apt-get source through the private
// configuration, or the --source directory or tarball, unpacked by the
// build account.
func (b *builder) fetch(ctx context.Context, log io.Writer) error {
	dest := filepath.Join(b.work, "src")
	switch {
	case b.o.Source == "":
		if err := b.aptSource(ctx, dest, log); err != nil {
			return err
		}
	default:
		st, err := os.Stat(b.o.Source)
		if err != nil {
			return fmt.Errorf("--source %s: %v", b.o.Source, err)
		}
		if st.IsDir() {
			err = b.copyDir(ctx, b.o.Source, dest, log)
		} else {
			var digest string
			if digest, err = fileSHA256(b.o.Source); err == nil {
				b.rec.Source += " sha256:" + digest
				err = b.untar(ctx, b.o.Source, dest, log)
			}
		}
		if err != nil {
			return err
		}
	}
	return b.findTree(ctx, dest, log)
}

func (b *builder) aptSource(ctx context.Context, dest string, log io.Writer) error {
	etc, state := aptDirs()
	srcs, err := SourcesFor(b.target, b.phpName, SystemSources())
	if err != nil {
		return err
	}
	list, err := DebSrcList(srcs)
	if err != nil {
		return err
	}
	if err := ensureDir(etc, 0o755); err != nil {
		return err
	}
	if err := ensureDir(filepath.Join(etc, "sources.list.d"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(etc, "sources.list"), []byte(list), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(log, "private sources list %s:\n%s", filepath.Join(etc, "sources.list"), list)
	// The state belongs to the build account (apt writes lists there).
	if err := os.Mkdir(state, 0o700); err != nil && !os.IsExist(err) {
		return err
	}
	if uid, gid := b.build.ids(); uid >= 0 {
		if err := os.Lchown(state, uid, gid); err != nil {
			return err
		}
	}
	mk := b.as(state, log)
	if err := mk.run(ctx, "mkdir", "-p", "state/lists/partial", "cache/archives/partial"); err != nil {
		return err
	}
	args := aptArgs(etc, state)
	if err := b.as(state, log).run(ctx, "apt-get", append(args, "update")...); err != nil {
		return fmt.Errorf("apt-get update (private sources list %s): %v", filepath.Join(etc, "sources.list"), err)
	}
	pkg := "php" + b.target
	out, err := b.output(ctx, state, nil, "apt-cache", append(args, "showsrc", "--only-source", pkg)...)
	if err != nil {
		return fmt.Errorf("apt-cache showsrc %s: %v", pkg, err)
	}
	versions := SourceVersions(out, b.installed)
	if len(versions) == 0 {
		return fmt.Errorf("the archive serves no %s source (private sources list %s); give one with --source%s", pkg, filepath.Join(etc, "sources.list"), b.binaryHint())
	}
	if b.target != b.phpName {
		if err := b.checkForeignBuildDeps(ctx, out, pkg, versions[0], log); err != nil {
			return err
		}
	}
	// The installed version first; an archive may list a source it does
	// not serve (Debian's security suite lists newer sources than it
	// serves), so each is tried in turn, newest first.
	for i, v := range versions {
		switch {
		case i > 0:
			fmt.Fprintf(b.o.Progress, "build: the archive does not serve %s=%s; trying %s\n", pkg, versions[i-1], v)
		case v != b.installed && b.target == b.phpName:
			fmt.Fprintf(b.o.Progress, "build: the archive does not serve the installed %s=%s; trying %s\n", pkg, b.installed, v)
		}
		err = b.as(dest, log).run(ctx, "apt-get", append(args, "source", "--only-source", pkg+"="+v)...)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		fmt.Fprintf(log, "apt-get source %s=%s failed: %v\n", pkg, v, err)
		// A half download leaves files behind: start the next afresh.
		_ = b.as(dest, log).run(ctx, "find", ".", "-mindepth", "1", "-delete")
	}
	return fmt.Errorf("apt-get source %s: none of the versions the archive lists (%s) could be downloaded (the log says why: a 404 is a mirror or proxy that lists the source but does not serve its files); use another mirror, or unpack the source elsewhere (dpkg-source -x %s_VERSION.dsc) and give it with --source DIR%s", pkg, strings.Join(versions, ", "), pkg, b.binaryHint())
}

// binaryHint is what a failed source fetch of a newer release adds: that
// release's own Debian binaries need no source (phptune php add), run as
// they are, not rebuilt here.
func (b *builder) binaryHint() string {
	if b.target == b.phpName {
		return ""
	}
	return fmt.Sprintf("; or measure Debian's own PHP %s binaries, not rebuilt here: phptune php add %s", b.target, b.target)
}

// SourceVersions reads apt-cache showsrc's "Version:" lines and orders
// them for fetching: the installed version first when listed, then the
// others newest first, without duplicates.
func SourceVersions(showsrc, installed string) []string {
	seen := map[string]bool{}
	var vs []string
	for _, line := range strings.Split(showsrc, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "Version:")
		v = strings.TrimSpace(v)
		if !ok || !debVersionRE.MatchString(v) || seen[v] {
			continue
		}
		seen[v] = true
		vs = append(vs, v)
	}
	sort.SliceStable(vs, func(i, j int) bool {
		if (vs[i] == installed) != (vs[j] == installed) {
			return vs[i] == installed
		}
		if versionLess(vs[i], vs[j]) != versionLess(vs[j], vs[i]) {
			return versionLess(vs[j], vs[i])
		}
		return vs[i] > vs[j]
	})
	return vs
}

// copyDir streams dir (read by root: the operator named it) into dest,
// unpacked by the build account.
func (b *builder) copyDir(ctx context.Context, dir, dest string, log io.Writer) error {
	if _, err := os.Stat(filepath.Join(dir, "main", "php_version.h")); err != nil {
		return fmt.Errorf("--source %s is not a PHP source tree (no main/php_version.h)", dir)
	}
	tree := filepath.Join(dest, "tree")
	if err := b.as(dest, log).run(ctx, "mkdir", tree); err != nil {
		return err
	}
	pack := exec.CommandContext(ctx, "tar", "-C", dir, "--exclude=./.git", "-cf", "-", ".")
	pr, err := pack.StdoutPipe()
	if err != nil {
		return err
	}
	pack.Stderr = log
	if err := pack.Start(); err != nil {
		return err
	}
	s := b.as(tree, log)
	err = s.runStdin(ctx, pr, "tar", "--no-same-owner", "--no-same-permissions", "-xf", "-")
	perr := pack.Wait()
	if err != nil {
		return err
	}
	if perr != nil {
		return fmt.Errorf("reading --source %s: %v", dir, perr)
	}
	return nil
}

// untar unpacks a tarball (opened by root, read by the build account's tar
// on standard input).
func (b *builder) untar(ctx context.Context, file, dest string, log io.Writer) error {
	f, err := os.OpenFile(file, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	z := ""
	switch {
	case strings.HasSuffix(file, ".gz"), strings.HasSuffix(file, ".tgz"):
		z = "-z"
	case strings.HasSuffix(file, ".xz"):
		z = "-J"
	case strings.HasSuffix(file, ".bz2"):
		z = "-j"
	case strings.HasSuffix(file, ".zst"):
		z = "--zstd"
	}
	args := []string{"--no-same-owner", "--no-same-permissions", "-xf", "-"}
	if z != "" {
		args = append([]string{z}, args...)
	}
	if err := b.as(dest, log).runStdin(ctx, f, "tar", args...); err != nil {
		return fmt.Errorf("unpacking --source %s: %v", file, err)
	}
	return nil
}

var (
	phpVersionRE = regexp.MustCompile(`^\d+\.\d+\.\d+[A-Za-z0-9.-]*$`)
	debVersionRE = regexp.MustCompile(`^[0-9][A-Za-z0-9.+~:-]*$`)
)

// findTree finds the one directory under dest holding a PHP source (as the
// build account: root does not walk what it unpacked) and reads its
// version.
func (b *builder) findTree(ctx context.Context, dest string, log io.Writer) error {
	out, err := b.output(ctx, dest, nil, "find", ".", "-mindepth", "2", "-maxdepth", "3", "-path", "*/main/php_version.h", "-type", "f")
	if err != nil {
		return fmt.Errorf("looking for the source tree: %v", err)
	}
	var trees []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			trees = append(trees, strings.TrimSuffix(strings.TrimPrefix(l, "./"), "/main/php_version.h"))
		}
	}
	if len(trees) != 1 {
		return fmt.Errorf("the source %s holds %d PHP source trees (main/php_version.h), not one: is it a PHP source?", b.rec.Source, len(trees))
	}
	if strings.Contains(trees[0], "/") || trees[0] == "." || trees[0] == ".." {
		return fmt.Errorf("unexpected source tree %q", trees[0])
	}
	b.src = filepath.Join(dest, trees[0])
	ver, err := b.output(ctx, b.src, nil, "sed", "-n", `s/^#define PHP_VERSION "\(.*\)"$/\1/p`, "main/php_version.h")
	ver = strings.TrimSpace(ver)
	if err != nil || !phpVersionRE.MatchString(ver) {
		return fmt.Errorf("the source %s has no readable PHP_VERSION in main/php_version.h (%q): a broken source tree", b.rec.Source, ver)
	}
	b.rec.SourceVersion = ver
	if pv, err := b.output(ctx, b.src, nil, "dpkg-parsechangelog", "-S", "Version"); err == nil && debVersionRE.MatchString(strings.TrimSpace(pv)) {
		b.rec.SourcePackage = strings.TrimSpace(pv)
	}
	fmt.Fprintf(log, "source tree %s: PHP %s (package %s)\n", b.src, ver, b.rec.SourcePackage)
	return nil
}

// runStdin is run with standard input from r.
func (s step) runStdin(ctx context.Context, r io.Reader, bin string, args ...string) error {
	s.stdin = r
	return s.run(ctx, bin, args...)
}
