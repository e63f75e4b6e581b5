package phpbuild

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
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
	defer b.discardUnless(&ok)
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

// run builds PHP: it plans the build (source, flags, cache key) and, unless
// the cache has the same build, compiles, checks and installs it.
func (b *builder) run(ctx context.Context) (*Record, error) {
	if err := b.plan(ctx); err != nil {
		return nil, err
	}
	if r, err := Load(b.rec.ID); err == nil && !b.o.Rebuild {
		b.cached = true
		b.announce(r, "already built")
		return r, nil
	}
	b.announce(&b.rec, "")
	if err := b.compile(ctx); err != nil {
		return nil, err
	}
	o := b.o
	_, bolt, _ := Compiled(o.Variant)
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

// plan fetches the source, derives Debian's configure line and compiler
// flags with the variant's and the user's additions, checks the build
// dependencies and sets the record's cache key and id.
func (b *builder) plan(ctx context.Context) error {
	o := b.o
	b.rec = Record{Schema: 1, Variant: o.Variant, Minimal: o.Minimal, Installed: b.installed, Source: b.sourceDesc(), Training: b.trainingDesc()}
	if err := b.timed("fetch", func(log io.Writer) error { return b.fetch(ctx, log) }); err != nil {
		return err
	}
	b.rec.Older = OlderThan(b.rec.SourceVersion, b.installed)
	if err := b.timed("flags", func(log io.Writer) error { return b.flags(ctx, log) }); err != nil {
		return err
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
		return err
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
	return nil
}

// compile runs buildconf, configure and make as the build account: one
// make for a plain build, two around a training run for PGO.
func (b *builder) compile(ctx context.Context) error {
	o := b.o
	compiled, _, _ := Compiled(o.Variant)
	env := []string{"CFLAGS=" + b.rec.CFLAGS, "CPPFLAGS=" + b.rec.CPPFLAGS, "LDFLAGS=" + b.rec.LDFLAGS, "EXTENSION_DIR=" + b.rec.ExtDir}
	if err := b.timed("buildconf", func(log io.Writer) error {
		return b.as(b.src, log).run(ctx, "./buildconf", "--force")
	}); err != nil {
		return err
	}
	if err := b.timed("configure", func(log io.Writer) error {
		return b.as(b.src, log, env...).run(ctx, "./configure", b.rec.Configure...)
	}); err != nil {
		return err
	}
	makeArgs, err := b.makeArgs(ctx)
	if err != nil {
		return err
	}
	prof := filepath.Join(b.work, "prof")
	switch compiled {
	case VariantPlain:
		if err := b.timed("make", func(log io.Writer) error {
			return b.as(b.src, log).run(ctx, "make", makeArgs("")...)
		}); err != nil {
			return err
		}
	case VariantPGO, VariantPGOLTO:
		if err := b.mkProfDir(prof); err != nil {
			return err
		}
		if err := b.timed("prof-gen", func(log io.Writer) error {
			return b.as(b.src, log, "CCACHE_DISABLE=1").run(ctx, "make",
				makeArgs("-fprofile-generate -fprofile-dir="+prof+" -fprofile-update=atomic")...)
		}); err != nil {
			return err
		}
		if err := b.timed("train", func(log io.Writer) error {
			info, err := b.train(ctx, prof, log)
			b.rec.TrainInfo = info
			return err
		}); err != nil {
			return err
		}
		if err := b.timed("prof-use", func(log io.Writer) error {
			if err := b.as(b.src, log).run(ctx, "make", "prof-clean"); err != nil {
				return err
			}
			return b.as(b.src, log, "CCACHE_DISABLE=1").run(ctx, "make",
				makeArgs("-fprofile-use -fprofile-dir="+prof+" -fprofile-correction -Wno-missing-profile")...)
		}); err != nil {
			return err
		}
	}
	return nil
}

// makeArgs returns make's arguments for a compile with extra PROF_FLAGS
// (none for plain). A BOLT variant also names its link flag in
// EXTRA_LDFLAGS_PROGRAM, the variable PHP's program links (php-fpm's among
// them) put before LDFLAGS, added to what configure put there (read from
// the Makefile as the build account), not instead of it.
func (b *builder) makeArgs(ctx context.Context) (func(profFlags string) []string, error) {
	compiled, bolt, _ := Compiled(b.o.Variant)
	jobs := "-j" + strconv.Itoa(b.o.Jobs)
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
	return makeArgs, nil
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
