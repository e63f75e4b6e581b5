// Package phpfpm renders php-fpm's configuration from a knob.Config and finds
// the distro's php-fpm binary. The lab runs php-fpm with these files; the
// tuner's recommendation is written in the same syntax.
package phpfpm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/knob"
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
	Listen     string
	StatusPath string // pm.status_path
	PingPath   string // ping.path
	SlowLog    string
	// AsRoot adds user/group lines; the lab never runs php-fpm as root, so
	// it leaves this false and php-fpm runs the pool as its own user.
	AsRoot    bool
	User      string
	PoolName  string
	ExtraPool []string // extra pool lines, e.g. env[...] for apps
}

// RenderConf renders php-fpm.conf with its single pool, from cfg. The pool
// mirrors Debian's www.conf with the knobs applied.
func RenderConf(cfg knob.Config, p Paths) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("; Rendered by phptune. php-fpm.conf with one pool; the pool settings")
	w("; mirror Debian's pool.d/www.conf with phptune's knobs applied.")
	w("[global]")
	w("pid = %s", p.PidFile)
	w("error_log = %s", p.Log)
	w("log_level = notice")
	w("daemonize = no")
	w("")
	b.WriteString(RenderPool(cfg, p))
	return b.String()
}

// RenderPool renders the [pool] section alone: the fragment a user drops into
// pool.d/ (the tuner's recommendation uses it).
func RenderPool(cfg knob.Config, p Paths) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	name := p.PoolName
	if name == "" {
		name = "www"
	}
	w("[%s]", name)
	if p.AsRoot {
		w("user = %s", p.User)
		w("group = %s", p.User)
	}
	w("listen = %s", p.Listen)
	if cfg["listen"] == "unix" && p.AsRoot {
		// A master running as root would own the socket itself; Debian
		// hands it to the web server's group.
		w("listen.owner = %s", p.User)
		w("listen.group = %s", p.User)
		w("listen.mode = 0660")
	} else if cfg["listen"] == "unix" {
		w("listen.mode = 0600")
	} else {
		w("listen.allowed_clients = 127.0.0.1")
	}
	w("listen.backlog = %s", cfg["listen.backlog"])
	w("pm = %s", cfg["pm"])
	w("pm.max_children = %s", cfg["pm.max_children"])
	switch cfg["pm"] {
	case "dynamic":
		w("pm.start_servers = %s", cfg["pm.start_servers"])
		w("pm.min_spare_servers = %s", cfg["pm.min_spare_servers"])
		w("pm.max_spare_servers = %s", cfg["pm.max_spare_servers"])
	case "ondemand":
		w("pm.process_idle_timeout = %ss", cfg["pm.process_idle_timeout"])
	}
	w("pm.max_requests = %s", cfg["pm.max_requests"])
	if p.StatusPath != "" {
		w("pm.status_path = %s", p.StatusPath)
	}
	if p.PingPath != "" {
		w("ping.path = %s", p.PingPath)
	}
	if p.SlowLog != "" {
		w("slowlog = %s", p.SlowLog)
	}
	// Worker stderr goes to the error log so a failing trial keeps its cause.
	w("catch_workers_output = yes")
	w("decorate_workers_output = no")
	for _, l := range p.ExtraPool {
		w("%s", l)
	}
	return b.String()
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
	return []string{"--nodaemonize", "--fpm-config", conf}
}

// TestArgs returns the arguments of `php-fpm -t` for conf.
func (b *Binary) TestArgs(conf string) []string {
	return []string{"--test", "--fpm-config", conf}
}

// CheckSocketPath refuses unix socket paths longer than the kernel allows
// (sun_path is 108 bytes) before php-fpm fails with a vaguer message.
func CheckSocketPath(path string) error {
	if len(path) >= 108 {
		return fmt.Errorf("socket path %s is %d bytes, over the kernel's 107; use a shorter PHPTUNE_HOME or lab name", path, len(path))
	}
	return nil
}

// Exists reports whether path exists (used to wait for sockets).
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
