package site

import (
	"fmt"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/live/livehost"
)

// A lab of an nginx site runs phptune's own server block: the site's
// names, root and index, its files served as they are, every other path
// sent to /index.php, and *.php to the lab's pool with Debian's
// fastcgi parameters (servers/nginx). nginxUncarried says, for one of
// production's server blocks, what of it that block does not do, so
// that lab up and phptune site can say so: a page cache above all (the
// lab then measures every request through PHP, where production answers
// most of them without it), then rewrites, other locations, custom
// FastCGI parameters (by name: a value can be a secret) and the other
// directives, each named with where it is written.

// nginxKept are the server-level directives the lab's server block
// reproduces, or that do not bear on what a request to PHP costs
// through loopback (TLS is ended before the lab: PHP sees HTTPS=on).
var nginxKept = map[string]bool{
	"listen": true, "server_name": true, "root": true, "index": true,
	"access_log": true, "error_log": true, "http2": true, "http3": true,
	"quic_retry": true, "quic_gso": true, "ssl_stapling": true, "ssl_stapling_verify": true,
}

// nginxPHPKept are the directives of a PHP location the lab's own PHP
// location does as well (Debian's snippets/fastcgi-php.conf).
var nginxPHPKept = map[string]bool{
	"fastcgi_pass": true, "fastcgi_index": true, "fastcgi_split_path_info": true,
	"try_files": true, "set": true, "fastcgi_param": true, "include": true,
}

// nginxStandardParams are the FastCGI parameters Debian's fastcgi.conf,
// fastcgi_params and fastcgi-php.conf set (checked on nginx 1.22), and
// HTTP_PROXY, which sites blank against httpoxy (the lab passes the
// others too; phptune's load sends no Proxy header, so PHP sees none).
var nginxStandardParams = map[string]bool{
	"CONTENT_LENGTH": true, "CONTENT_TYPE": true, "DOCUMENT_ROOT": true, "DOCUMENT_URI": true,
	"GATEWAY_INTERFACE": true, "HTTPS": true, "HTTP_HOST": true, "PATH_INFO": true,
	"QUERY_STRING": true, "REDIRECT_STATUS": true, "REMOTE_ADDR": true, "REMOTE_PORT": true,
	"REMOTE_USER": true, "REQUEST_METHOD": true, "REQUEST_SCHEME": true, "REQUEST_URI": true,
	"SCRIPT_FILENAME": true, "SCRIPT_NAME": true, "SERVER_ADDR": true, "SERVER_NAME": true,
	"SERVER_PORT": true, "SERVER_PROTOCOL": true, "SERVER_SOFTWARE": true, "HTTP_PROXY": true,
}

// maxUncarried bounds the lines nginxUncarried returns.
const maxUncarried = 16

// nginxUncarried is what of server block server (its directives, includes
// expanded) and of the http level above it (http: page caches set there
// apply to every server) the lab's nginx does not do, one line each.
func nginxUncarried(server, http []livehost.NginxDirective) []string {
	var caches, rules, locs, params, other []string
	others := map[string][]string{} // directive name -> where
	note := func(name, at string) {
		if len(others[name]) == 0 {
			other = append(other, name)
		}
		others[name] = append(others[name], at)
	}
	cache := func(d livehost.NginxDirective, level string) {
		if len(d.Args) == 0 || d.Args[0] == "off" {
			return
		}
		caches = append(caches, fmt.Sprintf("%s %s at %s (%s): production can answer from its page cache without PHP; the lab has none and sends every request to PHP, so its rates are PHP's uncached ones", d.Name, clean(d.Args[0]), d.At(), level))
	}
	for _, d := range http {
		if d.Name == "fastcgi_cache" || d.Name == "proxy_cache" {
			cache(d, "http level: every server")
		}
	}
	var php func(ds []livehost.NginxDirective, where string)
	php = func(ds []livehost.NginxDirective, where string) {
		for _, d := range ds {
			switch {
			case d.Name == "fastcgi_cache":
				cache(d, where)
			case d.Name == "fastcgi_param" && len(d.Args) >= 1 && !nginxStandardParams[strings.ToUpper(d.Args[0])]:
				params = append(params, fmt.Sprintf("%s (%s)", clean(d.Args[0]), d.At()))
			case d.IsBlock:
				php(d.Block, where)
			case !nginxPHPKept[d.Name] && !strings.HasPrefix(d.Name, "fastcgi_cache"):
				note(d.Name, d.At())
			}
		}
	}
	for _, d := range server {
		switch {
		case d.Name == "location" && d.IsBlock:
			args := strings.Join(d.Args, " ")
			switch {
			case passesPHP(d.Block):
				php(d.Block, "location "+clean(args))
			case args == "/":
				if tf := directive(d.Block, "try_files"); tf != nil && !frontController(tf.Args) {
					rules = append(rules, fmt.Sprintf("location / at %s: try_files %s; the lab's is $uri $uri/ /index.php?$args", d.At(), clean(strings.Join(tf.Args, " "))))
				}
				for _, x := range d.Block {
					if x.Name != "try_files" && x.Name != "root" && x.Name != "index" {
						note(x.Name, x.At())
					}
				}
			default:
				locs = append(locs, fmt.Sprintf("location %s at %s (%s)", clean(args), d.At(), names(d.Block)))
			}
		case d.Name == "fastcgi_cache" || d.Name == "proxy_cache":
			cache(d, "server level")
		case d.Name == "rewrite" || d.Name == "return":
			rules = append(rules, fmt.Sprintf("%s %s at %s", d.Name, clean(strings.Join(d.Args, " ")), d.At()))
		case d.Name == "if":
			// Its condition is not printed: it can compare with a secret.
			rules = append(rules, fmt.Sprintf("if (…) at %s (%s)", d.At(), names(d.Block)))
		case nginxKept[d.Name] || strings.HasPrefix(d.Name, "ssl_"):
		default:
			note(d.Name, d.At())
		}
	}
	out := caches
	for _, r := range rules {
		out = append(out, r+": not carried (the lab sends a path that is no file to /index.php)")
	}
	for _, l := range locs {
		out = append(out, l+": not carried (the lab serves that path as a file or through /index.php)")
	}
	if len(params) > 0 {
		out = append(out, "fastcgi_param "+strings.Join(params, ", ")+": not carried (PHP does not see them in the lab; their values are not read)")
	}
	sort.Strings(other)
	for _, name := range other {
		at := others[name]
		more := ""
		if len(at) > 1 {
			more = fmt.Sprintf(" and %d more", len(at)-1)
		}
		out = append(out, fmt.Sprintf("%s at %s%s: not carried", name, at[0], more))
	}
	if len(out) > maxUncarried {
		out = append(out[:maxUncarried], fmt.Sprintf("and %d more not carried", len(out)-maxUncarried))
	}
	return out
}

// passesPHP says whether a location's block (or a block inside it) hands
// requests to FastCGI.
func passesPHP(ds []livehost.NginxDirective) bool {
	for _, d := range ds {
		if d.Name == "fastcgi_pass" || d.IsBlock && passesPHP(d.Block) {
			return true
		}
	}
	return false
}

// directive is the last directive called name in ds (nil when none).
func directive(ds []livehost.NginxDirective, name string) *livehost.NginxDirective {
	var out *livehost.NginxDirective
	for i := range ds {
		if ds[i].Name == name {
			out = &ds[i]
		}
	}
	return out
}

// frontController says whether try_files args are the lab's own: files,
// then directories, then a front controller (/index.php, with or without
// its query string).
func frontController(args []string) bool {
	if len(args) < 2 || args[0] != "$uri" {
		return false
	}
	last := args[len(args)-1]
	for _, a := range args[1 : len(args)-1] {
		if a != "$uri/" {
			return false
		}
	}
	path, _, _ := strings.Cut(last, "?")
	return path == "/index.php"
}

// names lists the directive names of a block, each once, in order.
func names(ds []livehost.NginxDirective) string {
	var out []string
	seen := map[string]bool{}
	for _, d := range ds {
		if !seen[d.Name] {
			seen[d.Name] = true
			out = append(out, d.Name)
		}
	}
	if len(out) == 0 {
		return "empty"
	}
	return strings.Join(out, ", ")
}

// clean makes configuration text safe for one line of output, cut to
// 80 bytes.
func clean(s string) string {
	s = termsafe.Line(s)
	if len(s) > 80 {
		s = strings.ToValidUTF8(s[:77], "") + "..."
	}
	return s
}
