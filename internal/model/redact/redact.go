// Package redact removes credentials from what phptune stores and shows:
// the values of request headers, form fields, query parameters and
// command-line arguments whose names say they hold a secret, and the
// password of a URL. It is pure (no I/O), and every function is idempotent:
// redacting redacted text changes nothing.
//
// A name is secret (IsSecretName) when it is one of the credential headers
// Authorization, Proxy-Authorization, Cookie and Set-Cookie, when one of its
// words is key, token, pass, password, passwd, pwd, secret, salt,
// credential(s), auth or session, or
// when the user named it with --redact. Words are split on '-', '_', '.',
// '[' and ']', case-insensitively, so X-Api-Key, pwd_pass, mariadb.password
// and user[pass] are secret while compass, keyboard and Keep-Alive are not.
// A secret's value is replaced by Placeholder; its name is kept, so the
// record still says what was sent.
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Placeholder replaces a secret value.
const Placeholder = "<redacted>"

// secretWords are the words that make a name secret.
var secretWords = map[string]bool{
	"key": true, "token": true, "pass": true, "password": true, "passwd": true,
	"secret": true, "auth": true, "session": true,
	// Beyond the first list: WordPress's NONCE_SALT and friends, and the
	// usual spellings of a credential field.
	"pwd": true, "salt": true, "credential": true, "credentials": true,
}

// secretHeaders are secret whole, though no word of theirs is.
var secretHeaders = map[string]bool{
	"authorization": true, "proxy-authorization": true, "cookie": true, "set-cookie": true,
}

func isSep(r rune) bool { return r == '-' || r == '_' || r == '.' || r == '[' || r == ']' }

// IsSecretName reports whether the value of a header, form field, query
// parameter, flag or JSON member called name is a credential. extra are
// names given with --redact, matched whole and case-insensitively.
func IsSecretName(name string, extra []string) bool {
	n := strings.TrimSpace(name)
	if n == "" {
		return false
	}
	for _, e := range extra {
		if strings.EqualFold(strings.TrimSpace(e), n) {
			return true
		}
	}
	l := strings.ToLower(n)
	if secretHeaders[l] {
		return true
	}
	for _, w := range strings.FieldsFunc(l, isSep) {
		if secretWords[w] {
			return true
		}
	}
	return false
}

// Header redacts one header line "Name: value": a secret name's value
// becomes Placeholder ("X-Api-Key: <redacted>"); any other line is redacted
// as text (a URL's password in a Referer, a token in a query string).
func Header(line string, extra []string) string {
	name, value, ok := strings.Cut(line, ":")
	if ok && strings.TrimSpace(value) != "" && IsSecretName(name, extra) {
		return name + ": " + Placeholder
	}
	return Text(line, extra)
}

// Form redacts a request body. A form-encoded body (a=1&pwd_pass=x) keeps
// every field and every name, and the value of each secret-named field
// becomes Placeholder (a=1&pwd_pass=<redacted>); names are compared
// percent-decoded. Any other body (JSON, XML, text) is redacted as text,
// which catches secret-named JSON members and name=value or Name: value
// pairs but keeps everything else, since it cannot know which parts of an
// arbitrary body are secret: name such fields with --redact when they are
// shaped like pairs, or use --body-file (bodies from files are never
// recorded).
func Form(body string, extra []string) string {
	if !looksForm(body) {
		body = Text(body, extra)
		if !looksForm(body) {
			return body
		}
		// Text can make a body form-like (name='a b' became
		// name='<redacted>'): what Form returns must redact to itself.
	}
	return pairs(body, extra)
}

// looksForm tells an application/x-www-form-urlencoded body from others:
// it has a name=value pair and no whitespace, quotes or braces.
func looksForm(s string) bool {
	if !strings.Contains(s, "=") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f || c == '"' || c == '{' || c == '}' {
			return false
		}
	}
	return true
}

// pairs redacts the secret-named values of a &-separated list of
// name=value pairs (a query string, a form body, a fragment).
func pairs(s string, extra []string) string {
	parts := strings.Split(s, "&")
	changed := false
	for i, p := range parts {
		name, value, ok := strings.Cut(p, "=")
		if !ok || value == "" || value == Placeholder {
			continue
		}
		if IsSecretName(formName(name), extra) {
			parts[i] = name + "=" + Placeholder
			changed = true
		}
	}
	if !changed {
		return s
	}
	return strings.Join(parts, "&")
}

// formName is a form field's name percent-decoded, or as given when it does
// not decode.
func formName(name string) string {
	if d, err := url.QueryUnescape(name); err == nil {
		return d
	}
	return name
}

// URL redacts a URL or a request URI: the password of its userinfo
// (http://u:p@h/ becomes http://u:<redacted>@h/; userinfo without a
// password, often a token, is replaced whole) and the secret-named
// parameters of its query and fragment.
func URL(s string, extra []string) string {
	head, tail := s, ""
	// a is where the authority starts: after "scheme://", or after the
	// "//" of a scheme-relative URL; -1 for a request URI.
	a := -1
	if strings.HasPrefix(s, "//") {
		a = 2
	} else if i := strings.Index(s, "://"); i > 0 && !strings.ContainsAny(s[:i], "/?#") {
		a = i + 3
	}
	if a >= 0 {
		auth := s[a:]
		end := strings.IndexAny(auth, "/?#")
		if end < 0 {
			end = len(auth)
		}
		if at := strings.LastIndexByte(auth[:end], '@'); at >= 0 {
			s = s[:a] + userinfo(auth[:at]) + auth[at:]
		}
		// The query starts after the authority.
		if k := strings.IndexAny(s[a:], "?#"); k >= 0 {
			head, tail = s[:a+k], s[a+k:]
		} else {
			return s
		}
	} else if k := strings.IndexAny(s, "?#"); k >= 0 {
		head, tail = s[:k], s[k:]
	} else {
		return s
	}
	rest, frag, hasFrag := strings.Cut(tail, "#")
	if strings.HasPrefix(rest, "?") {
		rest = "?" + pairs(rest[1:], extra)
	}
	if hasFrag {
		return head + rest + "#" + pairs(frag, extra)
	}
	return head + rest
}

// userinfo redacts the part of a URL before its host's '@'.
func userinfo(ui string) string {
	if user, pw, ok := strings.Cut(ui, ":"); ok {
		if pw == "" {
			return ui
		}
		return user + ":" + Placeholder
	}
	if ui == "" {
		return ui
	}
	return Placeholder
}

// Args redacts a command line (without or with the program name): the
// values of -H/--header (as Header) and --body (as Form), in their separate
// (-H 'X-Api-Key: k'), joined (-H=..., --header=..., -H'...') and
// --body=... forms; the value of any flag with a secret name (--password x,
// --token=x); and every other argument as text (URLs with userinfo, query
// strings, KNOB=VALUE and Name: value shapes). argv is not changed.
func Args(argv []string, extra []string) []string {
	out := make([]string, len(argv))
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		next := func(f func(string, []string) string) {
			out[i] = a
			if i+1 < len(argv) {
				i++
				out[i] = f(argv[i], extra)
			}
		}
		switch {
		case a == "--":
			// Everything after is an argument, not a flag.
			out[i] = a
			for j := i + 1; j < len(argv); j++ {
				out[j] = Text(argv[j], extra)
			}
			return out
		case a == "-H" || a == "--header":
			next(Header)
		case a == "--body":
			next(Form)
		case strings.HasPrefix(a, "--header="):
			out[i] = "--header=" + Header(a[len("--header="):], extra)
		case strings.HasPrefix(a, "--body="):
			out[i] = "--body=" + Form(a[len("--body="):], extra)
		case strings.HasPrefix(a, "-H="):
			out[i] = "-H=" + Header(a[3:], extra)
		case strings.HasPrefix(a, "-H"):
			out[i] = "-H" + Header(a[2:], extra)
		case strings.HasPrefix(a, "-") && len(a) > 1 && !strings.HasPrefix(a, "---"):
			name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			switch {
			case !IsSecretName(name, extra):
				out[i] = Text(a, extra)
			case hasValue && value != "":
				out[i] = a[:len(a)-len(value)] + Placeholder
			case hasValue:
				out[i] = a
			case i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-"):
				// --password VALUE: a flag named like a secret takes the
				// next argument as its value.
				out[i] = a
				i++
				out[i] = Placeholder
			default:
				out[i] = a
			}
		default:
			out[i] = Text(a, extra)
		}
	}
	return out
}

// Shapes of credentials in free text. The patterns match a name and its
// separator only; the value is scanned by hand (see valueEnd), so that a
// declined match costs no more than its name and the search stays linear.
var (
	// scheme://userinfo@
	reUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*:)?//([^/?#\s'"@]*)@`)
	// define('DB_PASSWORD', 'value') in wp-config.php
	reDefine = regexp.MustCompile(`(define\(\s*['"])([A-Za-z0-9_]+)(['"]\s*,\s*['"])([^'"]*)(['"])`)
	// "name": in JSON
	reJSON = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"(\s*:\s*)`)
	// Name: (headers, logs, YAML)
	reColon = regexp.MustCompile(`([A-Za-z0-9][A-Za-z0-9_.\-]*)([ \t]*:[ \t]*)`)
	// name= (forms, queries, ini files, flags)
	reEquals = regexp.MustCompile(`([A-Za-z0-9_.\-%\[\]]+)([ \t]*=[ \t]*)`)
)

// Text redacts credentials wherever they appear in free text (a stored
// command line, a log line, a warning, an error body): URL passwords,
// define('NAME', '...') with a secret NAME, JSON members ("name": value),
// Name: value (the value runs to the end of the line or to a quote) and
// name=value pairs (the value ends at whitespace, &, ;, a comma or a quote,
// or is quoted) whose names are secret. Anything else is kept.
func Text(s string, extra []string) string {
	if !strings.ContainsAny(s, "=:@(") {
		return s
	}
	// One pass can expose a shape another rule then sees differently; a
	// few passes reach the fixed point, which makes Text idempotent.
	for range 8 {
		next := textPass(s, extra)
		if next == s {
			break
		}
		s = next
	}
	return s
}

func textPass(s string, extra []string) string {
	s = replace(reUserinfo, s, func(m []string, _ string) (string, int, bool) {
		return m[1] + "//" + userinfo(m[2]) + "@", 0, true
	})
	s = replace(reDefine, s, func(m []string, _ string) (string, int, bool) {
		if m[4] == "" || !IsSecretName(m[2], extra) {
			return "", 0, false
		}
		return m[1] + m[2] + m[3] + Placeholder + m[5], 0, true
	})
	s = replace(reJSON, s, func(m []string, rest string) (string, int, bool) {
		// The name first: scanning a value that is kept would make
		// every declined match cost the rest of the text.
		if !IsSecretName(m[1], extra) {
			return "", 0, false
		}
		n := jsonValueEnd(rest)
		if n == 0 || rest[:n] == `""` {
			return "", 0, false
		}
		return m[0] + `"` + Placeholder + `"`, n, true
	})
	s = replace(reColon, s, func(m []string, rest string) (string, int, bool) {
		if !IsSecretName(m[1], extra) {
			return "", 0, false
		}
		n := strings.IndexAny(rest, "\r\n'\"")
		if n < 0 {
			n = len(rest)
		}
		if strings.TrimSpace(rest[:n]) == "" {
			return "", 0, false
		}
		return m[0] + Placeholder, n, true
	})
	s = replace(reEquals, s, func(m []string, rest string) (string, int, bool) {
		if !IsSecretName(formName(m[1]), extra) {
			return "", 0, false
		}
		n, quote := valueEnd(rest)
		if n == 0 {
			return "", 0, false
		}
		if quote != 0 {
			return m[0] + string(quote) + Placeholder + string(quote), n, true
		}
		return m[0] + Placeholder, n, true
	})
	return s
}

// valueEnd is the length of the name=value value at the start of rest: a
// quoted string (quote is its quote character) or up to whitespace, &, ;,
// a comma or a quote.
func valueEnd(rest string) (n int, quote byte) {
	if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
		if end := strings.IndexByte(rest[1:], rest[0]); end >= 0 {
			return end + 2, rest[0]
		}
	}
	for n < len(rest) {
		switch rest[n] {
		case ' ', '\t', '\n', '\r', '\f', '\v', '&', ';', ',', '\'', '"':
			return n, 0
		}
		n++
	}
	return n, 0
}

// jsonValueEnd is the length of the JSON value at the start of rest: a
// string with its escapes, or a bare value up to a delimiter.
func jsonValueEnd(rest string) int {
	if rest != "" && rest[0] == '"' {
		for i := 1; i < len(rest); i++ {
			switch rest[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return 0 // unterminated: not JSON
	}
	n := 0
	for n < len(rest) {
		switch rest[n] {
		case ' ', '\t', '\n', '\r', '\f', '\v', ',', '}', ']', '"':
			return n
		}
		n++
	}
	return n
}

// replace rewrites the matches of re in s for which f says so. f gets the
// match's groups and the text after the match; it returns the replacement
// of the match and of the first n bytes after it. A declined match is
// skipped, and the search goes on right after it (so a pair inside a value,
// as in --body=pass=x, is still seen).
func replace(re *regexp.Regexp, s string, f func(m []string, rest string) (repl string, n int, ok bool)) string {
	var b strings.Builder
	done, pos := 0, 0
	for pos < len(s) {
		loc := re.FindStringSubmatchIndex(s[pos:])
		if loc == nil {
			break
		}
		m := make([]string, len(loc)/2)
		for i := range m {
			if loc[2*i] >= 0 {
				m[i] = s[pos+loc[2*i] : pos+loc[2*i+1]]
			}
		}
		start, end := pos+loc[0], pos+loc[1]
		repl, n, ok := f(m, s[end:])
		if !ok {
			pos = max(end, start+1)
			continue
		}
		b.WriteString(s[done:start])
		b.WriteString(repl)
		done = end + n
		pos = max(done, start+1)
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}
