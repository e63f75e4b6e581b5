package phproot

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/phptune/phptune/internal/build/phpbuild"
)

// Options are what `phptune php add` asks for.
type Options struct {
	Version string   // "8.4"
	Home    string   // phptune's home: roots are made under Home/php-roots
	Ext     []string // modules wanted besides the host's `php -m`
	SkipExt []string // modules left out
	// HostModules are the host's modules; nil runs `php -m` (none when
	// there is no php on PATH: the root then has Base's alone).
	HostModules []string
	// Mirrors, when Archive is set, replaces the system's apt sources.
	Mirrors  Mirrors
	Keyring  string    // default DefaultKeyring
	Progress io.Writer // one line a step; nil for none
}

// Prepared is a root ready to be made: every check passed.
type Prepared struct {
	Version string
	Info    ReleaseInfo
	Mirrors Mirrors
	Keyring string
	Plan    Plan
	// Versions are the archive's versions of Plan.Packages.
	Versions map[string]string
}

// geteuid is os.Geteuid; tests replace it to reach the later checks.
var geteuid = os.Geteuid

// Prepare runs every check a root needs before anything is made, in the
// order of the refusals: the release, root, the tools, the disk, the
// keyring, the archive (route and signature), then the extensions
// against the suite's Packages index. It writes nothing.
func Prepare(ctx context.Context, o Options) (*Prepared, error) {
	ri, err := CheckVersion(o.Version)
	if err != nil {
		return nil, err
	}
	if geteuid() != 0 {
		return nil, refuse("run it as root (sudo phptune php add "+o.Version+")", "a PHP root is made as root (mmdebstrap's root mode, chroot)")
	}
	if err := checkTools(); err != nil {
		return nil, err
	}
	if err := checkDisk(Dir(o.Home)); err != nil {
		return nil, err
	}
	p := &Prepared{Version: o.Version, Info: ri, Keyring: o.Keyring}
	if p.Keyring == "" {
		p.Keyring = DefaultKeyring
	}
	if _, err := os.Stat(p.Keyring); err != nil {
		return nil, refuse("apt-get install debian-archive-keyring, or give one with --keyring", "keyring %s: %v", p.Keyring, err)
	}
	progress(o.Progress, "checking Debian's archive for %s (signed by Debian %s's key in %s)", ri.Suite, ri.Debian, p.Keyring)
	rel, err := p.findArchive(ctx, o.Mirrors, o.Progress)
	if err != nil {
		return nil, err
	}
	ix, err := packagesIndex(ctx, p.Mirrors.Archive, ri.Suite, rel)
	if err != nil {
		return nil, err
	}
	if err := p.plan(ctx, o, ix); err != nil {
		return nil, err
	}
	return p, nil
}

// findArchive sets p.Mirrors: o's when given, else the first of the
// system's archives that serves the suite signed by its key (and of its
// security archives, one that serves suite-security; none is a note on w,
// not a refusal). It returns the suite's Release.
func (p *Prepared) findArchive(ctx context.Context, o Mirrors, w io.Writer) (*Release, error) {
	archives, security := []string{o.Archive}, []string{o.Security}
	if o.Archive == "" {
		archives, security = MirrorsFrom(phpbuild.SystemSources())
	}
	if len(archives) == 0 || archives[0] == "" {
		return nil, refuse("add Debian's archive to the system's apt sources", "no Debian archive (a release suite with component main) in the system's apt sources")
	}
	var first error
	for _, a := range archives {
		rel, err := signedRelease(ctx, a, p.Info.Suite, p.Info, p.Keyring)
		if err == nil {
			p.Mirrors.Archive = a
			for _, s := range security {
				if s == "" {
					continue
				}
				_, err := signedRelease(ctx, s, p.Info.Suite+"-security", p.Info, p.Keyring)
				if err == nil {
					p.Mirrors.Security = s
					break
				}
				progress(w, "%s-security left out: %v", p.Info.Suite, err)
			}
			return rel, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// debArch is Debian's name for the machine's architecture.
func debArch() string {
	if runtime.GOARCH == "386" {
		return "i386"
	}
	return runtime.GOARCH
}

// packagesIndex downloads the suite's main Packages.gz, checks it against
// the signed Release's SHA256 and size, and parses it.
func packagesIndex(ctx context.Context, uri, suite string, rel *Release) (*Index, error) {
	path := "main/binary-" + debArch() + "/Packages.gz"
	want, ok := rel.Files[path]
	if !ok {
		return nil, refuse("use a mirror that serves it", "Debian's %s Release lists no %s", suite, path)
	}
	data, err := fetch(ctx, strings.TrimRight(uri, "/")+"/dists/"+suite+"/"+path, want.Size)
	if err != nil {
		return nil, refuse("check the network and the mirror", "fetching %s's package index: %v", suite, err)
	}
	sum := sha256.Sum256(data)
	if int64(len(data)) != want.Size || hex.EncodeToString(sum[:]) != want.SHA256 {
		return nil, refuse("try again later (a mirror being updated), or another mirror", "%s's %s does not match its signed Release's SHA256", suite, path)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return ParsePackages(zr)
}

// plan maps the wanted modules to packages, refusing the modules the
// release has no package for.
func (p *Prepared) plan(ctx context.Context, o Options, ix *Index) error {
	host := o.HostModules
	if host == nil {
		var err error
		if host, err = hostModules(ctx); err != nil {
			return err
		}
	}
	p.Plan = PlanExtensions(p.Version, append(append([]string(nil), host...), o.Ext...), o.SkipExt, ix)
	if len(p.Plan.Missing) > 0 {
		return refuse("leave them out with --skip-ext "+strings.Join(p.Plan.Missing, ","),
			"Debian %s has no PHP %s package for %s (the host's php -m or --ext asks for them)", p.Info.Debian, p.Version, strings.Join(p.Plan.Missing, ", "))
	}
	p.Versions = map[string]string{}
	for _, pkg := range p.Plan.Packages {
		if _, ok := ix.Packages[pkg]; !ok {
			return refuse("", "Debian %s's archive has no package %s", p.Info.Debian, pkg)
		}
		p.Versions[pkg] = ix.Packages[pkg].Version
	}
	return nil
}

// hostModules runs the host's `php -m`; no php on PATH is no module.
func hostModules(ctx context.Context) ([]string, error) {
	if _, err := exec.LookPath("php"); err != nil {
		return []string{}, nil
	}
	out, err := exec.CommandContext(ctx, "php", "-m").Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return nil, fmt.Errorf("php -m: %v", err)
	}
	return ParseModules(string(out)), nil
}

// progress prints one step line.
func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "php add: "+format+"\n", args...)
	}
}
