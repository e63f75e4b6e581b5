package phpbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/base/saferead"
	"github.com/phptune/phptune/internal/stack/lab"
)

// Variants phptune builds: plain (Debian's flags), pgo (GCC profile-guided
// optimisation trained under phptune's generator), pgo-lto (pgo with
// link-time optimisation), and each of them with LLVM BOLT's layout
// optimisation of the php-fpm binary on top (bolt = plain + BOLT,
// pgo-bolt, pgo-lto-bolt; see bolt.go).
const (
	VariantPlain      = "plain"
	VariantPGO        = "pgo"
	VariantPGOLTO     = "pgo-lto"
	VariantBOLT       = "bolt"
	VariantPGOBOLT    = "pgo-bolt"
	VariantPGOLTOBOLT = "pgo-lto-bolt"
)

// Variants are every variant phptune builds, for messages.
var Variants = []string{VariantPlain, VariantPGO, VariantPGOLTO, VariantBOLT, VariantPGOBOLT, VariantPGOLTOBOLT}

// Compiled is what variant v compiles (plain, pgo or pgo-lto), BOLT aside,
// and whether BOLT rewrites the result; ok is false for an unknown v.
func Compiled(v string) (compiled string, bolt, ok bool) {
	switch v {
	case VariantPlain, VariantPGO, VariantPGOLTO:
		return v, false, true
	case VariantBOLT:
		return VariantPlain, true, true
	case VariantPGOBOLT, VariantPGOLTOBOLT:
		return strings.TrimSuffix(v, "-bolt"), true, true
	}
	return "", false, false
}

// Trained reports whether variant v trains (GCC PGO, BOLT or both).
func Trained(v string) bool {
	c, bolt, ok := Compiled(v)
	return ok && (bolt || c != VariantPlain)
}

// ltoFlag is gcc's link-time optimisation with as many jobs as make gives.
const ltoFlag = "-flto=auto"

// ltoExcluded are the objects an LTO build compiles without LTO: the two
// files that declare PHP's VM registers as global register variables (the
// VM itself, and the JIT's helpers in opcache). gcc generates LTO code at
// link time, where nothing reserves those registers, and the link fails
// ("global register variable follows a function definition": seen here
// linking opcache.so). Compiled the usual way they keep the registers the
// way a build without LTO does; everything else is optimised across files.
var ltoExcluded = []string{"Zend/zend_execute.lo", "ext/opcache/jit/zend_jit_vm_helpers.lo"}

// ltoMakeArgs are make's arguments that compile ltoExcluded without LTO:
// -fno-lto appended, for those targets only, to CFLAGS_CLEAN (which PHP's
// compile rules use, after the CFLAGS configure was given).
func ltoMakeArgs() []string {
	var args []string
	for _, t := range ltoExcluded {
		args = append(args, "--eval="+t+": CFLAGS_CLEAN += -fno-lto")
	}
	return args
}

// Record is what a completed build says about itself (record.json).
type Record struct {
	Schema  int    `json:"schema"`
	ID      string `json:"id"`
	Key     string `json:"key"` // sha256 of the key's parts
	Created string `json:"created"`
	// SourceVersion is the PHP version built ("8.2.32"), SourcePackage the
	// Debian source package version when fetched ("8.2.32-1~deb12u1"),
	// Source where it came from (apt-get source, a directory, a tarball).
	SourceVersion string `json:"source_version"`
	SourcePackage string `json:"source_package,omitempty"`
	Source        string `json:"source"`
	// Installed is the installed php-fpm package's version; Older is true
	// when the source is older than it (security fixes of the newer one
	// are missing from the build).
	Installed string   `json:"installed_version,omitempty"`
	Older     bool     `json:"older_than_installed"`
	Variant   string   `json:"variant"`
	Minimal   bool     `json:"minimal"`
	Configure []string `json:"configure"`
	CFLAGS    string   `json:"cflags"`
	// ExtraCFLAGS are the flags --cflags added to Debian's (in CFLAGS too).
	ExtraCFLAGS string `json:"extra_cflags,omitempty"`
	CPPFLAGS    string `json:"cppflags"`
	LDFLAGS     string `json:"ldflags"`
	PHPAPI      string `json:"php_api"`
	ExtDir      string `json:"extension_dir"`
	Training    string `json:"training,omitempty"` // "APP:WORKLOAD", trained variants only
	TrainInfo   string `json:"training_result,omitempty"`
	// BOLTTrainInfo is the BOLT-instrumented php-fpm's training run, and
	// BOLTStats what llvm-bolt said it changed (its dyno-stats summary).
	BOLTTrainInfo string `json:"bolt_training_result,omitempty"`
	BOLTStats     string `json:"bolt_stats,omitempty"`
	// TrainRecipe is how the training ran (TrainRecipe's value when the
	// build was made): a build trained another way is not the same request.
	TrainRecipe int    `json:"training_recipe,omitempty"`
	Steps       []Step `json:"steps"`
	// Extensions is the check of the distro's shared extensions (the
	// build's own opcache always loads: a build where it does not fails);
	// ExtNote says why many fail when the source is older.
	Extensions []ExtResult `json:"extensions"`
	// Built are the shared extensions compiled from the build's own source
	// (ext/NAME.so; see ExtensionArgs): a lab of the build loads these in
	// place of the distro's.
	Built   []string `json:"built_extensions,omitempty"`
	ExtNote string   `json:"extensions_note,omitempty"`
	// DistroPHP is set on a build of another release than the installed
	// one (--php 8.4): the installed release ("8.2") whose php.ini and
	// enabled extensions a lab of the build takes. Unavailable are the
	// extensions that release enables which the build has no copy of.
	DistroPHP   string   `json:"distro_php,omitempty"`
	Unavailable []string `json:"unavailable_extensions,omitempty"`
}

// Step is one timed step of a build.
type Step struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	Log     string  `json:"log,omitempty"` // file name in logs/
}

// SecurityNote is the plain-words warning every output naming a build
// carries when its source is older than the installed PHP or its --cflags
// turned Debian's hardening off ("" when neither).
func (r *Record) SecurityNote() string {
	var notes []string
	if r.Older {
		notes = append(notes, fmt.Sprintf("WARNING: this build is PHP %s, OLDER than the installed php-fpm %s: it lacks the security fixes made since; do not serve untrusted traffic with it (give the exact source with --source)", r.SourceVersion, r.Installed))
	}
	if off := HardeningOff(r.ExtraCFLAGS); len(off) > 0 {
		notes = append(notes, fmt.Sprintf("WARNING: this build was compiled without Debian's hardening (--cflags %s): a memory-safety bug in PHP or an extension is easier to exploit in it than in the distro's binary", strings.Join(off, " ")))
	}
	return strings.Join(notes, " ")
}

// HardeningOff are the flags of a build's --cflags that turn off hardening
// Debian compiles PHP with (stack canaries, checked memory functions,
// stack-clash and control-flow protection).
func HardeningOff(extra string) []string {
	var off []string
	for _, w := range strings.Fields(extra) {
		switch {
		case w == "-fno-stack-protector", w == "-fstack-protector", w == "-U_FORTIFY_SOURCE",
			w == "-D_FORTIFY_SOURCE=0", w == "-D_FORTIFY_SOURCE=1", w == "-D_FORTIFY_SOURCE",
			w == "-fno-stack-clash-protection", strings.HasPrefix(w, "-fcf-protection=none"):
			off = append(off, w)
		}
	}
	return off
}

// Summary is one line naming the build.
func (r *Record) Summary() string {
	s := fmt.Sprintf("%s  PHP %s  %s", r.ID, r.SourceVersion, r.Variant)
	if r.Minimal {
		s += " (minimal)"
	}
	if r.Training != "" {
		s += "  trained on " + r.Training
	}
	if r.Older {
		s += fmt.Sprintf("  OLDER than installed %s (missing security fixes)", r.Installed)
	}
	return s
}

// KeyParts are what a build's identity is made of.
type KeyParts struct {
	SourceVersion string   // PHP version and, when known, the package's
	SourceDigest  string   // a digest of a --source tarball or directory listing, or ""
	Variant       string   // plain, pgo
	Configure     []string // the configure line
	CFLAGS        string
	Training      string // "" for plain
}

// Key hashes parts: builds with equal keys are the same build.
func Key(p KeyParts) string {
	h := sha256.New()
	fmt.Fprintf(h, "phptune-build-1\x00%s\x00%s\x00%s\x00%s\x00%s\x00", p.SourceVersion, p.SourceDigest, p.Variant, p.CFLAGS, p.Training)
	for _, a := range p.Configure {
		fmt.Fprintf(h, "%s\x00", a)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// IDOf is a build's short id: the key's first 12 hex digits.
func IDOf(key string) string { return key[:12] }

var idRE = regexp.MustCompile(`^[0-9a-f]{12}$`)

// ValidID reports whether s has the form of a build id.
func ValidID(s string) bool { return idRE.MatchString(s) }

// Dir is the build cache: lab.Home()/builds.
func Dir() string { return filepath.Join(lab.Home(), "builds") }

// ensureDir makes dir a root-owned (the invoking user's) directory with
// mode, refusing a symlink or a directory someone else owns.
func ensureDir(dir string, mode os.FileMode) error {
	if err := os.Mkdir(dir, mode); err != nil && !os.IsExist(err) {
		return err
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %v (it must be a real directory, not a link)", dir, err)
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	if int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s belongs to uid %d, not to the user running phptune (uid %d): refused", dir, st.Uid, os.Geteuid())
	}
	if os.FileMode(st.Mode).Perm() != mode {
		return syscall.Fchmod(fd, uint32(mode))
	}
	return nil
}

// EnsureCache creates phptune's home and the build cache (0755: labs of
// the lab account run binaries from it; nobody but root writes it).
func EnsureCache() (string, error) {
	if _, err := lab.EnsureHome(); err != nil {
		return "", err
	}
	home := lab.Home()
	if os.Geteuid() == 0 {
		// The lab account must reach builds/ID/bin through the home (0710
		// root:phptune already lets it); the build account only reaches
		// its work tree, through o+x.
		if st, err := os.Lstat(home); err == nil && st.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(home, st.Mode().Perm()|0o001); err != nil {
				return "", err
			}
		}
	}
	d := Dir()
	for _, sub := range []string{d, filepath.Join(d, ".work")} {
		if err := ensureDir(sub, 0o755); err != nil {
			return "", fmt.Errorf("build cache: %v", err)
		}
	}
	return d, nil
}

// ErrNoBuild is wrapped when a build id names no complete build.
var ErrNoBuild = errors.New("no such build")

// Load reads the record of complete build id.
func Load(id string) (*Record, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("%w %q: a build id is 12 hex digits; list them with: phptune build list", ErrNoBuild, id)
	}
	data, err := saferead.Read(filepath.Join(Dir(), id, "record.json"), 1<<20, saferead.Mine)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%w %s; list them with: phptune build list", ErrNoBuild, id)
		}
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("build %s: record.json: %v", id, err)
	}
	if r.ID != id {
		return nil, fmt.Errorf("build %s: record.json names build %q", id, r.ID)
	}
	return &r, nil
}

// List returns every complete build, newest first. Work in progress and
// what interrupted builds left are never listed.
func List() ([]*Record, error) {
	ents, err := os.ReadDir(Dir())
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []*Record
	for _, e := range ents {
		if !e.IsDir() || !ValidID(e.Name()) {
			continue
		}
		r, err := Load(e.Name())
		if err != nil {
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created > out[j].Created })
	return out, nil
}

// Remove deletes complete build id.
func Remove(id string) error {
	if _, err := Load(id); err != nil {
		return err
	}
	unlock, err := lockCache()
	if err != nil {
		return err
	}
	defer unlock()
	dir := filepath.Join(Dir(), id)
	// Rename first: a lab looking the build up sees it complete or gone.
	gone := filepath.Join(Dir(), ".work", "rm-"+id+"-"+fmt.Sprint(time.Now().UnixNano()))
	if err := os.Rename(dir, gone); err != nil {
		return err
	}
	return os.RemoveAll(gone)
}

// Files are a complete build's files, each checked to be a regular file
// owned by the user running phptune and writable by it alone.
type Files struct {
	FPM, CLI, CGI string
	// Opcache is the build's own opcache.so: the distro's only loads into
	// the PHP release it was built for, so a lab running this build loads
	// it with zend_extension=<this path> in place of Debian's
	// 10-opcache.ini (zend_extension=opcache.so from extension_dir).
	Opcache string
	Record  *Record
}

// BuildFiles returns build id's files for a lab.
func BuildFiles(id string) (*Files, error) {
	r, err := Load(id)
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(Dir(), r.ID, "bin")
	f := &Files{FPM: filepath.Join(bin, "php-fpm"), CLI: filepath.Join(bin, "php"), CGI: filepath.Join(bin, "php-cgi"),
		Opcache: filepath.Join(bin, "opcache.so"), Record: r}
	for _, p := range []string{f.FPM, f.CLI, f.CGI, f.Opcache} {
		st, err := os.Lstat(p)
		if err != nil {
			return nil, fmt.Errorf("build %s is incomplete (%v); remove it with: phptune build rm %s", id, err, id)
		}
		sys, _ := st.Sys().(*syscall.Stat_t)
		if !st.Mode().IsRegular() || sys == nil || int(sys.Uid) != os.Geteuid() || st.Mode().Perm()&0o022 != 0 {
			return nil, fmt.Errorf("build %s: %s is not a regular file owned by uid %d and writable by it alone: refused", id, p, os.Geteuid())
		}
	}
	return f, nil
}

// Validator is a knob.BuildValidator backed by the cache: a value is valid
// when it names a complete build.
func Validator(v string) (string, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	if _, err := Load(v); err != nil {
		return "", err
	}
	return v, nil
}

// lockCache takes the build cache's exclusive lock (one build at a time,
// none removed meanwhile). It fails at once when another phptune holds it.
func lockCache() (func(), error) {
	f, err := os.OpenFile(filepath.Join(Dir(), ".lock"), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another phptune build is running (the build cache %s is locked); builds run one at a time", Dir())
	}
	return func() { f.Close() }, nil
}
