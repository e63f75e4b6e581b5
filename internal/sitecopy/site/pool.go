package site

import (
	"bytes"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/base/saferead"
	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/model/phpini"
	"github.com/phptune/phptune/internal/watch/proc"
)

// findPool finds the php-fpm pool listening where the vhost passes PHP:
// among the running masters' pools (livehost.Masters, ReadFPM), the one
// whose listen is that address, its master confirmed by the kernel's
// table of listening sockets when it can be read.
func (s *Site) findPool(h Host) {
	v := s.Vhost
	if v.ModPHP != nil && len(v.FastCGI) == 0 {
		s.modPHP(h)
		return
	}
	if len(v.FastCGI) == 0 {
		switch {
		case v.Server == "apache":
			s.PoolError = "it hands PHP to no FastCGI server (no SetHandler \"proxy:...\" or ProxyPassMatch in it or in conf-enabled) and mod_php is not loaded"
		case v.FastCGIVariable:
			s.PoolError = "its fastcgi_pass names a variable: discovery does not follow it"
		case len(v.Proxy) > 0:
			s.PoolError = "it passes requests on with proxy_pass (" + strings.Join(v.Proxy, ", ") + "), not to php-fpm"
		default:
			s.PoolError = "it passes nothing to php-fpm (no fastcgi_pass)"
		}
		return
	}
	addr := v.FastCGI[0]
	if len(v.FastCGI) > 1 {
		s.Notes = append(s.Notes, fmt.Sprintf("it passes PHP to %d addresses (%s): the first is read", len(v.FastCGI), strings.Join(v.FastCGI, ", ")))
	}
	masters, err := livehost.Masters(h.FS)
	if err != nil {
		s.PoolError = err.Error()
		return
	}
	type found struct {
		m livehost.Master
		p livehost.Pool
	}
	var cands []found
	var pids []int
	for _, m := range masters {
		fh, err := livehost.ReadFPM(m.Conf, h.FPMPrefix)
		if err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("php-fpm master %d (%s): %v", m.PID, m.Conf, err))
			continue
		}
		for _, p := range fh.Pools {
			if p.Listen == addr {
				cands = append(cands, found{m, p})
				pids = append(pids, m.PID)
			}
		}
	}
	if len(cands) == 0 {
		s.PoolError = fmt.Sprintf("no running php-fpm master (owned by root) has a pool listening on %s (masters: %s)", addr, masterList(masters))
		return
	}
	pick, verified := cands[0], "its master's configuration (the kernel's socket table could not confirm it)"
	if pid, ok := holder(h.FS, pids, addr); ok {
		for _, c := range cands {
			if c.m.PID == pid {
				pick, verified = c, "the kernel: its master holds the listening socket"
			}
		}
	} else if len(cands) > 1 {
		s.PoolError = fmt.Sprintf("%d pools of running masters name %s and the kernel's socket table does not tell which listens", len(cands), addr)
		return
	}
	p := pick.p
	pool := &Pool{MasterPID: pick.m.PID, MasterConf: pick.m.Conf, Name: p.Name, File: p.File, Listen: p.Listen, Verified: verified,
		User: p.Settings["user"], Group: p.Settings["group"], PM: map[string]string{}, Overrides: map[string]string{}}
	for k, val := range p.Settings {
		switch {
		case k == "pm" || strings.HasPrefix(k, "pm."):
			pool.PM[k] = val
		case strings.HasPrefix(k, "php_value[") || strings.HasPrefix(k, "php_flag[") ||
			strings.HasPrefix(k, "php_admin_value[") || strings.HasPrefix(k, "php_admin_flag["):
			_, rest, _ := strings.Cut(k, "[")
			pool.Overrides[k] = keptValue(strings.TrimSuffix(rest, "]"), val)
		case strings.HasPrefix(k, "env["):
			pool.Env = append(pool.Env, strings.TrimSuffix(strings.TrimPrefix(k, "env["), "]"))
		case poolSettings[k]:
			if pool.Settings == nil {
				pool.Settings = map[string]string{}
			}
			pool.Settings[k] = val
		}
	}
	sort.Strings(pool.Env)
	if len(pool.Overrides) == 0 {
		pool.Overrides = nil
	}
	s.Pool = pool
	s.PHP = readPHPConfig(h, pick.m.PID, pool)
}

func masterList(ms []livehost.Master) string {
	if len(ms) == 0 {
		return "none"
	}
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%d %s", m.PID, m.Conf))
	}
	return strings.Join(out, ", ")
}

// poolSettings are the pool settings besides pm.* and the PHP values
// that change how a pool serves, kept for a lab of the site to start
// from (see StartConfig).
var poolSettings = map[string]bool{
	"listen.backlog": true, "request_terminate_timeout": true, "request_slowlog_timeout": true,
	"rlimit_files": true, "rlimit_core": true, "security.limit_extensions": true, "clear_env": true,
	"catch_workers_output": true, "chdir": true, "chroot": true, "slowlog": true, "access.log": true,
}

var fpmVersion = regexp.MustCompile(`php-fpm(\d+\.\d+)$`)

// interesting are the PHP settings a site's lab starts from, beside
// every opcache.* one.
var interesting = map[string]bool{
	"memory_limit": true, "max_execution_time": true, "realpath_cache_size": true, "realpath_cache_ttl": true,
	"mysqli.default_socket": true, "pdo_mysql.default_socket": true, "mysqli.default_host": true, "mysqli.default_port": true,
	"session.save_handler": true, "session.save_path": true, "upload_max_filesize": true, "post_max_size": true,
	// Code outside the app's root that a site lab must show (lab's siteCode).
	"include_path": true, "auto_prepend_file": true, "auto_append_file": true,
}

// readPHPConfig reads what master pid loads: php.ini and its scan
// directories, then the pool's overrides on top. PHPRC and
// PHP_INI_SCAN_DIR are taken from the master's environment when
// /proc/PID/environ still shows them (php-fpm writes its title over its
// environment, so it usually does not); otherwise the scan directory is
// h.ScanDir when given, else conf.d under the host's root when it has
// one (a copy's, as apply reads it), else Debian's compiled-in
// /etc/php/VERSION/fpm/conf.d. php.ini likewise: the root's copy when it
// has one, else the compiled-in path the process opens. conf.d's links
// (Debian's, to mods-available) are followed only to root's files that
// no one else can write.
func readPHPConfig(h Host, pid int, pool *Pool) *PHPConfig {
	fs := h.FS
	c := &PHPConfig{Settings: map[string]Setting{}}
	bin, err := os.Readlink(filepath.Join(fs.Root(), strconv.Itoa(pid), "exe"))
	if err != nil {
		c.Errors = append(c.Errors, "its binary: "+err.Error())
		return c
	}
	c.Binary = strings.TrimSuffix(bin, " (deleted)")
	if m := fpmVersion.FindStringSubmatch(c.Binary); m != nil {
		c.Version = m[1]
	}
	if c.Version == "" {
		c.Errors = append(c.Errors, c.Binary+": not a Debian php-fpmVERSION binary; its php.ini and conf.d are not read")
		return c
	}
	env := masterEnv(fs, pid)
	readIni(c, h, "/etc/php/"+c.Version+"/fpm", env)
	var over []override
	for k, val := range pool.Overrides {
		over = append(over, override{k, val, "pool " + pool.Name + " (" + k + ")"})
	}
	applyOverrides(c, over)
	return c
}

// override is one php_value/php_admin_value-style setting laid over
// php.ini: its key ("php_admin_value[memory_limit]"), value, and where
// it is set.
type override struct{ key, value, from string }

// readIni reads a SAPI's php.ini and conf.d (etc is
// /etc/php/VERSION/SAPI) into c: the root's copies when it has them,
// PHPRC and PHP_INI_SCAN_DIR of env, else h.ScanDir, as readPHPConfig
// says.
func readIni(c *PHPConfig, h Host, etc string, env map[string]string) {
	underRoot := func(p string) string {
		if h.Root != "/" {
			if q := filepath.Join(h.Root, p); exists(q) {
				return q
			}
		}
		return p
	}
	c.Ini = underRoot(etc + "/php.ini")
	if rc, ok := env["PHPRC"]; ok && rc != "" {
		if st, err := os.Stat(rc); err == nil && st.IsDir() {
			c.Ini = filepath.Join(rc, "php.ini")
		} else {
			c.Ini = rc
		}
	}
	defScan := underRoot(etc + "/conf.d")
	c.ScanDirs = []string{defScan}
	switch sd, ok := env["PHP_INI_SCAN_DIR"]; {
	case ok:
		c.ScanDirs = nil
		for _, d := range strings.Split(sd, ":") {
			if d == "" {
				d = defScan
			}
			c.ScanDirs = appendOnce(c.ScanDirs, d)
		}
	case h.ScanDir != "":
		c.ScanDirs = []string{h.ScanDir}
	}
	apply := func(file string) {
		b, err := saferead.RootConfig(file, maxIni)
		if err != nil {
			c.Errors = append(c.Errors, err.Error())
			return
		}
		for _, e := range phpini.Parse(b) {
			if strings.HasPrefix(e.Key, "opcache.") || interesting[e.Key] {
				c.Settings[e.Key] = Setting{Value: keptValue(e.Key, e.Value), From: fmt.Sprintf("%s:%d", file, e.Line)}
			}
		}
	}
	apply(c.Ini)
	for _, d := range c.ScanDirs {
		files, _ := filepath.Glob(filepath.Join(d, "*.ini"))
		sort.Strings(files)
		for _, f := range files {
			c.IniFiles = append(c.IniFiles, f)
			apply(f)
		}
	}
}

// applyOverrides lays a pool's or a vhost's PHP settings over c's
// php.ini values, keeping the php.ini value it replaces in Shadowed.
func applyOverrides(c *PHPConfig, over []override) {
	sort.Slice(over, func(i, j int) bool { return over[i].key < over[j].key })
	replaced := map[string]bool{}
	for _, o := range over {
		_, rest, _ := strings.Cut(o.key, "[")
		name := strings.TrimSuffix(rest, "]")
		if strings.HasPrefix(name, "opcache.") || interesting[name] {
			if old, ok := c.Settings[name]; ok && !replaced[name] {
				if c.Shadowed == nil {
					c.Shadowed = map[string]Setting{}
				}
				c.Shadowed[name] = old
			}
			replaced[name] = true
			c.Settings[name] = Setting{Value: keptValue(name, o.value), From: o.from}
		}
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// maxIni bounds a php.ini file read (livehost reads configurations to
// 1 MiB; a php.ini with its comments is about 75 KiB).
const maxIni = 1 << 20

// masterEnv reads the environment a root-owned master (verified by
// livehost.Masters) was started with: only PHPRC and PHP_INI_SCAN_DIR
// are kept.
func masterEnv(fs *proc.FS, pid int) map[string]string {
	out := map[string]string{}
	b, err := livehost.ReadConfFile(filepath.Join(fs.Root(), strconv.Itoa(pid), "environ"))
	if err != nil {
		// /proc files are not regular: read them the plain way.
		b, err = os.ReadFile(filepath.Join(fs.Root(), strconv.Itoa(pid), "environ"))
		if err != nil || len(b) > 1<<20 {
			return out
		}
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		k, v, ok := strings.Cut(string(kv), "=")
		if ok && (k == "PHPRC" || k == "PHP_INI_SCAN_DIR") {
			out[k] = v
		}
	}
	return out
}

// defaultSocket is the socket PHP's MySQL drivers use for "localhost":
// the setting of the application's driver (pdo_mysql for Laravel and
// Drupal, mysqli for WordPress) in effect, else Debian's compiled-in
// one.
func (s *Site) defaultSocket() string {
	key := "mysqli.default_socket"
	if s.App != nil && s.App.Kind != "wordpress" {
		key = "pdo_mysql.default_socket"
	}
	if s.PHP != nil {
		if v, ok := s.PHP.Settings[key]; ok && v.Value != "" {
			return v.Value
		}
	}
	return livehost.DefaultMariaDBSocket
}

// accountName is uid's name, or the number.
func accountName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return strconv.Itoa(uid)
}

// keptValue is a PHP setting's value as discovery keeps and prints it:
// session.save_path without the credentials it can carry
// (RedactSavePath).
func keptValue(name, v string) string {
	if name == "session.save_path" {
		return RedactSavePath(v)
	}
	return v
}
