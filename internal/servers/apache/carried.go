package apache

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Carried is what a site lab's Apache carries of the production vhost it
// copies: the directives that map a URL to a script (mod_rewrite's rules,
// DirectoryIndex, FallbackResource) and the <Directory> blocks that decide
// whether the docroot's .htaccess files apply (AllowOverride), each as
// production wrote it, and the modules production loads that a .htaccess
// may use. Lines are checked (checkCarried) before they are written: one
// line each, no control character, no ${VAR}.
type Carried struct {
	// Lines are the vhost's own directives.
	Lines []string `json:"lines,omitempty"`
	// Directories are its <Directory> blocks and the server's that hold
	// or lie inside its docroot.
	Directories []Directory `json:"directories,omitempty"`
	// Modules are the modules to load beside the lab's own, by name
	// ("headers"); each must be in CarriableModules.
	Modules []string `json:"modules,omitempty"`
}

// Directory is a <Directory PATH> block and its lines.
type Directory struct {
	Path  string   `json:"path"`
	Lines []string `json:"lines"`
}

// CarriableModules are the modules of Debian's apache2 a site lab loads
// when production does: the ones a .htaccess or the carried directives
// commonly use, which run no program and reach nothing outside the lab.
// The lab's own modules (rewrite, dir, mime, env, deflate, filter, status,
// authz_core, authz_host, reqtimeout, and proxy with proxy_fcgi or
// mod_php) are always loaded.
var CarriableModules = map[string]string{
	"access_compat": "mod_access_compat.so", "actions": "mod_actions.so", "alias": "mod_alias.so",
	"auth_basic": "mod_auth_basic.so", "auth_digest": "mod_auth_digest.so", "authn_core": "mod_authn_core.so",
	"authn_file": "mod_authn_file.so", "authz_groupfile": "mod_authz_groupfile.so", "authz_user": "mod_authz_user.so",
	"autoindex": "mod_autoindex.so", "brotli": "mod_brotli.so", "expires": "mod_expires.so",
	"headers": "mod_headers.so", "include": "mod_include.so", "negotiation": "mod_negotiation.so",
	"setenvif": "mod_setenvif.so", "substitute": "mod_substitute.so", "unique_id": "mod_unique_id.so",
}

// labModules are the modules every lab's httpd.conf loads (modules).
var labModules = map[string]bool{
	"authz_core": true, "authz_host": true, "dir": true, "mime": true, "env": true, "filter": true,
	"deflate": true, "reqtimeout": true, "status": true, "rewrite": true, "proxy": true, "proxy_fcgi": true,
	"php": true, "php7": true,
}

// CarriedModules splits production's loaded modules into those a lab
// loads as well (carriable, present in ModulesDir, not already the lab's)
// and those it leaves out, with why.
func CarriedModules(loaded []string) (carry []string, left []string) {
	seen := map[string]bool{}
	for _, m := range loaded {
		if seen[m] || labModules[m] || strings.HasPrefix(m, "mpm_") {
			continue
		}
		seen[m] = true
		file, ok := CarriableModules[m]
		if !ok {
			left = append(left, m+" (not one a lab loads: it serves production's own needs, TLS, proxies or programs)")
			continue
		}
		if _, err := os.Stat(filepath.Join(ModulesDir, file)); err != nil {
			left = append(left, m+" (not installed on this host)")
			continue
		}
		carry = append(carry, m)
	}
	return carry, left
}

// checkCarriedLine accepts a carried directive: one line, no control
// character, no ${ (Apache would expand it from the lab's environment).
func checkCarriedLine(line string) error {
	if strings.TrimSpace(line) == "" {
		return fmt.Errorf("a carried directive is empty")
	}
	if strings.Contains(line, "${") {
		return fmt.Errorf("carried directive %q names a variable (${...}), which the lab's Apache would expand from its own environment", line)
	}
	for _, r := range line {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return fmt.Errorf("carried directive %q holds a control character", line)
		}
	}
	if strings.HasPrefix(strings.TrimSpace(line), "<") {
		return fmt.Errorf("carried directive %q opens a section, which a lab does not carry", line)
	}
	return nil
}

// carried writes the carried modules' LoadModule lines.
func (c *httpdConf) carriedModules(s Site) {
	if s.Carried == nil {
		return
	}
	for _, m := range s.Carried.Modules {
		file, ok := CarriableModules[m]
		if !ok {
			c.Add(fmt.Errorf("httpd.conf LoadModule: %q is not a module a lab carries", m))
			continue
		}
		c.mod(m, file)
	}
}

// carried writes the vhost's carried directives and <Directory> blocks.
func (c *httpdConf) carried(s Site) {
	if s.Carried == nil {
		return
	}
	w := c.Line
	w("")
	w("# Carried from production's vhost as written: how it maps URLs to scripts and")
	w("# where the docroot's .htaccess files apply.")
	for _, d := range s.Carried.Directories {
		w("<Directory %s>", c.Quote("<Directory> (carried)", d.Path))
		for _, line := range d.Lines {
			c.Add(checkCarriedLine(line))
			w("    %s", line)
		}
		w("</Directory>")
	}
	for _, line := range s.Carried.Lines {
		c.Add(checkCarriedLine(line))
		if _, _, ok := ModPHPSetting(line); ok && s.ModPHP == "" {
			// Not a directive without mod_php: php-fpm's pool has it.
			w("# %s: PHP runs in php-fpm here; the lab's pool sets it", line)
			continue
		}
		w("%s", line)
	}
}

// modPHPDirectives are mod_php's directives of a PHP setting.
var modPHPDirectives = map[string]bool{"php_value": true, "php_flag": true, "php_admin_value": true, "php_admin_flag": true}

// ModPHPSetting reads a carried mod_php setting (php_value NAME "VALUE",
// as package site carries one, or its value unquoted; php_flag,
// php_admin_value, php_admin_flag alike) as php-fpm's pool writes it:
// key "php_value[NAME]" and the value unquoted. ok is false for any
// other line. A lab whose server runs php-fpm (another than production's
// mod_php) renders such lines into its pool, not its httpd.conf, where
// no module would take them.
func ModPHPSetting(line string) (key, value string, ok bool) {
	directive, rest := cutSpace(line)
	if !modPHPDirectives[directive] {
		return "", "", false
	}
	name, value := cutSpace(rest)
	if name == "" || strings.ContainsAny(name, "[]\"\\\t") {
		return "", "", false
	}
	if len(value) >= 2 && strings.HasPrefix(value, `"`) && strings.HasSuffix(value, `"`) {
		value = strings.NewReplacer(`\\`, `\`, `\"`, `"`).Replace(value[1 : len(value)-1])
	}
	return directive + "[" + name + "]", value, true
}

// serverName writes ServerName: localhost for a lab of its own; for a
// site lab the site's first name with the port PHP sees, with
// UseCanonicalName On so SERVER_NAME and
// SERVER_PORT are production's whatever Host the request carries.
func (c *httpdConf) serverName(h *SiteHost) {
	if h == nil || len(h.Names) == 0 {
		c.Line("ServerName localhost")
		return
	}
	for _, n := range h.Names {
		if err := checkAddress(n); err != nil || strings.Contains(n, ":") {
			c.Add(fmt.Errorf("httpd.conf ServerName: %q is not a host name", n))
			return
		}
	}
	port := h.Port
	if port <= 0 || port > 65535 {
		port = 80
	}
	// The lab's Apache serves the one site with its main server, which
	// answers every Host: the other names need no ServerAlias (which only
	// a <VirtualHost> takes).
	c.Line("ServerName %s:%d", h.Names[0], port)
	c.Line("UseCanonicalName On")
}

// cutSpace splits s, trimmed, at its first space or tab: the word before
// and the rest, trimmed.
func cutSpace(s string) (string, string) {
	s = strings.TrimSpace(s)
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}
