package phpbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/servers/unit"
)

// UnitOptions describe a build of NGINX Unit with its PHP module.
type UnitOptions struct {
	// Source is Unit's source tarball (unit-X.Y.Z.tar.gz): Debian does not
	// package Unit and phptune downloads nothing, so the user gives it.
	Source string
	// Cache is the build cache (default Dir()); the build goes into
	// unit.BuildsDir(Cache)/ID.
	Cache string
	// Jobs is make's -j (default 2).
	Jobs int
	// NoInstall makes missing build dependencies an error even as root.
	NoInstall bool
	// Rebuild ignores a complete build of the same request.
	Rebuild bool
	// Progress gets one line per step; nil: discarded.
	Progress io.Writer
}

// UnitResult is a finished BuildUnit.
type UnitResult struct {
	Record *unit.BuildRecord
	Cached bool
}

// unitRecipe changes when the way Unit is configured changes: a build made
// another way is not the same request.
const unitRecipe = 1

// UnitDeps are the packages a Unit build needs on top of BaseDeps: the
// PHP embed SAPI its module links (libphpX.Y-embed), php-config and the
// headers (phpX.Y-dev), PCRE2 for route patterns.
func UnitDeps(php string) []string {
	return []string{"libphp" + php + "-embed", "php" + php + "-dev", "libpcre2-dev"}
}

var unitVersionRE = regexp.MustCompile(`(?m)^NXT_VERSION=(\d+\.\d+\.\d+)$`)

// BuildUnit builds unitd and php.unit.so from o.Source as the build
// account, against the installed PHP's embed SAPI, or returns the complete
// build of the same request. Like Build, it holds the cache lock, runs
// every step unprivileged at the lowest priority, and leaves nothing
// listed when interrupted.
func BuildUnit(ctx context.Context, o UnitOptions) (*UnitResult, error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Jobs <= 0 {
		o.Jobs = 2
	}
	src, digest, err := unitSource(o.Source)
	if err != nil {
		return nil, err
	}
	if o.Cache, err = unitCache(o.Cache); err != nil {
		return nil, err
	}
	unlock, err := lockCache()
	if err != nil {
		return nil, err
	}
	defer unlock()
	b := &builder{o: Options{Progress: o.Progress, NoInstall: o.NoInstall, Jobs: o.Jobs}}
	release, err := b.start(ctx, false)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := b.checkDeps(ctx, append(append([]string(nil), BaseDeps...), UnitDeps(b.phpName)...)); err != nil {
		return nil, err
	}
	rec, php := b.unitRequest(ctx, src, digest)
	if r, err := unit.LoadBuild(o.Cache, rec.ID); err == nil && !o.Rebuild {
		fmt.Fprintf(o.Progress, "build: Unit %s %s with %s (already built)\n", r.ID, r.Version, r.PHP)
		return &UnitResult{Record: r, Cached: true}, nil
	}
	if err := b.mkWork(); err != nil {
		return nil, err
	}
	ok := false
	defer b.discardUnless(&ok)
	if rec.Version, err = b.unpackUnit(ctx, src, o.Source); err != nil {
		return nil, b.interrupted(ctx, err)
	}
	fmt.Fprintf(o.Progress, "build: Unit %s %s with %s\n", rec.ID, rec.Version, rec.PHP)
	if err := b.timed("configure", func(log io.Writer) error {
		if err := b.as(b.src, log).run(ctx, "./configure", rec.Configure...); err != nil {
			return err
		}
		return b.as(b.src, log).run(ctx, "./configure", php...)
	}); err != nil {
		return nil, b.interrupted(ctx, err)
	}
	if err := b.timed("make", func(log io.Writer) error {
		return b.as(b.src, log).run(ctx, "make", "-j"+strconv.Itoa(o.Jobs))
	}); err != nil {
		return nil, b.interrupted(ctx, err)
	}
	for _, s := range b.rec.Steps {
		rec.Steps = append(rec.Steps, unit.Step{Name: s.Name, Seconds: s.Seconds})
	}
	if err := b.completeUnit(o.Cache, rec); err != nil {
		return nil, err
	}
	ok = true
	fmt.Fprintf(o.Progress, "build: Unit %s done: %s\n", rec.ID, filepath.Join(unit.BuildsDir(o.Cache), rec.ID, "sbin", "unitd"))
	return &UnitResult{Record: rec}, nil
}

// unitSource is the absolute path and the sha256 digest of --source,
// refused unless it is a regular file named like Unit's source tarball.
func unitSource(source string) (src, digest string, err error) {
	if source == "" {
		return "", "", errors.New("phptune build unit needs --source unit-X.Y.Z.tar.gz: Debian does not package NGINX Unit and phptune downloads nothing")
	}
	if src, err = filepath.Abs(source); err != nil {
		return "", "", err
	}
	st, err := os.Stat(src)
	if err != nil {
		return "", "", fmt.Errorf("--source %s: %v", source, err)
	}
	if !st.Mode().IsRegular() || !(strings.HasSuffix(src, ".tar.gz") || strings.HasSuffix(src, ".tgz")) {
		return "", "", fmt.Errorf("--source %s: want Unit's source tarball, unit-X.Y.Z.tar.gz", source)
	}
	if digest, err = fileSHA256(src); err != nil {
		return "", "", err
	}
	return src, digest, nil
}

// unitCache makes the build cache (cache, default Dir()) and its directory
// of Unit builds when they are missing, and returns the cache.
func unitCache(cache string) (string, error) {
	if _, err := EnsureCache(); err != nil {
		return "", err
	}
	if cache == "" {
		cache = Dir()
	}
	if err := ensureDir(cache, 0o755); err != nil {
		return "", fmt.Errorf("build cache: %v", err)
	}
	if err := ensureDir(unit.BuildsDir(cache), 0o755); err != nil {
		return "", fmt.Errorf("build cache: %v", err)
	}
	return cache, nil
}

// unitRequest is the record of the build asked for — the source and its
// digest, the installed embed SAPI, Unit's configure line — with its key
// and id, and the configure line of Unit's PHP module (part of the key,
// not of the record).
func (b *builder) unitRequest(ctx context.Context, src, digest string) (rec *unit.BuildRecord, php []string) {
	embed := "libphp" + b.phpName + "-embed " + packageVersion(ctx, "libphp"+b.phpName+"-embed")
	rec = &unit.BuildRecord{Schema: 1, Source: src, SourceSHA256: digest, PHP: embed}
	rec.Configure = []string{"--modulesdir=/usr/lib/unit/modules", "--statedir=/var/lib/unit", "--runstatedir=/run/unit", "--logdir=/var/log/unit", "--tmpdir=/tmp"}
	php = []string{"php", "--module=php", "--config=php-config" + b.phpName, "--lib-path=/usr/lib"}
	h := sha256.New()
	fmt.Fprintf(h, "phptune-unit-%d\x00%s\x00%s\x00%s\x00%s", unitRecipe, digest, embed, strings.Join(rec.Configure, " "), strings.Join(php, " "))
	rec.Key = hex.EncodeToString(h.Sum(nil))
	rec.ID = IDOf(rec.Key)
	return rec, php
}

// unpackUnit is the "unpack" step: it unpacks the tarball src into the
// work directory, sets b.src to its one Unit source tree and returns the
// Unit version that tree's version file names. source is --source as
// given, for the errors.
func (b *builder) unpackUnit(ctx context.Context, src, source string) (version string, err error) {
	srcDir := filepath.Join(b.work, "src")
	err = b.timed("unpack", func(log io.Writer) error {
		if err := b.untar(ctx, src, srcDir, log); err != nil {
			return err
		}
		out, err := b.output(ctx, srcDir, nil, "find", ".", "-mindepth", "2", "-maxdepth", "2", "-name", "version", "-path", "./*/version", "-type", "f")
		if err != nil {
			return err
		}
		trees := strings.Fields(out)
		if len(trees) != 1 {
			return fmt.Errorf("--source %s holds %d Unit source trees (a top directory with a version file), not one: is it Unit's source?", source, len(trees))
		}
		b.src = filepath.Join(srcDir, filepath.Dir(strings.TrimPrefix(trees[0], "./")))
		ver, err := b.output(ctx, b.src, nil, "cat", "version")
		if err != nil {
			return err
		}
		m := unitVersionRE.FindStringSubmatch(ver)
		if m == nil {
			return fmt.Errorf("--source %s: its version file names no NXT_VERSION: is it Unit's source?", source)
		}
		version = m[1]
		return nil
	})
	return version, err
}

// interrupted says that a cancelled build stopped everything.
func (b *builder) interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("build interrupted: every process of it was stopped and nothing was kept (%w)", ctx.Err())
	}
	return err
}

// completeUnit copies unitd and php.unit.so into a root-owned stage and
// renames it into place: a lab sees the build complete or not at all.
func (b *builder) completeUnit(cache string, rec *unit.BuildRecord) error {
	rec.Created = time.Now().UTC().Format(time.RFC3339)
	dir := unit.BuildsDir(cache)
	stage := filepath.Join(dir, ".stage-"+rec.ID)
	_ = os.RemoveAll(stage)
	for _, d := range []string{stage, filepath.Join(stage, "sbin"), filepath.Join(stage, "modules")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	for _, c := range [][2]string{{"build/sbin/unitd", "sbin/unitd"}, {"build/lib/unit/modules/php.unit.so", "modules/php.unit.so"}} {
		if err := b.copyBinary(c[0], filepath.Join(stage, c[1])); err != nil {
			return err
		}
	}
	if err := os.Rename(b.logs, filepath.Join(stage, "logs")); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(stage, "record.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	final := filepath.Join(dir, rec.ID)
	if _, err := os.Lstat(final); err == nil {
		old := filepath.Join(dir, ".old-"+rec.ID+"-"+randHex(4))
		if err := os.Rename(final, old); err != nil {
			return err
		}
		defer os.RemoveAll(old)
	}
	if err := os.Rename(stage, final); err != nil {
		return err
	}
	_ = os.RemoveAll(b.work)
	b.work = ""
	return nil
}

// fileSHA256 is the hex sha256 digest of the file at path (a --source
// tarball, a Unit source).
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %v", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// packageVersion is an installed package's version ("" when it is not).
func packageVersion(ctx context.Context, pkg string) string {
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Version}", pkg).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
