package phpbuild

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/apps"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/traffic/fcgi"
)

// The build tests compile PHP (a minimal configure: ~6 min per compile on
// a 2-core VM, see docs/build.md), so they run only when asked:
// PHPTUNE_BUILD_TESTS=1 (make test-build). Without it, with -short, when
// not root, or when the build dependencies are missing, they skip and say
// why.
func buildHome(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles PHP; skipped with -short")
	}
	if os.Getenv("PHPTUNE_BUILD_TESTS") != "1" {
		t.Skip("compiles PHP for minutes; run with PHPTUNE_BUILD_TESTS=1 (make test-build)")
	}
	if os.Geteuid() != 0 {
		t.Skip("the build tests check the accounts' separation; run as root")
	}
	if m := missingPackages(context.Background(), append(BaseDeps, "php8.2-fpm")); len(m) > 0 {
		t.Skipf("build dependencies missing: %s; run: apt-get install -y --no-install-recommends %s", strings.Join(m, " "), strings.Join(m, " "))
	}
	home := os.Getenv("PHPTUNE_BUILD_TEST_HOME")
	if home == "" {
		var err error
		if home, err = os.MkdirTemp("", "phptune-build-test-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(home) })
	}
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PHPTUNE_HOME", home)
	return home
}

// progress collects a build's progress lines and logs them.
type progress struct {
	t   *testing.T
	buf bytes.Buffer
}

func (p *progress) Write(b []byte) (int, error) {
	p.t.Logf("%s", bytes.TrimRight(b, "\n"))
	return p.buf.Write(b)
}

func listed(t *testing.T) []string {
	t.Helper()
	rs, err := List()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	return ids
}

// noLeftovers checks that no process of the build account runs and that
// the work area holds no build in progress.
func noLeftovers(t *testing.T) {
	t.Helper()
	acct, err := BuildAccount()
	if err != nil {
		t.Fatal(err)
	}
	if pids := pidsOf(acct.UID); len(pids) > 0 {
		var cmds []string
		for _, p := range pids {
			c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
			cmds = append(cmds, fmt.Sprintf("%d %s", p, bytes.ReplaceAll(c, []byte{0}, []byte{' '})))
		}
		t.Errorf("processes of %s left: %s", BuildUser, strings.Join(cmds, "; "))
	}
	ents, _ := os.ReadDir(filepath.Join(Dir(), ".work"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "tmp-") {
			t.Errorf("work directory %s left", e.Name())
		}
	}
	stages, _ := filepath.Glob(filepath.Join(Dir(), ".stage-*"))
	if len(stages) > 0 {
		t.Errorf("stages left: %v", stages)
	}
}

// TestMinimalBuild runs the whole pipeline on a minimal configure: fetch
// through the private apt configuration, flags from debian/rules,
// configure, make, the extension check; then the built php-fpm answers a
// FastCGI request as the lab account; the same request again is instant;
// the knob hook accepts the id; a failing dependency check, broken sources
// and Ctrl-C leave nothing listed and no process behind; build rm.
func TestMinimalBuild(t *testing.T) {
	home := buildHome(t)
	ctx := context.Background()
	p := &progress{t: t}
	start := time.Now()
	res, err := Build(ctx, Options{Variant: VariantPlain, Minimal: true, Progress: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("minimal plain build: %s (cached %v)", time.Since(start).Round(time.Second), res.Cached)
	r := res.Record
	if !ValidID(r.ID) || r.Variant != VariantPlain || !r.Minimal || r.SourceVersion == "" || r.PHPAPI == "" {
		t.Fatalf("record %+v", r)
	}
	if OlderThan(r.SourceVersion, r.Installed) != r.Older {
		t.Errorf("older %v for %s vs %s", r.Older, r.SourceVersion, r.Installed)
	}
	if r.Older && !strings.Contains(p.buf.String(), "OLDER") {
		t.Errorf("an older build's progress does not say so:\n%s", p.buf.String())
	}
	if !res.Cached {
		for _, want := range []string{"fetch", "flags", "buildconf", "configure", "make", "check"} {
			found := false
			for _, s := range r.Steps {
				found = found || s.Name == want
			}
			if !found {
				t.Errorf("step %s missing from %+v", want, r.Steps)
			}
		}
	}
	for _, e := range r.Extensions {
		if !e.Loaded && e.Reason == "" {
			t.Errorf("extension %s not loaded without a reason", e.Name)
		}
	}
	if !res.Cached && r.Older && r.ExtNote == "" && strings.Contains(SummarizeExt(r.Extensions), "undefined symbol") {
		t.Errorf("an older build's failing extensions carry no note")
	}

	// Completed builds are root's and not writable by anyone else.
	f, err := BuildFiles(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{f.FPM, f.CLI, f.CGI, f.Opcache, filepath.Join(Dir(), r.ID), filepath.Join(Dir(), r.ID, "record.json")} {
		st, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		if sys.Uid != 0 || st.Mode().Perm()&0o022 != 0 {
			t.Errorf("%s: uid %d mode %v; want root's, writable by root alone", path, sys.Uid, st.Mode().Perm())
		}
	}
	fpm, cli, err := Binary(r.ID)
	if err != nil || fpm != f.FPM || cli != f.CLI {
		t.Fatalf("Binary(%s) = %s, %s, %v", r.ID, fpm, cli, err)
	}

	t.Run("serves FastCGI as the lab account", func(t *testing.T) {
		lab, err := LabAccount()
		if err != nil {
			t.Fatal(err)
		}
		dir, err := os.MkdirTemp(home, "serve-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		os.Chmod(dir, 0o755)
		docroot := filepath.Join(dir, "docroot")
		if err := apps.Install("hello", docroot); err != nil {
			t.Fatal(err)
		}
		// The page says which PHP serves it and whether the build's own
		// opcache is on.
		probe := "<?php echo 'Hello, world! PHP ', PHP_VERSION, ' opcache ', (function_exists('opcache_get_status') && opcache_get_status(false) !== false) ? 'on' : 'off';\n"
		if err := os.WriteFile(filepath.Join(docroot, "probe.php"), []byte(probe), 0o644); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		resp, err := ServeOnce(cctx, f, lab, dir, r.ExtDir, filepath.Join(docroot, "probe.php"))
		if err != nil {
			t.Fatal(err)
		}
		want := "Hello, world! PHP " + r.SourceVersion + " opcache on"
		if resp.Status != 200 || string(resp.Body) != want {
			t.Fatalf("status %d body %q stderr %q; want %q", resp.Status, resp.Body, resp.Stderr, want)
		}
	})

	t.Run("cache hit is instant", func(t *testing.T) {
		start := time.Now()
		again, err := Build(ctx, Options{Variant: VariantPlain, Minimal: true, Progress: p})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); !again.Cached || again.Record.ID != r.ID || d > 2*time.Second {
			t.Fatalf("second build: cached %v id %s in %v", again.Cached, again.Record.ID, d)
		}
	})

	t.Run("knob hook", func(t *testing.T) {
		defer func(v func(string) (string, error)) { knob.BuildValidator = v }(knob.BuildValidator)
		knob.BuildValidator = Validator
		cfg, err := knob.Defaults().Apply([]string{knob.BuildKnob + "=" + strings.ToUpper(r.ID)})
		if err != nil || cfg[knob.BuildKnob] != r.ID {
			t.Fatalf("php.build=%s: %v", r.ID, err)
		}
		if _, err := knob.Defaults().Apply([]string{knob.BuildKnob + "=ffffffffffff"}); err == nil || !strings.Contains(err.Error(), "phptune build list") {
			t.Fatalf("an unknown build: %v", err)
		}
	})

	t.Run("a lab runs it and goes back to the distro's", func(t *testing.T) {
		defer func(v func(string) (string, error), h func(string) (*lab.PHPBuild, error)) {
			knob.BuildValidator, lab.PHPBuilds = v, h
		}(knob.BuildValidator, lab.PHPBuilds)
		knob.BuildValidator, lab.PHPBuilds = Validator, ForLab
		var said []string
		l, err := lab.Up(ctx, lab.Options{Name: "build-" + r.ID[:6], App: "hello", Set: []string{knob.BuildKnob + "=" + r.ID},
			Progress: func(s string) { said = append(said, s) }})
		if err != nil {
			t.Fatal(err)
		}
		defer lab.Down(l.Name)
		if !strings.Contains(strings.Join(said, "\n"), r.ID) {
			t.Errorf("lab up does not name the build: %q", said)
		}
		version := func() string {
			t.Helper()
			network, addr := l.FPMAddr()
			resp, err := fcgi.Get(ctx, network, addr, fcgi.Params("GET", "/phptune-status.php", l.StatusScript(), nil, nil), nil)
			if err != nil || resp.Status != 200 {
				t.Fatalf("status script: %v %+v", err, resp)
			}
			var st struct {
				PHPVersion string `json:"php_version"`
				Opcache    struct {
					Enabled bool `json:"enabled"`
				} `json:"opcache"`
			}
			if err := json.Unmarshal(resp.Body, &st); err != nil {
				t.Fatalf("%v: %s", err, resp.Body)
			}
			if !st.Opcache.Enabled {
				t.Errorf("opcache is off in %s: %s", st.PHPVersion, resp.Body)
			}
			return st.PHPVersion
		}
		if v := version(); v != r.SourceVersion {
			t.Fatalf("the lab's php-fpm is PHP %s; want the build's %s", v, r.SourceVersion)
		}
		installed := strings.SplitN(r.Installed, "-", 2)[0]
		if err := l.Apply(ctx, knob.Defaults()); err != nil {
			t.Fatal(err)
		}
		if v := version(); v != installed {
			t.Fatalf("after php.build=distro the lab runs PHP %s; want the distro's %s", v, installed)
		}
	})

	t.Run("missing dependency", func(t *testing.T) {
		_, err := Build(ctx, Options{Variant: VariantPlain, Minimal: true, Rebuild: true, NoInstall: true,
			ExtraDeps: []string{"phptune-no-such-package"}, Progress: p})
		var me *MissingDepsError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), "apt-get install -y --no-install-recommends phptune-no-such-package") {
			t.Fatalf("err = %v", err)
		}
		if ids := listed(t); len(ids) != 1 || ids[0] != r.ID {
			t.Fatalf("listed %v", ids)
		}
		noLeftovers(t)
	})

	t.Run("broken sources", func(t *testing.T) {
		empty := t.TempDir()
		noVersion := t.TempDir()
		os.MkdirAll(filepath.Join(noVersion, "main"), 0o755)
		os.WriteFile(filepath.Join(noVersion, "main", "php_version.h"), []byte("/* garbage */\n"), 0o644)
		os.Chmod(noVersion, 0o755)
		noRules := t.TempDir()
		os.MkdirAll(filepath.Join(noRules, "main"), 0o755)
		os.WriteFile(filepath.Join(noRules, "main", "php_version.h"), []byte("#define PHP_VERSION \"8.2.32\"\n"), 0o644)
		tarball := filepath.Join(t.TempDir(), "php.tar.gz")
		os.WriteFile(tarball, []byte("not a tarball"), 0o644)
		for _, c := range []struct{ src, want string }{
			{empty, "not a PHP source tree"},
			{noVersion, "no readable PHP_VERSION"},
			{noRules, "no debian/rules"},
			{tarball, "unpacking --source"},
			{filepath.Join(empty, "nope"), "no such file"},
		} {
			_, err := Build(ctx, Options{Variant: VariantPlain, Minimal: true, Source: c.src, Progress: p})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("--source %s: %v; want %q", c.src, err, c.want)
			}
		}
		if ids := listed(t); len(ids) != 1 || ids[0] != r.ID {
			t.Fatalf("listed %v", ids)
		}
		noLeftovers(t)
	})

	t.Run("ctrl-c", func(t *testing.T) {
		// A child process rebuilds the same key; SIGINT once make runs.
		cmd := exec.Command(os.Args[0], "-test.run=^TestBuildChild$", "-test.v")
		cmd.Env = append(os.Environ(), "PHPTUNE_BUILD_CHILD=1", "PHPTUNE_HOME="+home)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		sent := false
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			log.WriteString(line + "\n")
			if !sent && strings.Contains(line, "build: make") {
				time.Sleep(5 * time.Second) // compilers running
				acct, _ := BuildAccount()
				if len(pidsOf(acct.UID)) == 0 {
					t.Errorf("no build process to interrupt")
				}
				_ = cmd.Process.Signal(syscall.SIGINT)
				sent = true
			}
		}
		err = cmd.Wait()
		t.Logf("child:\n%s", log.String())
		if !sent {
			t.Fatalf("the child never reached make (%v)", err)
		}
		if !strings.Contains(log.String(), "build interrupted") {
			t.Errorf("the child did not say it was interrupted")
		}
		// The complete build of the same key survives; nothing else is listed.
		if ids := listed(t); len(ids) != 1 || ids[0] != r.ID {
			t.Fatalf("listed %v", ids)
		}
		if _, err := BuildFiles(r.ID); err != nil {
			t.Fatalf("the complete build was damaged: %v", err)
		}
		noLeftovers(t)
	})

	t.Run("rm", func(t *testing.T) {
		if err := Remove(r.ID); err != nil {
			t.Fatal(err)
		}
		if ids := listed(t); len(ids) != 0 {
			t.Fatalf("listed %v after rm", ids)
		}
		if _, _, err := Binary(r.ID); !errors.Is(err, ErrNoBuild) {
			t.Fatalf("Binary after rm: %v", err)
		}
		if err := Remove(r.ID); !errors.Is(err, ErrNoBuild) {
			t.Fatalf("second rm: %v", err)
		}
	})
}

// TestBuildChild is the process the Ctrl-C test interrupts.
func TestBuildChild(t *testing.T) {
	if os.Getenv("PHPTUNE_BUILD_CHILD") != "1" {
		t.Skip("run by TestMinimalBuild")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	_, err := Build(ctx, Options{Variant: VariantPlain, Minimal: true, Rebuild: true, Progress: os.Stdout})
	fmt.Println("child:", err)
}

// TestPGOMinimalBuild is the pgo pipeline on a minimal configure: make
// prof-gen, the instrumented php-fpm trained on the hello app under the
// FastCGI generator as the lab account (profiles read only by the build
// account), prof-use; the result serves.
func TestPGOMinimalBuild(t *testing.T) {
	home := buildHome(t)
	ctx := context.Background()
	p := &progress{t: t}
	start := time.Now()
	res, err := Build(ctx, Options{Variant: VariantPGO, Minimal: true, Train: "hello", TrainDuration: 10 * time.Second, Progress: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("minimal pgo build: %s (cached %v)", time.Since(start).Round(time.Second), res.Cached)
	r := res.Record
	// The master and both training workers wrote their profiles (the
	// workers' were lost before recipe 3); a training shorter than the
	// default is named with its duration (and keyed by it).
	if r.Variant != VariantPGO || r.Training != "hello:front for 10s" || !regexp.MustCompile(`profile files from [3-9] processes`).MatchString(r.TrainInfo) {
		t.Fatalf("record: variant %s training %q info %q", r.Variant, r.Training, r.TrainInfo)
	}
	var names []string
	for _, s := range r.Steps {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); !res.Cached && !strings.Contains(got, "prof-gen train prof-use check") {
		t.Errorf("steps %q", got)
	}
	servesStrings(t, home, r)
	noLeftovers(t)
	if err := Remove(r.ID); err != nil {
		t.Fatal(err)
	}
}

// servesStrings runs the build's php-fpm as the lab account and asks it
// for the strings app's page over FastCGI.
func servesStrings(t *testing.T, home string, r *Record) {
	t.Helper()
	ctx := context.Background()
	f, err := BuildFiles(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	lab, err := LabAccount()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(home, "serve-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	docroot := filepath.Join(dir, "docroot")
	if err := apps.Install("strings", docroot); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	resp, err := ServeOnce(cctx, f, lab, dir, r.ExtDir, filepath.Join(docroot, "index.php"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || !strings.Contains(string(resp.Body), "strings ok") {
		t.Fatalf("status %d body %.200q stderr %q", resp.Status, resp.Body, resp.Stderr)
	}
}

// TestBOLTMinimalBuild is the BOLT pipeline on a minimal configure: a
// plain compile linked with its relocations, llvm-bolt -instrument, the
// instrumented php-fpm trained on the hello app (one profile per
// process), merge-fdata, llvm-bolt -data; the rewritten php-fpm serves.
func TestBOLTMinimalBuild(t *testing.T) {
	home := buildHome(t)
	if m := missingPackages(context.Background(), []string{boltPackage}); len(m) > 0 {
		t.Skipf("%s is not installed; run: apt-get install -y %s", boltPackage, boltPackage)
	}
	p := &progress{t: t}
	start := time.Now()
	res, err := Build(context.Background(), Options{Variant: VariantBOLT, Minimal: true, Train: "hello", TrainDuration: 10 * time.Second, Progress: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("minimal bolt build: %s (cached %v)", time.Since(start).Round(time.Second), res.Cached)
	r := res.Record
	var names []string
	for _, s := range r.Steps {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); !res.Cached && !strings.Contains(got, "make bolt-instrument bolt-train bolt-optimize check") {
		t.Errorf("steps %q", got)
	}
	if !strings.Contains(r.LDFLAGS, boltLinkFlag) || !strings.Contains(r.CFLAGS, boltCompileFlag) || !strings.Contains(r.BOLTTrainInfo, "profile files") || r.BOLTStats == "" {
		t.Errorf("record: cflags %q, ldflags %q, bolt training %q, stats %q", r.CFLAGS, r.LDFLAGS, r.BOLTTrainInfo, r.BOLTStats)
	}
	t.Logf("BOLT: %s; %s", r.BOLTTrainInfo, r.BOLTStats)
	servesStrings(t, home, r)
	noLeftovers(t)
	if err := Remove(r.ID); err != nil {
		t.Fatal(err)
	}
}
