// Package phpfpm renders php-fpm's configuration from a knob.Config and finds
// the distro's php-fpm binary. The lab runs php-fpm with these files; the
// tuner's recommendation is written in the same syntax.
package phpfpm

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/phptune/phptune/internal/base/confpath"
	"github.com/phptune/phptune/internal/model/knob"
)

// Binary is an installed php-fpm.
type Binary struct {
	Path    string // /usr/sbin/php-fpm8.2
	Version string // "8.2"
	// IniFile and ScanDir are the distro's php.ini and conf.d for the FPM SAPI.
	IniFile string
	ScanDir string
	// CLI is the matching php command line binary, when installed.
	CLI string
	// PinIni makes Args and TestArgs name IniFile (-c): a php-fpm built
	// for another release's /etc/php/X.Y reads this one's php.ini.
	PinIni bool
	// Prefix, when set, are the arguments Path takes before php-fpm's own:
	// Path is then a dynamic loader that runs php-fpm from another
	// Debian release's root with that release's libraries
	// ("--library-path", DIRS, ROOT/usr/sbin/php-fpm8.4).
	Prefix []string
}

// Find returns the newest php-fpm under /usr/sbin, or an error that says
// how to install one.
func Find() (*Binary, error) {
	matches, _ := filepath.Glob("/usr/sbin/php-fpm*")
	var versions []string
	for _, m := range matches {
		v := strings.TrimPrefix(filepath.Base(m), "php-fpm")
		if v != "" {
			versions = append(versions, v)
		}
	}
	if len(versions) == 0 {
		return nil, fmt.Errorf("php-fpm is not installed; run: phptune setup (or apt-get install php-fpm)")
	}
	sort.Slice(versions, func(i, j int) bool { return versionLess(versions[j], versions[i]) })
	v := versions[0]
	b := &Binary{
		Path:    "/usr/sbin/php-fpm" + v,
		Version: v,
		IniFile: "/etc/php/" + v + "/fpm/php.ini",
		ScanDir: "/etc/php/" + v + "/fpm/conf.d",
	}
	if p, err := exec.LookPath("php" + v); err == nil {
		b.CLI = p
	}
	return b, nil
}

func versionLess(a, b string) bool {
	var a1, a2, b1, b2 int
	fmt.Sscanf(a, "%d.%d", &a1, &a2)
	fmt.Sscanf(b, "%d.%d", &b1, &b2)
	if a1 != b1 {
		return a1 < b1
	}
	return a2 < b2
}

// Paths says where a rendered php-fpm lives.
type Paths struct {
	Conf    string // php-fpm.conf
	PidFile string
	Log     string
	// Listen is a unix socket path or 127.0.0.1:PORT, per the "listen" knob.
	Listen string
	// Listens, with fpm.pools above 1, holds every pool's address, the
	// first pool's first (Listen is then unused); see PoolNames.
	Listens    []string
	StatusPath string // pm.status_path
	PingPath   string // ping.path
	SlowLog    string
	// AsRoot adds user/group lines; the lab never runs php-fpm as root, so
	// it leaves this false and php-fpm runs the pool as its own user.
	AsRoot bool
	User   string
	// ListenMode, when set, is the unix socket's mode for a master that
	// does not run as root (default 0600: only the pool's own account may
	// connect). The lab sets 0666 when php-fpm runs as the app's account
	// and the socket's directory is what keeps others out.
	ListenMode string
	PoolName   string
	// ExtraPool holds extra pool settings as "name = value" lines, e.g.
	// env[...] for apps. The value is written as a quoted string, so it
	// may be a path.
	ExtraPool []string
}

// Check reports the first path, name or setting of p that php-fpm.conf
// cannot carry (see package confpath), so that a caller can refuse it
// before anything starts.
func (p Paths) Check() error {
	_, err := renderConf(knob.Defaults(), p)
	return err
}

// RenderConf renders php-fpm.conf with its pools (one unless fpm.pools
// says more; each on its own address of p.Listens), from cfg. The pool
// mirrors Debian's www.conf with the knobs applied. Every path is written as
// a quoted string. Paths that php-fpm.conf cannot carry (see Check) render
// as a refusal: a comment with the reason and an entry php-fpm rejects, so
// `php-fpm -t` fails and no pool can start from the file.
func RenderConf(cfg knob.Config, p Paths) string {
	out, err := renderConf(cfg, p)
	if err != nil {
		return refusal("[global]", err)
	}
	return out
}

// RenderPool renders the [pool] sections alone (one per pool, see
// knob.PoolsKnob): the fragment a user drops into pool.d/ (the tuner's
// recommendation uses it). It refuses as RenderConf does.
func RenderPool(cfg knob.Config, p Paths) string {
	out, err := renderPools(cfg, p)
	if err != nil {
		return refusal("[www]", err)
	}
	return out
}

// refusal is a file php-fpm refuses to load: the reason in a comment, then
// an unknown entry in section whose name carries the reason (php-fpm prints
// the names of unknown entries) in the characters an INI name may hold.
func refusal(section string, err error) string {
	msg := confpath.Summary(err)
	name := strings.Map(func(r rune) rune {
		if r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(" ,.:/_+@%?-", r)) {
			return r
		}
		return '?'
	}, "phptune refused to render this file: "+msg)
	return "; phptune refused to render this file: " + msg + "\n" + section + "\n" + strings.TrimRight(name, " ") + " = 1\n"
}

func renderConf(cfg knob.Config, p Paths) (string, error) {
	var r renderer
	r.w("; Rendered by phptune. php-fpm.conf with its pools; the pool settings")
	r.w("; mirror Debian's pool.d/www.conf with phptune's knobs applied.")
	r.w("[global]")
	r.w("pid = %s", r.path("pid", p.PidFile))
	r.w("error_log = %s", r.path("error_log", p.Log))
	r.w("log_level = notice")
	r.w("daemonize = no")
	r.w("")
	pools, err := renderPools(cfg, p)
	if r.err != nil {
		return "", r.err
	}
	if err != nil {
		return "", err
	}
	return r.b.String() + pools, nil
}

// PoolName is the name of pool i (from 0) of a configuration whose first
// pool is called first ("www" when empty): first, then first2, first3...
func PoolName(first string, i int) string {
	if first == "" {
		first = "www"
	}
	if i == 0 {
		return first
	}
	return fmt.Sprintf("%s%d", first, i+1)
}

// renderPools renders every pool of cfg (knob.Config.PoolShares), each on
// its own address of p.Listens, separated by a blank line.
func renderPools(cfg knob.Config, p Paths) (string, error) {
	shares := cfg.PoolShares()
	if len(shares) == 1 {
		if len(p.Listens) > 0 {
			p.Listen = p.Listens[0]
		}
		return renderPool(cfg, p)
	}
	if len(p.Listens) != len(shares) {
		return "", fmt.Errorf("php-fpm listen: %s=%d needs %d addresses, got %d", knob.PoolsKnob, len(shares), len(shares), len(p.Listens))
	}
	var out []string
	for i, share := range shares {
		q := p
		q.Listen, q.PoolName = p.Listens[i], PoolName(p.PoolName, i)
		pool, err := renderPool(share, q)
		if err != nil {
			return "", err
		}
		out = append(out, pool)
	}
	return strings.Join(out, "\n"), nil
}

// renderer writes lines and keeps the first refusal.
type renderer struct {
	b   strings.Builder
	err error
}

func (r *renderer) w(format string, args ...any) { fmt.Fprintf(&r.b, format+"\n", args...) }

func (r *renderer) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// path quotes a path for directive.
func (r *renderer) path(directive, p string) string {
	return r.quote(directive, p, confpath.FPM.Quote)
}

func (r *renderer) quote(directive, p string, quote func(string) (string, error)) string {
	q, err := quote(p)
	if err != nil {
		r.fail(fmt.Errorf("php-fpm %s: %w", directive, err))
	}
	return q
}

// name accepts a pool or user name written without quotes: letters,
// digits and _ . - only.
func (r *renderer) name(directive, n string) string {
	ok := n != ""
	for _, c := range n {
		ok = ok && (c < 0x80 && (unicode.IsLetter(c) || unicode.IsDigit(c)) || strings.ContainsRune("_.-", c))
	}
	if !ok {
		r.fail(fmt.Errorf("php-fpm %s: %q is not a name of letters, digits, '_', '.' and '-'", directive, n))
	}
	return n
}

// listen returns the listen address: a unix socket path quoted, or a
// host:port (or port) written as it is.
func (r *renderer) listen(addr string) string {
	if strings.HasPrefix(addr, "/") {
		return r.quote("listen", addr, confpath.FPMListen.Quote)
	}
	ok := addr != ""
	for _, c := range addr {
		ok = ok && (c < 0x80 && (unicode.IsLetter(c) || unicode.IsDigit(c)) || strings.ContainsRune(".:[]*-", c))
	}
	if !ok {
		r.fail(fmt.Errorf("php-fpm listen: %q is neither an absolute socket path nor a host:port", addr))
	}
	return addr
}

func renderPool(cfg knob.Config, p Paths) (string, error) {
	var r renderer
	name := p.PoolName
	if name == "" {
		name = "www"
	}
	r.w("[%s]", r.name("pool name", name))
	if p.AsRoot {
		r.w("user = %s", r.name("user", p.User))
		r.w("group = %s", r.name("group", p.User))
	}
	r.w("listen = %s", r.listen(p.Listen))
	if cfg["listen"] == "unix" && p.AsRoot {
		// A master running as root would own the socket itself; Debian
		// hands it to the web server's group.
		r.w("listen.owner = %s", p.User)
		r.w("listen.group = %s", p.User)
		r.w("listen.mode = 0660")
	} else if cfg["listen"] == "unix" {
		r.w("listen.mode = 0600")
	} else {
		r.w("listen.allowed_clients = 127.0.0.1")
	}
	r.w("listen.backlog = %s", cfg["listen.backlog"])
	r.w("pm = %s", cfg["pm"])
	r.w("pm.max_children = %s", cfg["pm.max_children"])
	switch cfg["pm"] {
	case "dynamic":
		r.w("pm.start_servers = %s", cfg["pm.start_servers"])
		r.w("pm.min_spare_servers = %s", cfg["pm.min_spare_servers"])
		r.w("pm.max_spare_servers = %s", cfg["pm.max_spare_servers"])
	case "ondemand":
		r.w("pm.process_idle_timeout = %ss", cfg["pm.process_idle_timeout"])
	}
	r.w("pm.max_requests = %s", cfg["pm.max_requests"])
	if p.StatusPath != "" {
		r.w("pm.status_path = %s", r.path("pm.status_path", p.StatusPath))
	}
	if p.PingPath != "" {
		r.w("ping.path = %s", r.path("ping.path", p.PingPath))
	}
	if p.SlowLog != "" {
		r.w("slowlog = %s", r.path("slowlog", p.SlowLog))
	}
	// Worker stderr goes to the error log so a failing trial keeps its cause.
	r.w("catch_workers_output = yes")
	r.w("decorate_workers_output = no")
	if cfg[knob.ZendAllocHugePagesKnob] == "on" {
		r.w("env[USE_ZEND_ALLOC_HUGE_PAGES] = 1")
	}
	for _, l := range p.ExtraPool {
		key, value := r.setting(l)
		r.w("%s = %s", key, value)
	}
	if r.err != nil {
		return "", r.err
	}
	return r.b.String(), nil
}

// setting splits an ExtraPool line into a name (letters, digits, _ . and
// one [offset], e.g. env[DB_CONFIG]) and its value, quoted.
func (r *renderer) setting(line string) (string, string) {
	key, value, ok := strings.Cut(line, "=")
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	base, offset, hasOffset := strings.Cut(key, "[")
	if hasOffset {
		offset, hasOffset = strings.CutSuffix(offset, "]")
		ok = ok && hasOffset && offset != "" && plainName(offset)
	}
	if !ok || !plainName(base) {
		r.fail(fmt.Errorf("php-fpm pool setting %q: want name = value, the name of letters, digits, '_' and '.' with at most one [offset]", line))
		return "", ""
	}
	if strings.HasPrefix(value, "$") {
		// php-fpm reads env[X] = $Y from its own environment.
		r.fail(fmt.Errorf("php-fpm %s: value %q starts with '$', which php-fpm reads as an environment variable", key, value))
	}
	return key, r.quote(key, value, confpath.FPM.QuoteValue)
}

func plainName(n string) bool {
	for _, c := range n {
		if !(c < 0x80 && (unicode.IsLetter(c) || unicode.IsDigit(c)) || c == '_' || c == '.') {
			return false
		}
	}
	return n != ""
}

// RenderIni renders the php.ini overrides for every PHP knob. It is loaded
// after the distro's own conf.d, so it wins.
func RenderIni(cfg knob.Config) string {
	var b strings.Builder
	b.WriteString("; Rendered by phptune: php.ini overrides, loaded after the distro's conf.d.\n")
	for _, k := range knob.All() {
		if k.Component != knob.PHP {
			continue
		}
		v := cfg[k.Name]
		if k.Kind == knob.Bool {
			v = map[string]string{"on": "1", "off": "0"}[v]
		}
		fmt.Fprintf(&b, "%s = %s\n", k.Name, v)
	}
	return b.String()
}

// Env returns the environment php-fpm must start with so that it reads the
// distro's php.ini and conf.d and then phptune's overrides in iniDir: a
// PHP_INI_SCAN_DIR that starts with ':' keeps the compiled-in scan directory
// and adds iniDir after it.
func Env(iniDir string) []string {
	return []string{"PHP_INI_SCAN_DIR=:" + iniDir, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
}

// Args returns php-fpm's command line for conf: foreground, so the started
// process is the master and stays in the lab's process group.
func (b *Binary) Args(conf string) []string {
	return append(b.iniArgs(), "--nodaemonize", "--fpm-config", conf)
}

// iniArgs are Prefix, then -c IniFile when PinIni is set.
func (b *Binary) iniArgs() []string {
	out := append([]string(nil), b.Prefix...)
	if b.PinIni && b.IniFile != "" {
		out = append(out, "-c", b.IniFile)
	}
	return out
}

// TestArgs returns the arguments of `php-fpm -t` for conf.
func (b *Binary) TestArgs(conf string) []string {
	return append(b.iniArgs(), "--test", "--fpm-config", conf)
}

// CheckSocketPath refuses unix socket paths longer than the kernel allows
// (sun_path is 108 bytes) before php-fpm fails with a vaguer message.
func CheckSocketPath(path string) error {
	if len(path) >= 108 {
		return fmt.Errorf("socket path %s is %d bytes, over the kernel's 107; use a shorter PHPTUNE_HOME or lab name", path, len(path))
	}
	return nil
}
