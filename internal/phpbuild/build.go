package phpbuild

import (
	"bytes"
	"context"
	"crypto/rand"
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
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/setup"
)

// Options describe one build.
type Options struct {
	// PHP is the PHP release to build, MAJOR.MINOR: "" (or the installed
	// one) builds the installed PHP, another one of NewerSuites ("8.4")
	// comes from the Debian suite that carries it (version.go).
	PHP string
	// Variant is VariantPlain, VariantPGO or VariantPGOLTO.
	Variant string
	// Minimal configures --disable-all with fpm, cgi and cli only (tests,
	// CI): minutes instead of tens of them.
	Minimal bool
	// Train is the training workload of a pgo build: APP[:WORKLOAD].
	Train string
	// TrainDuration is how long the generator loads the instrumented
	// php-fpm (default 30 s).
	TrainDuration time.Duration
	// Source is a Debian PHP source directory or tarball; empty: fetched
	// with apt-get source through phptune's private apt configuration.
	Source string
	// Jobs is make's -j (default 2).
	Jobs int
	// ExtraCFLAGS are compiler flags added after Debian's (--cflags):
	// part of the build's key and record. CheckExtraCFLAGS says which.
	ExtraCFLAGS string
	// NoInstall makes missing build dependencies an error with the
	// apt-get line even as root (default: root installs them).
	NoInstall bool
	// Rebuild ignores a complete build of the same request.
	Rebuild bool
	// ExtraDeps are packages required on top of what the flags need (the
	// missing-dependency test names one that does not exist).
	ExtraDeps []string
	// Progress gets one line per step (stderr); nil: discarded.
	Progress io.Writer
}

// Result is a finished Build.
type Result struct {
	Record *Record
	// Cached is true when an existing build was returned.
	Cached bool
}

func (o *Options) defaults() error {
	if o.Variant == "" {
		o.Variant = VariantPlain
	}
	compiled, _, ok := Compiled(o.Variant)
	switch {
	case !ok:
		return fmt.Errorf("--variant %q: choose %s", o.Variant, strings.Join(Variants, ", "))
	case !Trained(o.Variant):
		if o.Train != "" {
			return errors.New("--train is for the trained variants (pgo, pgo-lto and the -bolt ones): a plain build is not trained")
		}
		if o.TrainDuration != 0 && o.TrainDuration != DefaultTrainDuration {
			return errors.New("--train-duration is for the trained variants (pgo, pgo-lto and the -bolt ones): a plain build is not trained")
		}
	default:
		if compiled == VariantPGOLTO && o.Minimal {
			return fmt.Errorf("--variant %s with --minimal: the minimal build is the pipeline check; build it in full", o.Variant)
		}
		if o.Train == "" {
			o.Train = DefaultTrain
		}
		if _, _, err := ParseTrain(o.Train); err != nil {
			return err
		}
	}
	if o.Jobs <= 0 {
		o.Jobs = 2
	}
	words, err := CheckExtraCFLAGS(o.ExtraCFLAGS)
	if err != nil {
		return err
	}
	// As a record keeps it: one space between words.
	o.ExtraCFLAGS = strings.Join(words, " ")
	switch {
	case o.TrainDuration == 0:
		o.TrainDuration = DefaultTrainDuration
	case o.TrainDuration < time.Second:
		return fmt.Errorf("--train-duration %s: a training needs at least 1s of load to leave a profile; give e.g. --train-duration %s", o.TrainDuration, DefaultTrainDuration)
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return nil
}

// builder carries one build's state.
type builder struct {
	o         Options
	build     *Account
	labAcct   *Account
	work      string // .work/tmp-RAND
	src       string // the unpacked tree
	logs      string
	rec       Record
	phpName   string // the installed PHP release, "8.2"
	target    string // the release built: phpName or Options.PHP ("8.4")
	installed string // installed php-fpm package version
	cached    bool   // the key was already built
	objects   int    // the Makefile's object count (compileProgress)
	// trainFPM is the php-fpm training runs (default: the tree's
	// sapi/fpm/php-fpm) and trainProfiles the glob of the profile files
	// it must write (default: GCC's *.gcda).
	trainFPM, trainProfiles string
}

// Build makes the build o asks for, or returns the complete one with the
// same request. Cancelling ctx (Ctrl-C) stops every process of the build
// and leaves nothing listed.
func Build(ctx context.Context, o Options) (*Result, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if _, err := EnsureCache(); err != nil {
		return nil, err
	}
	unlock, err := lockCache()
	if err != nil {
		return nil, err
	}
	defer unlock()
	b := &builder{o: o}
	release, err := b.start(ctx, true)
	if err != nil {
		return nil, err
	}
	defer release()
	if !o.Rebuild {
		if r := b.sameRequest(); r != nil {
			b.announce(r, "already built")
			return &Result{Record: r, Cached: true}, nil
		}
	}
	if err := b.checkDeps(ctx, BaseDeps); err != nil {
		return nil, err
	}
	if err := b.mkWork(); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			b.discard(true)
		}
	}()
	r, err := b.run(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("build interrupted: every process of it was stopped and nothing was kept (%w)", ctx.Err())
		}
		return nil, err
	}
	ok = true
	if b.cached {
		b.discard(false)
	}
	return &Result{Record: r, Cached: b.cached}, nil
}

// start takes what every build needs once the cache is locked: the build
// account (and the lab's, for training) and its machine-wide lock, with
// what an interrupted build left cleaned up, and the installed PHP.
// release gives the account's lock back.
func (b *builder) start(ctx context.Context, withLab bool) (release func(), err error) {
	release = func() {}
	if b.build, err = BuildAccount(); err != nil {
		return nil, err
	}
	if withLab {
		if b.labAcct, err = LabAccount(); err != nil {
			return nil, err
		}
	}
	if b.build.drop {
		if release, err = lockAccount(); err != nil {
			return nil, err
		}
	}
	b.cleanStale()
	if b.phpName, b.installed, err = installedFPM(ctx); err != nil {
		release()
		return nil, err
	}
	if err = CheckPHP(b.o.PHP, b.phpName); err != nil {
		release()
		return nil, err
	}
	b.target = b.phpName
	if b.o.PHP != "" {
		b.target = b.o.PHP
	}
	return release, nil
}

// sourceDesc is how the record and the request match name the source.
func (b *builder) sourceDesc() string {
	if b.o.Source == "" {
		return "apt-get source php" + b.target
	}
	abs, err := filepath.Abs(b.o.Source)
	if err != nil {
		abs = b.o.Source
	}
	return abs
}

// sameRequest finds a complete build of the same request (source, variant,
// minimal, training, installed version): a rebuild of an existing key is
// instant without fetching anything. --rebuild skips it.
func (b *builder) sameRequest() *Record {
	rs, _ := List()
	for _, r := range rs {
		if r.Source == b.sourceDesc() && r.Variant == b.o.Variant && r.Minimal == b.o.Minimal &&
			r.Training == b.trainingDesc() && r.Installed == b.installed && (r.Training == "" || r.TrainRecipe == TrainRecipe) &&
			r.ExtraCFLAGS == b.o.ExtraCFLAGS {
			return r
		}
	}
	return nil
}

// trainingDesc is the record's "APP:WORKLOAD", with " for DURATION" when
// the training ran other than DefaultTrainDuration: a longer training is
// another profile, so another build (the default stays out of the
// description so the keys of builds made before --train-duration hold).
func (b *builder) trainingDesc() string {
	if !Trained(b.o.Variant) {
		return ""
	}
	app, wl, _ := ParseTrain(b.o.Train)
	d := app + ":" + wl
	if b.o.TrainDuration != DefaultTrainDuration {
		d += " for " + b.o.TrainDuration.String()
	}
	return d
}

// cleanStale kills what an interrupted build left running and removes its
// work directories. The lock is held: no build runs.
func (b *builder) cleanStale() {
	if b.build.drop {
		if n := reapAccount(b.build.UID); n > 0 {
			fmt.Fprintf(b.o.Progress, "build: stopped %d process(es) an interrupted build left\n", n)
		}
	}
	work := filepath.Join(Dir(), ".work")
	ents, _ := os.ReadDir(work)
	for _, e := range ents {
		p := filepath.Join(work, e.Name())
		if strings.HasPrefix(e.Name(), "tmp-") {
			b.stopTraining(p)
		}
		if e.Name() != "apt" {
			_ = os.RemoveAll(p)
		}
	}
	stages, _ := filepath.Glob(filepath.Join(Dir(), ".stage-*"))
	for _, s := range stages {
		_ = os.RemoveAll(s)
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// mkWork creates the work tree: root-owned, the source directory the
// build account's, the profile directory the lab account's.
func (b *builder) mkWork() error {
	b.work = filepath.Join(Dir(), ".work", "tmp-"+randHex(6))
	b.logs = filepath.Join(b.work, "logs")
	for _, d := range []string{b.work, b.logs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	uid, gid := b.build.ids()
	src := filepath.Join(b.work, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		return err
	}
	if uid >= 0 {
		if err := os.Lchown(src, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// discard removes the work tree of a build that did not complete, after
// its processes are gone.
func (b *builder) discard(failed bool) {
	if b.work == "" {
		return
	}
	b.stopTraining(b.work)
	if b.build.drop {
		reapAccount(b.build.UID)
	}
	if failed {
		// The logs of the last failed build are kept (root's files).
		keep := filepath.Join(Dir(), ".failed-logs")
		_ = os.RemoveAll(keep)
		_ = os.Rename(b.logs, keep)
	}
	_ = os.RemoveAll(b.work)
	b.work = ""
}

// logFile opens logs/NAME.log (root's, written from the children's pipes).
func (b *builder) logFile(name string) (*os.File, error) {
	return os.OpenFile(filepath.Join(b.logs, name+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o644)
}

// timed runs one named step, printing its start and elapsed time, and
// records it.
func (b *builder) timed(name string, f func(log io.Writer) error) error {
	lf, err := b.logFile(name)
	if err != nil {
		return err
	}
	defer lf.Close()
	start := time.Now()
	fmt.Fprintf(b.o.Progress, "build: %-10s ...\n", name)
	stop := b.ticker(name, start)
	err = f(lf)
	stop()
	d := time.Since(start)
	b.rec.Steps = append(b.rec.Steps, Step{Name: name, Seconds: round1(d.Seconds()), Log: name + ".log"})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		return fmt.Errorf("%s failed after %s: %v\n%s\nfull log: %s", name, d.Round(time.Second), err, tailFile(lf.Name(), 12),
			filepath.Join(Dir(), ".failed-logs", filepath.Base(lf.Name())))
	}
	fmt.Fprintf(b.o.Progress, "build: %-10s done in %s\n", name, d.Round(100*time.Millisecond))
	return nil
}

// ticker prints the step's elapsed time every 30 s while it runs and, for
// the compiling steps, how far make has got (see compileProgress).
func (b *builder) ticker(name string, start time.Time) func() {
	done := make(chan struct{})
	compiling := name == "make" || name == "prof-gen" || name == "prof-use"
	go func() {
		t := time.NewTicker(30 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				progress := ""
				if compiling {
					progress = b.compileProgress()
				}
				fmt.Fprintf(b.o.Progress, "build: %-10s %s%s elapsed\n", name, progress, time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() { close(done) }
}

// loRuleRE matches a Makefile rule that compiles one object (path/x.lo: ...).
const loRuleRE = `^[^[:space:]#][^:]*\.lo:`

// compileProgress says how many of the Makefile's objects exist so far,
// "45% (231 of 514 objects), ". It counts as the build account (root reads
// nothing of the build tree); "" when it cannot tell.
func (b *builder) compileProgress() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if b.objects == 0 {
		out, err := b.output(ctx, b.src, nil, "grep", "-c", loRuleRE, "Makefile")
		if n, perr := strconv.Atoi(strings.TrimSpace(out)); err == nil && perr == nil && n > 0 {
			b.objects = n
		} else {
			return ""
		}
	}
	out, err := b.output(ctx, b.src, nil, "find", ".", "-name", "*.lo", "-printf", "x")
	if err != nil {
		return ""
	}
	done := min(len(out), b.objects)
	return fmt.Sprintf("%d%% (%d of %d objects), ", 100*done/b.objects, done, b.objects)
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }

// tailFile returns the last n lines of root's own log file.
func tailFile(path string, n int) string {
	data, err := readOwned(path, 1<<30)
	if err != nil {
		return ""
	}
	if len(data) > 64<<10 {
		data = data[len(data)-64<<10:]
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  | " + strings.Join(lines, "\n  | ")
}

// as returns a step of the build account in dir writing to out.
func (b *builder) as(dir string, out io.Writer, env ...string) step {
	return step{acct: b.build, dir: dir, env: env, out: out}
}

// output runs a short command as the build account and returns its output.
func (b *builder) output(ctx context.Context, dir string, env []string, bin string, args ...string) (string, error) {
	var buf bytes.Buffer
	err := b.as(dir, &limitedBuffer{b: &buf, n: 4 << 20}, env...).run(ctx, bin, args...)
	return buf.String(), err
}

// limitedBuffer keeps the first n bytes written to it.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *builder) run(ctx context.Context) (*Record, error) {
	o := b.o
	b.rec = Record{Schema: 1, Variant: o.Variant, Minimal: o.Minimal, Installed: b.installed, Source: b.sourceDesc(), Training: b.trainingDesc()}
	if err := b.timed("fetch", func(log io.Writer) error { return b.fetch(ctx, log) }); err != nil {
		return nil, err
	}
	b.rec.Older = OlderThan(b.rec.SourceVersion, b.installed)
	if err := b.timed("flags", func(log io.Writer) error { return b.flags(ctx, log) }); err != nil {
		return nil, err
	}
	if extra := o.ExtraCFLAGS; extra != "" {
		// After Debian's, so that -O3 or -fno-… win over its -O2 and
		// -f… (gcc takes the last of two that contradict).
		b.rec.CFLAGS += " " + extra
		b.rec.ExtraCFLAGS = extra
	}
	compiled, bolt, _ := Compiled(o.Variant)
	if compiled == VariantPGOLTO {
		// Link-time optimisation across the whole binary (and each shared
		// extension), in both compiles: gcc needs the flag when compiling
		// and when linking.
		b.rec.CFLAGS += " " + ltoFlag
		b.rec.LDFLAGS += " " + ltoFlag
	}
	deps := append(Deps(b.rec.Configure), o.ExtraDeps...)
	if bolt {
		// BOLT moves functions only in a binary that kept its relocations,
		// and handles gcc's hot/cold split functions (foo.cold) only in
		// part: it skipped 80 of them in php-fpm. Unsplit, BOLT does the
		// splitting itself. (bolt-16's output of php-fpm crashed at start
		// either way: docs/build.md.)
		b.rec.LDFLAGS += " " + boltLinkFlag
		b.rec.CFLAGS += " " + boltCompileFlag
		deps = append(deps, boltPackage)
	}
	if err := b.checkDeps(ctx, deps); err != nil {
		return nil, err
	}
	training := b.rec.Training
	if training != "" {
		b.rec.TrainRecipe = TrainRecipe
		training += fmt.Sprintf(" recipe %d", TrainRecipe)
	}
	keyFl := keyFlags(b.rec.CFLAGS) + " " + b.rec.LDFLAGS
	if compiled == VariantPGOLTO {
		keyFl += " " + strings.Join(ltoMakeArgs(), " ")
	}
	key := Key(KeyParts{SourceVersion: b.rec.SourceVersion + " " + b.rec.SourcePackage, SourceDigest: b.rec.Source,
		Variant: o.Variant, Configure: b.rec.Configure, CFLAGS: keyFl, Training: training})
	b.rec.Key, b.rec.ID = key, IDOf(key)
	if r, err := Load(b.rec.ID); err == nil && !o.Rebuild {
		b.cached = true
		b.announce(r, "already built")
		return r, nil
	}
	b.announce(&b.rec, "")
	env := []string{"CFLAGS=" + b.rec.CFLAGS, "CPPFLAGS=" + b.rec.CPPFLAGS, "LDFLAGS=" + b.rec.LDFLAGS, "EXTENSION_DIR=" + b.rec.ExtDir}
	if err := b.timed("buildconf", func(log io.Writer) error {
		return b.as(b.src, log).run(ctx, "./buildconf", "--force")
	}); err != nil {
		return nil, err
	}
	if err := b.timed("configure", func(log io.Writer) error {
		return b.as(b.src, log, env...).run(ctx, "./configure", b.rec.Configure...)
	}); err != nil {
		return nil, err
	}
	jobs := "-j" + strconv.Itoa(o.Jobs)
	prof := filepath.Join(b.work, "prof")
	// makeArgs are make's arguments for a compile with extra PROF_FLAGS
	// (none for plain). A BOLT variant also names its link flag in
	// EXTRA_LDFLAGS_PROGRAM, the variable PHP's program links (php-fpm's
	// among them) put before LDFLAGS.
	// Added to what configure put there (read from the Makefile as the
	// build account), not instead of it.
	var programLD string
	if bolt {
		out, err := b.output(ctx, b.src, nil, "sed", "-n", "s/^EXTRA_LDFLAGS_PROGRAM *= *//p", "Makefile")
		if err != nil {
			return nil, fmt.Errorf("reading EXTRA_LDFLAGS_PROGRAM from the Makefile: %v", err)
		}
		programLD = strings.TrimSpace(strings.Join(strings.Fields(out), " ") + " " + boltLinkFlag)
	}
	makeArgs := func(profFlags string) []string {
		args := []string{jobs}
		if compiled == VariantPGOLTO {
			args = append(args, ltoMakeArgs()...)
		}
		if profFlags != "" {
			args = append(args, "PROF_FLAGS="+profFlags)
		}
		if programLD != "" {
			args = append(args, "EXTRA_LDFLAGS_PROGRAM="+programLD)
		}
		return append(args, "all")
	}
	switch compiled {
	case VariantPlain:
		if err := b.timed("make", func(log io.Writer) error {
			return b.as(b.src, log).run(ctx, "make", makeArgs("")...)
		}); err != nil {
			return nil, err
		}
	case VariantPGO, VariantPGOLTO:
		if err := b.mkProfDir(prof); err != nil {
			return nil, err
		}
		if err := b.timed("prof-gen", func(log io.Writer) error {
			return b.as(b.src, log, "CCACHE_DISABLE=1").run(ctx, "make",
				makeArgs("-fprofile-generate -fprofile-dir="+prof+" -fprofile-update=atomic")...)
		}); err != nil {
			return nil, err
		}
		if err := b.timed("train", func(log io.Writer) error {
			info, err := b.train(ctx, prof, log)
			b.rec.TrainInfo = info
			return err
		}); err != nil {
			return nil, err
		}
		if err := b.timed("prof-use", func(log io.Writer) error {
			if err := b.as(b.src, log).run(ctx, "make", "prof-clean"); err != nil {
				return err
			}
			return b.as(b.src, log, "CCACHE_DISABLE=1").run(ctx, "make",
				makeArgs("-fprofile-use -fprofile-dir="+prof+" -fprofile-correction -Wno-missing-profile")...)
		}); err != nil {
			return nil, err
		}
	}
	if bolt {
		if err := b.bolt(ctx); err != nil {
			return nil, err
		}
	}
	if err := b.timed("check", func(log io.Writer) error { return b.checkExtensions(ctx, log) }); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Progress, "build: %s\n", SummarizeExt(b.rec.Extensions))
	if b.rec.ExtNote != "" {
		fmt.Fprintf(o.Progress, "build: %s\n", b.rec.ExtNote)
	}
	return b.complete()
}

// foreign reports whether the build is of another PHP release than the
// installed one (--php 8.4 on Debian 12's 8.2).
func (b *builder) foreign() bool { return b.target != b.phpName }

// announce names the build on the progress stream, with the security
// warning when its source is older than the installed PHP.
func (b *builder) announce(r *Record, what string) {
	line := r.Summary()
	if what != "" {
		line += " (" + what + ")"
	}
	fmt.Fprintf(b.o.Progress, "build: %s\n", line)
	if note := r.SecurityNote(); note != "" {
		fmt.Fprintln(b.o.Progress, "build: "+note)
	}
}

var prefixMapRE = regexp.MustCompile(`-f(file|debug|macro)-prefix-map=\S+`)

// keyFlags drops the flags that name the (random) work directory.
func keyFlags(s string) string {
	return strings.Join(strings.Fields(prefixMapRE.ReplaceAllString(s, "")), " ")
}

// mkProfDir creates the directory training writes profiles into: the lab
// account's (its php-fpm writes them), readable by the build account.
func (b *builder) mkProfDir(prof string) error {
	if err := os.Mkdir(prof, 0o755); err != nil {
		return err
	}
	if uid, gid := b.labAcct.ids(); uid >= 0 {
		return os.Lchown(prof, uid, gid)
	}
	return nil
}

// installedFPM finds the installed phpX.Y-fpm package: "8.2" and its
// version. (dpkg-query is the distro's; no build binary runs as root.)
func installedFPM(ctx context.Context) (name, version string, err error) {
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f", "${Package} ${Version} ${db:Status-Abbrev}\n", "php*-fpm").Output()
	if err != nil && len(out) == 0 {
		return "", "", fmt.Errorf("no php-fpm package is installed (dpkg-query: %v); phptune builds the installed PHP: run phptune setup", err)
	}
	re := regexp.MustCompile(`^php(\d+\.\d+)-fpm (\S+) ii`)
	for _, line := range strings.Split(string(out), "\n") {
		if m := re.FindStringSubmatch(line); m != nil && (name == "" || versionLess(name, m[1])) {
			name, version = m[1], m[2]
		}
	}
	if name == "" {
		return "", "", errors.New("no phpX.Y-fpm package is installed; phptune builds the installed PHP: run phptune setup")
	}
	return name, version, nil
}

var verNumRE = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)`)

// versionLess compares the leading X.Y[.Z] of two versions.
func versionLess(a, b string) bool {
	pa, pb := versionParts(a), versionParts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

func versionParts(v string) [3]int {
	var out [3]int
	for i, f := range strings.SplitN(v, ".", 3) {
		n := 0
		for _, c := range f {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
		}
		out[i] = n
	}
	return out
}

// OlderThan reports whether PHP version src ("8.2.32") is older than the
// installed package version ("8.2.36-1~deb12u1").
func OlderThan(src, installed string) bool {
	m := verNumRE.FindString(installed)
	if m == "" || verNumRE.FindString(src) == "" {
		return false
	}
	return versionLess(src, m)
}

// checkDeps finds missing packages; as root (without NoInstall) it
// installs them, otherwise it fails with the exact line to run.
func (b *builder) checkDeps(ctx context.Context, pkgs []string) error {
	missing := missingPackages(ctx, pkgs)
	if len(missing) == 0 {
		return nil
	}
	line := "apt-get install -y --no-install-recommends " + strings.Join(missing, " ")
	if os.Geteuid() != 0 || b.o.NoInstall {
		return &MissingDepsError{Packages: missing, Line: line}
	}
	fmt.Fprintf(b.o.Progress, "build: installing the build dependencies: %s\n", line)
	if err := setup.InstallMissing(ctx, missing, b.o.Progress); err != nil {
		return fmt.Errorf("installing the build dependencies failed: %v; run as root: apt-get update && %s", err, line)
	}
	return nil
}

// MissingDepsError is a build that cannot start for want of packages.
type MissingDepsError struct {
	Packages []string
	Line     string
}

func (e *MissingDepsError) Error() string {
	return fmt.Sprintf("missing build dependencies: %s; as root run:\n  apt-get update && %s", strings.Join(e.Packages, " "), e.Line)
}

func missingPackages(ctx context.Context, pkgs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range pkgs {
		if seen[p] {
			continue
		}
		seen[p] = true
		o, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${db:Status-Abbrev}", p).Output()
		if err != nil || !strings.HasPrefix(string(o), "ii") {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// flags evaluates debian/rules as the build account and derives the
// configure line and compiler flags.
func (b *builder) flags(ctx context.Context, log io.Writer) error {
	if _, err := os.Lstat(filepath.Join(b.src, "debian", "rules")); err != nil {
		return fmt.Errorf("%s has no debian/rules: phptune takes Debian's configure choices from the php source package's rules; give a directory unpacked by `apt-get source php%s` (or its tarball), or leave --source out", b.rec.Source, b.target)
	}
	// A full build also compiles the shared extensions the installed
	// php-fpm enables, with Debian's flags for each (extbuild.go).
	var enabled []Module
	var extVars []string
	if !b.o.Minimal {
		var err error
		if enabled, err = EnabledModules(filepath.Join("/etc/php", b.phpName, "fpm", "conf.d")); err != nil {
			return err
		}
		for _, m := range enabled {
			extVars = append(extVars, ExtConfigVar(m.Name))
		}
	}
	out, err := b.output(ctx, b.src, nil, "make", "-s", "--no-print-directory", "-f", "debian/rules", "--eval", RulesEval(extVars...), "phptune-print-vars")
	fmt.Fprint(log, out)
	if err != nil {
		return fmt.Errorf("evaluating debian/rules: %v: %s", err, lastLines(out, 5))
	}
	vars, err := ParseRulesOutput(out)
	if err != nil {
		return err
	}
	if vars["PHP_NAME_VERSION"] != b.target {
		if b.target == b.phpName {
			return fmt.Errorf("the source is PHP %s but the installed php-fpm is %s: the distro's extensions would not load; give a php%s source, or build that release with --php %s", vars["PHP_NAME_VERSION"], b.phpName, b.phpName, vars["PHP_NAME_VERSION"])
		}
		return fmt.Errorf("the source is PHP %s but --php asks for %s; give a php%s source", vars["PHP_NAME_VERSION"], b.target, b.target)
	}
	words, err := SplitWords(vars["fpm_config"])
	if err != nil {
		return fmt.Errorf("%w: fpm_config: %v", ErrRules, err)
	}
	opc, err := SplitWords(vars["opcache_config"])
	if err != nil {
		return fmt.Errorf("%w: opcache_config: %v", ErrRules, err)
	}
	if b.rec.Configure, err = ConfigureArgs(words, opc, b.o.Minimal); err != nil {
		return err
	}
	if b.rec.Configure, b.rec.Built, err = ExtensionArgs(b.rec.Configure, enabled, vars); err != nil {
		return err
	}
	if b.foreign() {
		b.rec.DistroPHP = b.phpName
		b.rec.Unavailable = ForeignUnavailable(enabled, b.rec.Built)
		if len(b.rec.Unavailable) > 0 {
			msg := fmt.Sprintf("build: PHP %s's source has no %s, which the installed php-fpm %s enables (Debian 12 builds them for PHP %s only): a lab of this build runs without them, and a site that needs one cannot run on it",
				b.target, strings.Join(b.rec.Unavailable, ", "), b.phpName, b.phpName)
			fmt.Fprintln(b.o.Progress, msg)
			fmt.Fprintln(log, msg)
		}
	}
	api := vars["PHP_ZEND_VERSION"]
	if !regexp.MustCompile(`^\d{8}$`).MatchString(api) {
		return fmt.Errorf("%w: PHP_ZEND_VERSION %q is not a module API number", ErrRules, api)
	}
	b.rec.PHPAPI, b.rec.ExtDir = api, "/usr/lib/php/"+api
	env := BuildFlagsEnv(vars)
	for _, f := range []struct {
		name string
		dst  *string
	}{{"CFLAGS", &b.rec.CFLAGS}, {"CPPFLAGS", &b.rec.CPPFLAGS}, {"LDFLAGS", &b.rec.LDFLAGS}} {
		v, err := b.output(ctx, b.src, env, "dpkg-buildflags", "--get", f.name)
		if err != nil {
			return fmt.Errorf("dpkg-buildflags --get %s: %v", f.name, err)
		}
		*f.dst = strings.TrimSpace(v)
		fmt.Fprintf(log, "%s=%s\n", f.name, *f.dst)
	}
	fmt.Fprintf(log, "configure %s\n", strings.Join(b.rec.Configure, " "))
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// checkExtensions loads every distro extension (mods-available, in conf.d
// order) into the built php-cli, run as the build account.
func (b *builder) checkExtensions(ctx context.Context, log io.Writer) error {
	avail := filepath.Join("/etc/php", b.phpName, "mods-available")
	ents, err := os.ReadDir(avail)
	if err != nil {
		return fmt.Errorf("reading the distro's extension list %s: %v", avail, err)
	}
	var mods []Module
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".ini") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(avail, e.Name()))
		if err != nil {
			continue
		}
		if m, ok := ParseModIni(string(data)); ok {
			// opcache is always the build's own (labs load it, see ForLab).
			if slices.Contains(b.rec.Built, m.Name) || m.Name == "opcache" {
				m.Path = filepath.Join(b.src, "modules", m.Name+".so")
				mods = append(mods, m)
			} else if b.foreign() {
				continue // the distro's are built for another module API
			} else if _, err := os.Stat(filepath.Join(b.rec.ExtDir, m.Name+".so")); err == nil {
				mods = append(mods, m)
			}
		}
	}
	SortModules(mods)
	php := filepath.Join(b.src, "sapi", "cli", "php")
	out, err := b.output(ctx, b.src, nil, php, CheckArgs(b.rec.ExtDir, mods)...)
	fmt.Fprint(log, out)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the built php-cli failed the extension check: %v: %s", err, lastLines(out, 5))
	}
	b.rec.Extensions = ParseCheckOutput(out, mods)
	for _, name := range b.rec.Unavailable {
		b.rec.Extensions = append(b.rec.Extensions, ExtResult{Name: name, Reason: UnavailableReason(b.target, b.phpName)})
	}
	failed := 0
	for i, r := range b.rec.Extensions {
		b.rec.Extensions[i].Own = slices.Contains(b.rec.Built, r.Name) || r.Name == "opcache"
		if !r.Loaded && !slices.Contains(b.rec.Unavailable, r.Name) {
			failed++
			fmt.Fprintf(log, "NOT LOADED %s: %s\n", r.Name, r.Reason)
		}
	}
	if failed > 0 && OlderThan(b.rec.SourceVersion, b.installed) {
		b.rec.ExtNote = fmt.Sprintf("the distro's extensions were built for the installed PHP %s; this source is %s, older: those that need core symbols added since (\"undefined symbol\") cannot load into it", b.installed, b.rec.SourceVersion)
	}
	// The build's own opcache, which labs of the build load instead of the
	// distro's (see ConfigureArgs): a build without a working one fails.
	own := []Module{{Name: "opcache", Zend: true, Path: filepath.Join(b.src, "modules", "opcache.so")}}
	out, err = b.output(ctx, b.src, nil, php, CheckArgs(b.rec.ExtDir, own)...)
	fmt.Fprint(log, out)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if r := ParseCheckOutput(out, own)[0]; err != nil || !r.Loaded {
		return fmt.Errorf("the build's own opcache does not load into its php: %s (%v)", r.Reason, err)
	}
	return nil
}

// complete copies the binaries into a root-owned stage, writes the record
// and renames the stage into place.
func (b *builder) complete() (*Record, error) {
	b.rec.Created = time.Now().UTC().Format(time.RFC3339)
	b.rec.Older = OlderThan(b.rec.SourceVersion, b.installed)
	stage := filepath.Join(Dir(), ".stage-"+b.rec.ID)
	_ = os.RemoveAll(stage)
	if err := os.Mkdir(stage, 0o755); err != nil {
		return nil, err
	}
	bin := filepath.Join(stage, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		return nil, err
	}
	for _, c := range [][2]string{{"sapi/fpm/php-fpm", "php-fpm"}, {"sapi/cli/php", "php"}, {"sapi/cgi/php-cgi", "php-cgi"}, {"modules/opcache.so", "opcache.so"}} {
		if err := b.copyBinary(c[0], filepath.Join(bin, c[1])); err != nil {
			return nil, err
		}
	}
	if len(b.rec.Built) > 0 {
		ext := filepath.Join(stage, "ext")
		if err := os.Mkdir(ext, 0o755); err != nil {
			return nil, err
		}
		for _, name := range b.rec.Built {
			if err := b.copyBinary(filepath.Join("modules", name+".so"), filepath.Join(ext, name+".so")); err != nil {
				return nil, err
			}
		}
	}
	if err := os.Rename(b.logs, filepath.Join(stage, "logs")); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(&b.rec, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(stage, "record.json"), append(data, '\n'), 0o644); err != nil {
		return nil, err
	}
	final := filepath.Join(Dir(), b.rec.ID)
	if _, err := os.Lstat(final); err == nil {
		// --rebuild of an existing key: the old one goes first.
		if err := os.Rename(final, filepath.Join(Dir(), ".work", "old-"+b.rec.ID+"-"+randHex(4))); err != nil {
			return nil, err
		}
	}
	if err := os.Rename(stage, final); err != nil {
		return nil, err
	}
	_ = os.RemoveAll(b.work)
	b.work = ""
	r := b.rec
	return &r, nil
}

// copyBinary copies the binary the build account made at rel under the
// build's tree into a root-owned 0755 file, walking the tree from its
// root-made work directory without following a link at any level and
// refusing anything but a regular file (openTreeFile).
func (b *builder) copyBinary(rel, to string) error {
	from, err := filepath.Rel(b.work, filepath.Join(b.src, rel))
	if err != nil || b.work == "" {
		return fmt.Errorf("the build tree %s is not inside its work directory %s", b.src, b.work)
	}
	in, err := openTreeFile(b.work, from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, 1<<30)); err != nil {
		out.Close()
		return err
	}
	if err := out.Chmod(0o755); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// fileDigest is the sha256 of a file (a --source tarball).
func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
