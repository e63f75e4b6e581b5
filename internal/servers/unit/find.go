package unit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"syscall"

	"github.com/phptune/phptune/internal/base/saferead"
)

// Binary is a unitd to run.
type Binary struct {
	Unitd string
	// ModulesDir holds php.unit.so; "" is unitd's own (NGINX's packages).
	ModulesDir string
	// Build is the id of the `phptune build unit` it comes from, "" for a
	// unitd on PATH.
	Build   string
	Version string
}

// BuildRecord is record.json of a Unit build in the build cache (package
// phpbuild writes it; the lab reads it).
type BuildRecord struct {
	Schema  int    `json:"schema"`
	ID      string `json:"id"`
	Key     string `json:"key"`
	Created string `json:"created"`
	// Version is Unit's ("1.35.0"); Source the tarball it was built from
	// and SourceSHA256 its digest.
	Version      string `json:"version"`
	Source       string `json:"source"`
	SourceSHA256 string `json:"source_sha256"`
	// PHP is the PHP it runs: Debian's libphpX.Y-embed package and version.
	PHP       string   `json:"php"`
	Configure []string `json:"configure"`
	Steps     []Step   `json:"steps"`
}

// Step is one timed step of a build.
type Step struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// BuildsDir is where Unit builds live in a build cache: CACHE/unit/ID.
func BuildsDir(cache string) string { return filepath.Join(cache, "unit") }

var idRE = regexp.MustCompile(`^[0-9a-f]{12}$`)

// InstallHint says how to get a unitd: Debian has no package.
const InstallHint = "NGINX Unit is not packaged by Debian: build it with `phptune build unit --source unit-1.35.0.tar.gz` (NGINX's source release), or install unitd and its PHP module from NGINX's own packages"

// Find returns the unitd a lab runs: one on PATH (NGINX's packages) first,
// else the newest complete build in cache (phpbuild.Dir()).
func Find(cache string) (*Binary, error) {
	if p, err := exec.LookPath("unitd"); err == nil {
		return &Binary{Unitd: p}, nil
	}
	rs, err := Builds(cache)
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, errors.New("server=unit: no unitd on PATH and no Unit build in " + BuildsDir(cache) + ". " + InstallHint)
	}
	return BinaryOf(cache, rs[0])
}

// Builds lists the complete Unit builds in cache, newest first.
func Builds(cache string) ([]*BuildRecord, error) {
	ents, err := os.ReadDir(BuildsDir(cache))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []*BuildRecord
	for _, e := range ents {
		if !e.IsDir() || !idRE.MatchString(e.Name()) {
			continue
		}
		if r, err := LoadBuild(cache, e.Name()); err == nil {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created > out[j].Created })
	return out, nil
}

// LoadBuild reads the record of Unit build id.
func LoadBuild(cache, id string) (*BuildRecord, error) {
	if !idRE.MatchString(id) {
		return nil, fmt.Errorf("no Unit build %q: an id is 12 hex digits", id)
	}
	data, err := saferead.Read(filepath.Join(BuildsDir(cache), id, "record.json"), 1<<20, saferead.MineAlone)
	if err != nil {
		return nil, err
	}
	var r BuildRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("Unit build %s: record.json: %v", id, err)
	}
	if r.ID != id {
		return nil, fmt.Errorf("Unit build %s: record.json names build %q", id, r.ID)
	}
	return &r, nil
}

// BinaryOf returns build r's files, each checked to be a regular file of
// the user running phptune that nobody else can write.
func BinaryOf(cache string, r *BuildRecord) (*Binary, error) {
	dir := filepath.Join(BuildsDir(cache), r.ID)
	b := &Binary{Unitd: filepath.Join(dir, "sbin", "unitd"), ModulesDir: filepath.Join(dir, "modules"), Build: r.ID, Version: r.Version}
	for _, p := range []string{dir, filepath.Dir(b.Unitd), b.ModulesDir, b.Unitd, filepath.Join(b.ModulesDir, "php.unit.so")} {
		if err := ownedByMe(p); err != nil {
			return nil, fmt.Errorf("Unit build %s: %v; rebuild it with: phptune build unit --rebuild --source %s", r.ID, err, r.Source)
		}
	}
	return b, nil
}

// ownedByMe checks that p (not followed if a link) belongs to the current
// user and is writable by it alone.
func ownedByMe(p string) error {
	st, err := os.Lstat(p)
	if err != nil {
		return err
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	if st.Mode()&os.ModeSymlink != 0 || sys == nil || int(sys.Uid) != os.Geteuid() || st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is not owned by uid %d and writable by it alone: refused", p, os.Geteuid())
	}
	return nil
}

// Args are unitd's command line for a lab: in the foreground, every path
// in the lab (control socket and pid in run, the log in log, its state and
// temporary files in its own directories).
func Args(b *Binary, control, pid, log, state, tmp, user, group string) []string {
	args := []string{"--no-daemon", "--control", "unix:" + control, "--control-mode", "0600",
		"--pid", pid, "--log", log, "--statedir", state, "--tmpdir", tmp, "--user", user, "--group", group}
	if b.ModulesDir != "" {
		args = append(args, "--modulesdir", b.ModulesDir)
	}
	return args
}
