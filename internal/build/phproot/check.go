package phproot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/build/phpbuild"
)

// ReleaseInfo is a PHP release phptune makes roots of: the Debian suite
// whose binaries it takes.
type ReleaseInfo struct {
	Suite  string // "trixie"
	Debian string // "13"
}

// Releases are the PHP releases `phptune php add` takes.
var Releases = map[string]ReleaseInfo{
	"8.4": {Suite: "trixie", Debian: "13"},
}

// DefaultKeyring is Debian 12's archive keyring: debian-archive-keyring
// 2023.3+deb12u1 and later hold Debian 13's signing keys too.
const DefaultKeyring = "/usr/share/keyrings/debian-archive-keyring.gpg"

// MinFree is the free space a root needs in the cache's file system
// (a root of php8.4-fpm and the usual extensions is about 300 MB).
var MinFree uint64 = 1 << 30

// fetchTimeout bounds each request of the checks to the archive.
var fetchTimeout = 20 * time.Second

// Refusal is why a root is not made, and what to do about it.
type Refusal struct {
	Reason string
	Fix    string
}

func (r *Refusal) Error() string {
	if r.Fix == "" {
		return r.Reason
	}
	return r.Reason + "; " + r.Fix
}

func refuse(fix, format string, args ...any) *Refusal {
	return &Refusal{Reason: fmt.Sprintf(format, args...), Fix: fix}
}

// ErrUnknownVersion is wrapped by CheckVersion's refusal.
var ErrUnknownVersion = errors.New("no PHP root of release")

// CheckVersion refuses a release phptune makes no roots of.
func CheckVersion(version string) (ReleaseInfo, error) {
	r, ok := Releases[version]
	if !ok {
		var vs []string
		for v, ri := range Releases {
			vs = append(vs, v+" (Debian "+ri.Debian+", "+ri.Suite+")")
		}
		sort.Strings(vs)
		return r, fmt.Errorf("%w %q: phptune makes PHP roots of %s only, from that Debian release's own packages; give one of them: phptune php add 8.4", ErrUnknownVersion, version, strings.Join(vs, ", "))
	}
	return r, nil
}

// checkTools refuses when mmdebstrap, chroot or gpgv is not on PATH.
func checkTools() error {
	if _, err := exec.LookPath("mmdebstrap"); err != nil {
		return refuse("install it: make setup (phptune setup), or apt-get install mmdebstrap", "mmdebstrap is not installed (it makes the Debian root)")
	}
	for _, t := range []string{"chroot", "gpgv"} {
		if _, err := exec.LookPath(t); err != nil {
			return refuse("install coreutils and gpgv (apt-get install gpgv)", "%s is not on PATH", t)
		}
	}
	return nil
}

// checkDisk refuses when the file system holding dir (or its nearest
// existing parent) has less than MinFree bytes free.
func checkDisk(dir string) error {
	for {
		var st syscall.Statfs_t
		err := syscall.Statfs(dir, &st)
		if err == nil {
			free := st.Bavail * uint64(st.Bsize)
			if free < MinFree {
				return refuse("free some space there, or set PHPTUNE_HOME to a larger file system", "%s has %d MiB free; a PHP root needs at least %d MiB", dir, free>>20, MinFree>>20)
			}
			return nil
		}
		parent := filepath.Dir(dir)
		if !os.IsNotExist(err) || parent == dir {
			return fmt.Errorf("free space of %s: %v", dir, err)
		}
		dir = parent
	}
}

// Mirrors are the repositories a root is made from: the release's suite
// on Debian's archive and, when the system uses one, its security suite.
type Mirrors struct {
	Archive  string // URI of the archive serving Suite
	Security string // URI of the archive serving Suite-security, or ""
}

// MirrorsFrom picks, from the system's apt sources, the archives to try
// for suite: every URI of a release suite with component main (a
// candidate for suite itself) and of a -security suite (for
// suite-security), each once, in the sources' order.
func MirrorsFrom(system []phpbuild.AptSource) (archive, security []string) {
	for _, s := range system {
		if strings.Contains(s.Suite, "/") || !slices.Contains(s.Components, "main") {
			continue
		}
		_, tail, dashed := strings.Cut(s.Suite, "-")
		switch {
		case !dashed && !slices.Contains(archive, s.URI):
			archive = append(archive, s.URI)
		case dashed && tail == "security" && !slices.Contains(security, s.URI):
			security = append(security, s.URI)
		}
	}
	return archive, security
}

// fetch GETs url with fetchTimeout, at most limit bytes.
func fetch(ctx context.Context, url string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", url, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", url, limit)
	}
	return data, nil
}

// signedRelease fetches uri's dists/suite/InRelease and checks its
// signature with keyring (gpgv): a good signature by a key whose user id
// names the Debian release ("(13/trixie)") is required. It returns the
// signed text, parsed.
func signedRelease(ctx context.Context, uri, suite string, ri ReleaseInfo, keyring string) (*Release, error) {
	url := strings.TrimRight(uri, "/") + "/dists/" + suite + "/InRelease"
	data, err := fetch(ctx, url, 16<<20)
	if err != nil {
		return nil, refuse("check the network and the mirror in /etc/apt/sources.list.d (apt-get update shows the same)", "no route to Debian's archive for %s: %v", suite, err)
	}
	dir, err := os.MkdirTemp("", "phproot-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "InRelease")
	if err := os.WriteFile(in, data, 0o600); err != nil {
		return nil, err
	}
	var status, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "gpgv", "--status-fd", "3", "--keyring", keyring, "--output", filepath.Join(dir, "Release"), in)
	cmd.Env = append(os.Environ(), "GNUPGHOME="+dir, "LC_ALL=C")
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{pw}
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	pw.Close()
	_, _ = io.Copy(&status, pr)
	pr.Close()
	_ = cmd.Wait() // one missing key makes gpgv fail though another signature is good; the status decides
	if !goodSigBy(status.String(), ri) {
		return nil, refuse(fmt.Sprintf("update the keyring (apt-get install debian-archive-keyring: Debian 12's holds Debian %s's keys from 2023.3+deb12u1) or give one that does with --keyring", ri.Debian),
			"%s holds no key of Debian %s (%s) that signs %s: %s", keyring, ri.Debian, ri.Suite, url, lastLine(stderr.String()))
	}
	text, err := os.ReadFile(filepath.Join(dir, "Release"))
	if err != nil {
		return nil, err
	}
	rel, err := ParseRelease(text)
	if err != nil {
		return nil, err
	}
	if rel.Codename != suite {
		return nil, refuse("check the mirror in the system's apt sources", "%s is the Release of %q, not Debian %s's %s", url, rel.Codename, ri.Debian, suite)
	}
	return rel, nil
}

// goodSigBy reports whether gpgv's status lines hold a GOODSIG whose user
// id names the release ("(13/trixie)").
func goodSigBy(status string, ri ReleaseInfo) bool {
	want := "(" + ri.Debian + "/" + ri.Suite + ")"
	for _, l := range strings.Split(status, "\n") {
		if strings.HasPrefix(l, "[GNUPG:] GOODSIG ") && strings.Contains(l, want) {
			return true
		}
	}
	return false
}

// lastLine is s's last non-empty line, trimmed.
func lastLine(s string) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(ls[len(ls)-1])
}
