// Package confpath writes filesystem paths into the configuration files
// phptune renders as data: quoted in each file's own syntax, or refused with
// an error naming the path, the character and why, when that syntax cannot
// carry it. It does no I/O.
//
// The rules follow the real parsers:
//
//   - nginx (ngx_conf_read_token): a double-quoted token ends only at an
//     unescaped '"'; its escapes are \" and \\, and whitespace, ';', '{', '}',
//     '#' and single quotes are ordinary characters inside it. Directives whose value
//     nginx compiles as a script (root, access_log, fastcgi_pass,
//     fastcgi_param, try_files) read '$' as the start of a variable, and nginx
//     has no escape for a literal '$': there, '$' is refused. Elsewhere (pid,
//     error_log, *_temp_path, location) it is an ordinary character.
//   - PHP's INI scanner (php.ini; php-fpm reads php-fpm.conf a line at a time
//     with the same scanner): in a double-quoted value \", \\ and \$ are
//     escapes, "${" would start an expansion, and ';', '#', '=', '{', '}' and
//     the operators are ordinary characters. php-fpm then replaces "$pool" in
//     every value with the pool's name (refused), and takes a listen address
//     holding ':' for host:port (refused in socket paths).
//   - MariaDB option files (my_load_defaults): a value enclosed in matching
//     quotes loses them; inside, \" and \\ are escapes, '#' starts no comment
//     and spaces at either end are kept. File names live in 512-byte buffers
//     (FN_REFLEN), so longer paths are refused, and tmpdir is a ':'-separated
//     list (':' refused there).
//
// Every syntax refuses control and other invisible characters (newline, tab,
// NUL, format characters such as bidirectional overrides, non-ASCII spaces)
// and bytes that are not UTF-8: php-fpm and MariaDB end a value at a newline,
// and a path that logs and error messages cannot show as it is on disk is a
// trap, not a name. Relative paths are refused too: each program would
// resolve them against a different directory.
package confpath

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxPath is PATH_MAX less its terminating NUL: the kernel refuses longer
// paths, so nothing longer can be a real directory.
const maxPath = 4095

// Syntax is a place in a configuration file where a path or value is
// written: the file's quoting plus what the directive does with the value.
type Syntax struct {
	file    string // the file as messages name it, e.g. "nginx.conf"
	escape  string // characters written with a backslash before them
	maxPath int    // longest path in bytes
	// maxValue, when set, is the longest value in bytes.
	maxValue int
	// refuse returns the byte offset and the reason for the first
	// character sequence this place cannot carry, or -1.
	refuse func(s string) (int, string)
}

var (
	// NginxLiteral is a path in an nginx directive that takes no variables:
	// pid, error_log, *_temp_path, location.
	NginxLiteral = Syntax{file: "nginx.conf", escape: `\"`, maxPath: maxPath}
	// NginxVariables is a path in an nginx directive whose value is compiled
	// as a script: root, access_log, fastcgi_pass, fastcgi_param, try_files.
	NginxVariables = Syntax{file: "nginx.conf", escape: `\"`, maxPath: maxPath, refuse: refuseAll("$",
		"nginx reads $ there as the start of a variable and has no escape for a literal $")}
	// PHPIni is a path in php.ini.
	PHPIni = Syntax{file: "php.ini", escape: `\"$`, maxPath: maxPath}
	// FPM is a path in php-fpm.conf or a pool.
	FPM = Syntax{file: "php-fpm.conf", escape: `\"$`, maxPath: maxPath, refuse: refusePool}
	// FPMListen is a unix socket path in a pool's listen.
	FPMListen = Syntax{file: "php-fpm.conf", escape: `\"$`, maxPath: maxPath, refuse: both(refusePool, refuseAll(":",
		"php-fpm takes a listen address holding ':' for host:port"))}
	// Apache is a path in Apache's httpd.conf (a quoted argument: \\ and
	// \" are its only escapes).
	Apache = Syntax{file: "httpd.conf", escape: `\"`, maxPath: maxPath, refuse: refuseApacheEnv}
	// ApacheProxy is a unix socket path in a mod_proxy handler
	// ("proxy:unix:PATH|fcgi://localhost").
	ApacheProxy = Syntax{file: "httpd.conf", escape: `\"`, maxPath: maxPath, refuse: both(refuseApacheEnv, refuseAll("|",
		"mod_proxy ends a unix socket path at '|'"))}
	// Lighttpd is a path in lighttpd.conf: a double-quoted string whose
	// only escape is \" (a backslash before anything else stands for
	// itself), so a path may hold backslashes but not end with one.
	Lighttpd = Syntax{file: "lighttpd.conf", escape: `"`, maxPath: maxPath, refuse: refuseTrailingBackslash}
	// Caddyfile is a path in a Caddyfile, a double-quoted token: \" is a
	// quote, but a backslash cannot itself be escaped, and Caddy replaces
	// {$NAME} when it reads the file and {placeholders} in a site's root
	// and upstream addresses at each request.
	Caddyfile = Syntax{file: "Caddyfile", escape: `"`, maxPath: maxPath, refuse: both(
		refuseAll(`\`, "a backslash cannot be escaped in a Caddyfile's quoted token (\\ stays two backslashes, and one before the closing quote escapes it)"),
		refuseAll("{}", "Caddy replaces {$NAME} with an environment variable and {name} with a placeholder, and has no escape for a literal brace"))}
	// H2OYAML is a path in h2o's YAML configuration, a double-quoted
	// scalar: \\ and \" are its escapes, and h2o replaces nothing in it.
	H2OYAML = Syntax{file: "h2o.conf", escape: `\"`, maxPath: maxPath}
	// MyCnf is a path in a MariaDB option file.
	MyCnf = Syntax{file: "my.cnf", escape: `\"`, maxPath: 511, maxValue: 1024}
	// MyCnfList is a path in a MariaDB option whose value is a
	// ':'-separated list of directories (tmpdir).
	MyCnfList = Syntax{file: "my.cnf", escape: `\"`, maxPath: 511, maxValue: 1024, refuse: refuseAll(":",
		"MariaDB splits tmpdir at ':' into several directories")}
)

// Error says why a path or value cannot be written into a configuration
// file.
type Error struct {
	Path string // the refused path or value
	// Offset is the byte offset of the refused character, or -1 when the
	// value as a whole is refused (relative, too long).
	Offset int
	File   string // the file that cannot carry it, e.g. "nginx.conf"
	Reason string
}

// Char describes the refused character for a message: '$', a newline,
// U+202E, byte 0xff; "" when no single character is at fault.
func (e *Error) Char() string {
	if e.Offset < 0 || e.Offset >= len(e.Path) {
		return ""
	}
	r, size := utf8.DecodeRuneInString(e.Path[e.Offset:])
	switch {
	case r == utf8.RuneError && size <= 1:
		return fmt.Sprintf("byte 0x%02x", e.Path[e.Offset])
	case r == '\n':
		return `a newline ('\n')`
	case r == '\t':
		return `a tab ('\t')`
	case r == '\r':
		return `a carriage return ('\r')`
	case r == 0:
		return "a NUL byte"
	case unicode.IsPrint(r):
		return fmt.Sprintf("%q", r)
	}
	return fmt.Sprintf("%U (%s)", r, category(r))
}

func (e *Error) Error() string {
	if c := e.Char(); c != "" {
		return fmt.Sprintf("path %q has %s at byte %d, which %s cannot carry: %s", e.Path, c, e.Offset, e.File, e.Reason)
	}
	return fmt.Sprintf("path %q cannot be written into %s: %s", e.Path, e.File, e.Reason)
}

func category(r rune) string {
	switch {
	case unicode.IsControl(r):
		return "a control character"
	case unicode.Is(unicode.Cf, r):
		return "an invisible format character"
	case unicode.IsSpace(r):
		return "a space other than ' '"
	}
	return "not printable"
}

const invisibleReason = "configuration files are read line by line (php-fpm and MariaDB end a value at a newline), " +
	"and a control or invisible character makes logs and messages show a path other than the one on disk; phptune refuses them in every file"

// Check reports whether path can be written at s: an absolute path, at most
// the syntax's length, of printable UTF-8 that s can carry.
func (s Syntax) Check(path string) error {
	if !strings.HasPrefix(path, "/") {
		return &Error{Path: path, Offset: -1, File: s.file, Reason: "it is not absolute; nginx, php-fpm and MariaDB would each resolve it against a different directory"}
	}
	if len(path) > s.maxPath {
		why := "the kernel takes paths of at most 4095 bytes"
		if s.maxPath < maxPath {
			why = "MariaDB keeps file names in 512-byte buffers"
		}
		return &Error{Path: path, Offset: -1, File: s.file, Reason: fmt.Sprintf("it is %d bytes; %s takes paths of at most %d (%s)", len(path), s.file, s.maxPath, why)}
	}
	return s.CheckValue(path)
}

// CheckValue is Check for a value that is not a path (a user name, a
// password, a URI): printable UTF-8 that s can carry.
func (s Syntax) CheckValue(v string) error {
	for i, r := range v {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(v[i:]); size <= 1 {
				return &Error{Path: v, Offset: i, File: s.file, Reason: "it is not UTF-8, so logs and messages cannot show the path as it is on disk; phptune refuses such bytes in every file"}
			}
		}
		if !unicode.IsPrint(r) {
			return &Error{Path: v, Offset: i, File: s.file, Reason: invisibleReason}
		}
	}
	if s.maxValue > 0 && len(v) > s.maxValue {
		// my_load_defaults reads lines into a 4 KiB buffer and takes the
		// rest of a longer line for a line of its own; a value of 1 KiB
		// stays below that even with every byte escaped.
		return &Error{Path: v, Offset: -1, File: s.file, Reason: fmt.Sprintf("it is %d bytes; %s takes values of at most %d", len(v), s.file, s.maxValue)}
	}
	if s.refuse != nil {
		if i, why := s.refuse(v); i >= 0 {
			return &Error{Path: v, Offset: i, File: s.file, Reason: why}
		}
	}
	return nil
}

// Quote returns path as a double-quoted string in s's syntax, or the error
// of Check.
func (s Syntax) Quote(path string) (string, error) {
	if err := s.Check(path); err != nil {
		return "", err
	}
	return s.quote(path), nil
}

// QuoteValue is Quote for a value that is not a path.
func (s Syntax) QuoteValue(v string) (string, error) {
	if err := s.CheckValue(v); err != nil {
		return "", err
	}
	return s.quote(v), nil
}

func (s Syntax) quote(v string) string {
	var b strings.Builder
	b.Grow(len(v) + 2)
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		if strings.IndexByte(s.escape, v[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	b.WriteByte('"')
	return b.String()
}

// String names the file, for messages.
func (s Syntax) String() string { return s.file }

func refuseAll(chars, reason string) func(string) (int, string) {
	return func(s string) (int, string) {
		return strings.IndexAny(s, chars), reason
	}
}

func refuseTrailingBackslash(s string) (int, string) {
	if strings.HasSuffix(s, `\`) {
		return len(s) - 1, "a backslash before the closing quote would escape it (\\\" is lighttpd's only escape)"
	}
	return -1, ""
}

func refuseApacheEnv(s string) (int, string) {
	return strings.Index(s, "${"), "Apache replaces ${NAME} in every line with an environment variable and has no escape for it"
}

func refusePool(s string) (int, string) {
	return strings.Index(s, "$pool"), "php-fpm replaces $pool in every value with the pool's name"
}

func both(a, b func(string) (int, string)) func(string) (int, string) {
	return func(s string) (int, string) {
		i, why := a(s)
		if j, whyB := b(s); j >= 0 && (i < 0 || j < i) {
			i, why = j, whyB
		}
		return i, why
	}
}

// homeSyntaxes are the places where a lab writes paths below its home:
// nginx's access_log and fastcgi_pass, php-fpm's socket, MariaDB's tmpdir
// and the plainer places beside them.
var homeSyntaxes = []Syntax{NginxVariables, NginxLiteral, FPMListen, FPM, PHPIni, MyCnfList, MyCnf}

// CheckHome refuses a state home (PHPTUNE_HOME) below which lab paths could
// not be written into every configuration file a lab renders, naming the
// character and the fix. The names a lab adds below its home are plain
// ASCII, so the home decides.
func CheckHome(home string) error {
	for _, s := range homeSyntaxes {
		if err := s.Check(home); err != nil {
			if c := err.(*Error).Char(); c != "" {
				return fmt.Errorf("phptune's home: %w; set PHPTUNE_HOME to a directory whose path has no %s", err, c)
			}
			return fmt.Errorf("phptune's home: %w; set PHPTUNE_HOME to a short absolute path", err)
		}
	}
	return nil
}

// Summary is err's message made safe to write into a comment or a quoted
// string of any of the files: one line of printable characters, cut to 300
// bytes (a longer comment line would be split by MariaDB's 4 KiB line
// reader, and its rest read as an option).
func Summary(err error) string {
	const max = 300
	var b strings.Builder
	for _, r := range err.Error() {
		if !unicode.IsPrint(r) {
			r = '?'
		}
		if b.Len()+utf8.RuneLen(r) > max {
			b.WriteString("...")
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
