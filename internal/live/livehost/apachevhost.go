package livehost

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/base/saferead"
)

// ApacheConfig is what Apache's configuration says about the sites it
// serves, read as data (apache2 is never run on it): its <VirtualHost>
// blocks, the FastCGI hand-offs at server level (Debian's
// conf-enabled/php8.2-fpm.conf) and the PHP module and MPM it loads.
type ApacheConfig struct {
	// Conf is the apache2.conf read.
	Conf   string
	Vhosts []ApacheVirtualHost
	// Listens are the Listen directives' arguments, as written.
	Listens []string
	// Proxies are the FastCGI hand-offs outside any <VirtualHost>: every
	// virtual host's, unless its own hand-off replaces them.
	Proxies []ApacheProxy
	// PHPModule is the file of a LoadModule php_module / php7_module
	// ("/usr/lib/apache2/modules/libphp8.2.so"), PHPModuleAt where it is
	// loaded; "" when mod_php is not loaded.
	PHPModule   string
	PHPModuleAt string
	// MPM is the multi-processing module loaded: "prefork", "event",
	// "worker" ("" when none is loaded).
	MPM string
	// ServerName is the main server's, which a <VirtualHost> without one
	// inherits.
	ServerName string
	// Modules are the modules LoadModule loads, by name ("rewrite",
	// "headers"), in order.
	Modules []string
	// Directories are the <Directory> blocks outside any <VirtualHost>
	// (every vhost's), with what a lab carries of them.
	Directories []ApacheDirectory
	// Settings are the server-wide directives that size Apache
	// (apacheServerSettings), by their Apache 2.4 name: the last value
	// read, and where.
	Settings map[string]ApacheLine
	// AccessLogs are the CustomLog directives outside any <VirtualHost>
	// (Debian's other-vhosts-access-log.conf): a vhost without a
	// CustomLog of its own logs there.
	AccessLogs []ApacheAccessLog
}

// ApacheVirtualHost is one <VirtualHost> block.
type ApacheVirtualHost struct {
	// Addrs are its addresses as written ("*:80", "10.0.0.1:443",
	// "_default_:443").
	Addrs      []string
	File       string
	Line       int
	ServerName string
	Aliases    []string
	// DocumentRoot is as written (quotes removed, ${VAR} expanded);
	// RootAt is where.
	DocumentRoot string
	RootAt       string
	// SSL is "SSLEngine on".
	SSL bool
	// Proxies are its FastCGI hand-offs (SetHandler "proxy:...", also
	// inside <FilesMatch> or <Location>; ProxyPassMatch, ProxyPass).
	Proxies []ApacheProxy
	// PHPValues are its php_value, php_flag, php_admin_value and
	// php_admin_flag settings (mod_php's), keyed "php_value[NAME]" as a
	// pool's are, and where each is set.
	PHPValues   map[string]string
	PHPValuesAt map[string]string
	// PHPHandler says a SetHandler/AddHandler application/x-httpd-php
	// is written in it (mod_php's handler).
	PHPHandler bool
	// Carried are its own directives a lab carries (carriedInVhost:
	// rewrite rules, DirectoryIndex, FallbackResource), as written;
	// Directories its <Directory> blocks with what a lab carries of them.
	Carried     []ApacheLine
	Directories []ApacheDirectory
	// AccessLogs are its own CustomLog directives.
	AccessLogs []ApacheAccessLog
}

// apacheParser is the state of reading one Apache configuration: the
// variables Define and envvars set, the <VirtualHost> open, and how to
// read an Include.
type apacheParser struct {
	conf    *ApacheConfig
	defines map[string]string
	vhost   *ApacheVirtualHost
	include func(arg string) error
	// cond holds, for each <IfModule> open, whether it holds (see
	// ifModule).
	cond []bool
	// line is the directive being read, continuations joined and
	// variables expanded; sections are the sections open around it
	// (apachecarry.go).
	line     string
	sections []apacheSection
}

// active says whether every <IfModule> open holds.
func (p *apacheParser) active() bool {
	for _, c := range p.cond {
		if !c {
			return false
		}
	}
	return true
}

// ifModule says whether <IfModule ARG> holds. Only the modules that
// decide how PHP runs are known (mod_php, by the LoadModule read so
// far, as Debian loads mods-enabled first); any other is taken to be
// loaded, negated or not, so discovery keeps what it could enable.
func (p *apacheParser) ifModule(arg string) bool {
	arg = strings.TrimSuffix(strings.TrimSpace(arg), ">")
	neg := strings.HasPrefix(arg, "!")
	m := strings.ToLower(strings.TrimPrefix(arg, "!"))
	php := strings.HasPrefix(m, "mod_php") || (strings.HasPrefix(m, "php") && strings.HasSuffix(m, "_module"))
	if !php {
		return true
	}
	return (p.conf.PHPModule != "") != neg
}

var apacheVar = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)\}`)

// expand replaces ${NAME} with what Define or envvars set; an unknown
// variable stays as written (Apache warns and keeps it too).
func (p *apacheParser) expand(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return apacheVar.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := p.defines[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// maxApacheLine bounds one logical line (continuations joined).
const maxApacheLine = 64 << 10

// parse reads one file's directives into p.conf, in order, reading each
// Include where it is written (a <VirtualHost> may span an included
// file, as in Apache). Conditional sections (<IfDefine>, <IfVersion>,
// <If>) are read as if they hold, and <IfModule> too but for mod_php's
// (ifModule): discovery keeps what they could enable rather than
// guessing the server's modules.
func (p *apacheParser) parse(file string, text []byte) error {
	// A section is closed in the file that opens it (Apache refuses
	// one left open), so one left open here ends with the file.
	depth := len(p.cond)
	defer func() { p.cond = p.cond[:min(depth, len(p.cond))] }()
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), maxConf)
	var joined strings.Builder
	start := 0
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if joined.Len() == 0 {
			start = n
		}
		if strings.HasSuffix(line, "\\") && joined.Len() < maxApacheLine {
			joined.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		joined.WriteString(line)
		line = strings.TrimSpace(joined.String())
		joined.Reset()
		if line == "" || line[0] == '#' {
			continue
		}
		p.line = p.expand(line)
		words := apacheWords(p.line)
		if len(words) == 0 {
			continue
		}
		if err := p.directive(file, start, words); err != nil {
			return err
		}
	}
	return nil
}

func (p *apacheParser) directive(file string, line int, words []string) error {
	name := strings.ToLower(words[0])
	args := words[1:]
	switch name {
	case "<ifmodule":
		p.cond = append(p.cond, p.ifModule(strings.Join(args, " ")))
		return nil
	case "</ifmodule>":
		if len(p.cond) > 0 {
			p.cond = p.cond[:len(p.cond)-1]
		}
		return nil
	}
	if !p.active() {
		return nil
	}
	p.carry(fmt.Sprintf("%s:%d", file, line), name, args)
	if done, err := p.serverDirective(file, line, name, args); done {
		return err
	}
	if p.phpHandler(file, line, name, args) {
		return nil
	}
	if l, ok := apacheCustomLog(fmt.Sprintf("%s:%d", file, line), name, args); ok {
		if p.vhost != nil {
			p.vhost.AccessLogs = append(p.vhost.AccessLogs, l)
		} else {
			p.conf.AccessLogs = append(p.conf.AccessLogs, l)
		}
		return nil
	}
	if p.vhost == nil {
		if name == "servername" && len(args) > 0 {
			p.conf.ServerName = strings.ToLower(args[0])
		}
		return nil
	}
	vhostDirective(p.vhost, fmt.Sprintf("%s:%d", file, line), name, args)
	return nil
}

// serverDirective takes the directives that shape the configuration
// itself — a <VirtualHost>'s start and end, Include, Define, Listen,
// LoadModule — and reports whether name was one of them.
func (p *apacheParser) serverDirective(file string, line int, name string, args []string) (bool, error) {
	switch name {
	case "<virtualhost":
		addrs := strings.Fields(strings.TrimSuffix(strings.Join(args, " "), ">"))
		p.conf.Vhosts = append(p.conf.Vhosts, ApacheVirtualHost{Addrs: addrs, File: file, Line: line})
		p.vhost = &p.conf.Vhosts[len(p.conf.Vhosts)-1]
	case "</virtualhost>":
		p.vhost = nil
	case "include", "includeoptional":
		if len(args) > 0 && p.include != nil {
			// The vhost pointer is kept by index: an included file may
			// add vhosts and grow the slice.
			idx := -1
			if p.vhost != nil {
				idx = len(p.conf.Vhosts) - 1
			}
			err := p.include(args[0])
			if idx >= 0 {
				p.vhost = &p.conf.Vhosts[idx]
			}
			return true, err
		}
	case "define":
		if len(args) > 0 {
			val := ""
			if len(args) > 1 {
				val = args[1]
			}
			p.defines[args[0]] = val
		}
	case "undefine":
		if len(args) > 0 {
			delete(p.defines, args[0])
		}
	case "listen":
		if len(args) > 0 {
			p.conf.Listens = append(p.conf.Listens, args[0])
		}
	case "loadmodule":
		if len(args) < 2 {
			return true, nil
		}
		mod := strings.ToLower(args[0])
		p.conf.Modules = append(p.conf.Modules, strings.TrimSuffix(mod, "_module"))
		switch {
		case mod == "php_module" || mod == "php7_module" || mod == "php5_module":
			p.conf.PHPModule, p.conf.PHPModuleAt = args[1], fmt.Sprintf("%s:%d", file, line)
		case strings.HasPrefix(mod, "mpm_") && strings.HasSuffix(mod, "_module"):
			p.conf.MPM = strings.TrimSuffix(strings.TrimPrefix(mod, "mpm_"), "_module")
		}
	default:
		return false, nil
	}
	return true, nil
}

// phpHandler takes the directives that say how PHP runs — SetHandler,
// ProxyPass(Match) to a FastCGI address, AddHandler/AddType of PHP — in
// the current vhost or at server level, and reports whether name was one
// of them.
func (p *apacheParser) phpHandler(file string, line int, name string, args []string) bool {
	v := p.vhost
	switch name {
	case "sethandler", "proxypassmatch", "proxypass":
	case "addhandler", "addtype":
		if v != nil && len(args) > 0 && strings.EqualFold(args[0], "application/x-httpd-php") {
			v.PHPHandler = true
		}
		return true
	default:
		return false
	}
	var target string
	switch {
	case name == "sethandler" && len(args) > 0:
		if strings.EqualFold(args[0], "application/x-httpd-php") {
			if v != nil {
				v.PHPHandler = true
			}
			return true
		}
		t, ok := strings.CutPrefix(args[0], "proxy:")
		if !ok {
			return true
		}
		target = t
	case name != "sethandler" && len(args) > 1:
		target = args[1]
	default:
		return true
	}
	a, ok := apacheFCGIAddr(target)
	if !ok {
		return true
	}
	px := ApacheProxy{Addr: a, File: file, Line: line}
	if v != nil {
		px.VirtualHost = strings.Join(v.Addrs, " ")
		v.Proxies = append(v.Proxies, px)
	} else {
		p.conf.Proxies = append(p.conf.Proxies, px)
	}
	return true
}

// vhostDirective records a directive of the <VirtualHost> v at at: its
// names, document root, TLS and PHP values.
func vhostDirective(v *ApacheVirtualHost, at, name string, args []string) {
	switch name {
	case "servername":
		if len(args) > 0 {
			v.ServerName = strings.ToLower(args[0])
		}
	case "serveralias":
		for _, a := range args {
			v.Aliases = append(v.Aliases, strings.ToLower(a))
		}
	case "documentroot":
		if len(args) > 0 {
			v.DocumentRoot, v.RootAt = args[0], at
		}
	case "sslengine":
		if len(args) > 0 {
			v.SSL = strings.EqualFold(args[0], "on")
		}
	case "php_value", "php_flag", "php_admin_value", "php_admin_flag":
		if len(args) > 0 {
			if v.PHPValues == nil {
				v.PHPValues, v.PHPValuesAt = map[string]string{}, map[string]string{}
			}
			key := name + "[" + args[0] + "]"
			v.PHPValues[key] = strings.Join(args[1:], " ")
			v.PHPValuesAt[key] = at
		}
	}
}

// ParseApacheEnvvars reads the variables Debian's /etc/apache2/envvars
// exports (a shell script apache2ctl sources): "export NAME=VALUE" lines
// with a literal value, $SUFFIX (the instance suffix, "" for the main
// server) removed. Anything else a shell would do is not done.
func ParseApacheEnvvars(text []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), maxConf)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(line, "export ")
		if !ok {
			continue
		}
		name, val, ok := strings.Cut(strings.TrimSpace(rest), "=")
		if !ok || name == "" || strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			continue
		}
		val = strings.Trim(val, `"'`)
		val = strings.ReplaceAll(strings.ReplaceAll(val, "${SUFFIX}", ""), "$SUFFIX", "")
		if strings.ContainsAny(val, "$`;") {
			continue
		}
		out[name] = val
	}
	return out
}

// ParseApacheConfig reads one Apache configuration text (its includes
// not followed) as ReadApacheConfig reads a host's: for tests and fuzzing.
func ParseApacheConfig(file string, text []byte, defines map[string]string) *ApacheConfig {
	c := &ApacheConfig{Conf: file}
	p := &apacheParser{conf: c, defines: map[string]string{}}
	for k, v := range defines {
		p.defines[k] = v
	}
	_ = p.parse(file, text)
	return c
}

// ReadApacheConfig reads ROOT/etc/apache2/apache2.conf in Debian's
// layout as data: the variables of ROOT/etc/apache2/envvars, then
// apache2.conf and every file its Include/IncludeOptional name (globs,
// directories; relative ones against ROOT/etc/apache2: mods-enabled,
// conf-enabled, ports.conf, sites-enabled), each where it is included.
// Files are read as ReadApache reads them: Debian's *-enabled links
// must lead inside ROOT/etc/apache2, at most maxConf bytes each. A host
// without apache2.conf has no configuration (nil, nil).
func ReadApacheConfig(root string) (*ApacheConfig, error) {
	serverRoot := filepath.Join(root, "etc", "apache2")
	conf := filepath.Join(serverRoot, "apache2.conf")
	if _, err := os.Lstat(conf); err != nil {
		return nil, nil
	}
	c := &ApacheConfig{Conf: conf}
	p := &apacheParser{conf: c, defines: map[string]string{}}
	if b, err := saferead.Whole(filepath.Join(serverRoot, "envvars"), maxConf, saferead.AnyOwner); err == nil {
		p.defines = ParseApacheEnvvars(b)
	}
	seen := map[string]bool{}
	depth := 0
	var read func(path string) error
	read = func(path string) error {
		if depth > 8 || seen[path] || len(seen) > 1000 {
			return nil
		}
		seen[path] = true
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil // a dangling link: IncludeOptional skips it too
		}
		if rel, err := filepath.Rel(serverRoot, real); err != nil || strings.HasPrefix(rel, "..") {
			return fmt.Errorf("%s leads to %s, outside %s", path, real, serverRoot)
		}
		b, err := saferead.Whole(real, maxConf, saferead.AnyOwner)
		if err != nil {
			return err
		}
		depth++
		defer func() { depth-- }()
		return p.parse(path, b)
	}
	p.include = func(inc string) error {
		if !filepath.IsAbs(inc) {
			inc = filepath.Join(serverRoot, inc)
		} else if root != "/" && !strings.HasPrefix(inc, root+"/") {
			inc = filepath.Join(root, inc)
		}
		matches, _ := filepath.Glob(inc)
		if st, err := os.Stat(inc); err == nil && st.IsDir() {
			matches, _ = filepath.Glob(filepath.Join(inc, "*"))
		}
		sort.Strings(matches)
		for _, m := range matches {
			if err := read(m); err != nil {
				return err
			}
		}
		return nil
	}
	if err := read(conf); err != nil {
		return nil, err
	}
	return c, nil
}
