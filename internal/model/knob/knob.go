// Package knob is phptune's configuration model: every setting phptune can
// change is a named Knob with a type, the distro's default and a valid range.
// A Config is a complete assignment of values to knobs. The package does no
// I/O; components (nginx, phpfpm, mariadb) render a Config in their own syntax.
package knob

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Kind is the type of a knob's value.
type Kind int

const (
	// Int is a whole number within [Min, Max].
	Int Kind = iota
	// Enum is one of Values.
	Enum
	// Bool is on or off.
	Bool
	// Size is a byte size written like 128M; Min and Max are bytes.
	Size
)

func (k Kind) String() string {
	switch k {
	case Int:
		return "int"
	case Enum:
		return "enum"
	case Bool:
		return "bool"
	case Size:
		return "size"
	}
	return "?"
}

// Component names the program a knob belongs to.
const (
	PHPFPM  = "php-fpm"
	PHP     = "php"
	Nginx   = "nginx"
	MariaDB = "mariadb"
	// Build is the PHP binary itself: the distro's or a build of phptune's.
	Build = "build"
	// Apache is Debian's apache2 (either MPM; knobs of one MPM only are
	// named apache.event.* and apache.prefork.*).
	Apache = "apache"
	// Unit is NGINX Unit (unitd with its PHP module, php.unit.so): its
	// router and its PHP application processes, configured through its
	// control API.
	Unit = "unit"
	// Server is the choice of web server (knob "server").
	Server = "server"
	// Lighttpd, Caddy and H2O are Debian's lighttpd, caddy and h2o, each
	// in front of php-fpm.
	Lighttpd = "lighttpd"
	Caddy    = "caddy"
	H2O      = "h2o"
)

// ServerKnob chooses the lab's web server and how it runs PHP.
const ServerKnob = "server"

// The servers a lab can run (values of the server knob).
const (
	// NginxFPM is nginx in front of php-fpm (the default).
	NginxFPM = "nginx-fpm"
	// ApacheEventFPM is Apache with the event MPM in front of php-fpm
	// (mod_proxy_fcgi).
	ApacheEventFPM = "apache-event-fpm"
	// ApachePreforkModPHP is Apache with the prefork MPM running PHP in
	// its own children (mod_php, libapache2-mod-php): no php-fpm.
	ApachePreforkModPHP = "apache-prefork-modphp"
	// UnitPHP is NGINX Unit running PHP in its own application processes
	// (the embed SAPI through php.unit.so): no php-fpm.
	UnitPHP = "unit"
	// LighttpdFPM is lighttpd in front of php-fpm (mod_fastcgi).
	LighttpdFPM = "lighttpd-fpm"
	// CaddyFPM is Caddy in front of php-fpm (php_fastcgi).
	CaddyFPM = "caddy-fpm"
	// H2OFPM is h2o in front of php-fpm (fastcgi.connect).
	H2OFPM = "h2o-fpm"
)

// Servers lists the values of the server knob, the default first.
var Servers = []string{NginxFPM, ApacheEventFPM, ApachePreforkModPHP, LighttpdFPM, CaddyFPM, H2OFPM, UnitPHP}

// serverOf maps the components that are a web server of their own to
// their server.
var serverOf = map[string]string{Nginx: NginxFPM, Lighttpd: LighttpdFPM, Caddy: CaddyFPM, H2O: H2OFPM, Unit: UnitPHP}

// BuildKnob selects the PHP binaries a lab runs: "distro" (the installed
// packages) or the id of a build made by `phptune build`.
const BuildKnob = "php.build"

// ZendAllocHugePagesKnob puts USE_ZEND_ALLOC_HUGE_PAGES=1 in the pool's
// environment (a php-fpm pool's env[], not a php.ini setting: the Zend
// allocator reads it when the worker starts).
const ZendAllocHugePagesKnob = "fpm.zend_alloc_huge_pages"

// BuildValidator decides which values of php.build are valid besides
// "distro": the model is pure, so the caller that knows the build cache
// sets it (package phpbuild offers one). It gets the trimmed value and
// returns the canonical form, or an error saying why the value is refused.
// Nil (the default) accepts only "distro".
var BuildValidator func(v string) (string, error)

// Knob describes one setting.
type Knob struct {
	Name      string // phptune's name, e.g. "pm.max_children"
	Component string // PHPFPM, PHP, Nginx or MariaDB
	Kind      Kind
	Default   string   // canonical form of the distro's default
	Min, Max  int64    // for Int and Size
	Values    []string // for Enum
	Help      string   // one line
	// Directive is the name in the component's own syntax when it differs
	// from Name (e.g. nginx "worker_processes").
	Directive string
	// MinPHP and MaxPHP bound the PHP versions ("8.0") that have the
	// setting, for a PHP or php-fpm knob; "" is no bound (see Available).
	MinPHP, MaxPHP string `json:",omitempty"`
}

// ServersOf lists the servers whose configurations use k: nginx's,
// lighttpd's, Caddy's and h2o's knobs belong to their server, php-fpm's to
// the servers that run php-fpm, Apache's to the Apache servers
// (apache.event.* and apache.prefork.* to the one with that MPM); PHP's,
// MariaDB's, the build and the server knob itself to every server.
func ServersOf(k Knob) []string {
	if k.Name == PoolsKnob {
		// Pools need a web server that balances them: nginx's upstream.
		return []string{NginxFPM}
	}
	if s, ok := serverOf[k.Component]; ok {
		return []string{s}
	}
	switch {
	case k.Component == PHPFPM:
		var out []string
		for _, s := range Servers {
			if RunsFPM(s) {
				out = append(out, s)
			}
		}
		return out
	case strings.HasPrefix(k.Name, "apache.event."):
		return []string{ApacheEventFPM}
	case strings.HasPrefix(k.Name, "apache.prefork."):
		return []string{ApachePreforkModPHP}
	case k.Component == Apache:
		return []string{ApacheEventFPM, ApachePreforkModPHP}
	case k.Component == Unit:
		return []string{UnitPHP}
	}
	return Servers
}

// UsedBy reports whether server's configurations use knob k.
func UsedBy(k Knob, server string) bool {
	for _, s := range ServersOf(k) {
		if s == server {
			return true
		}
	}
	return false
}

// RunsFPM reports whether server runs php-fpm: every server but those
// running PHP in their own processes (mod_php, Unit).
func RunsFPM(server string) bool { return server != ApachePreforkModPHP && server != UnitPHP }

// WorkersKnob names the knob that holds server's PHP concurrency, the
// most requests that can run PHP at once: php-fpm's pm.max_children where
// php-fpm runs, Apache's MaxRequestWorkers with mod_php (prefork's
// children are the PHP workers), the most application processes with Unit.
func WorkersKnob(server string) string {
	switch {
	case RunsFPM(server):
		return "pm.max_children"
	case server == UnitPHP:
		return "unit.processes"
	}
	return "apache.max_request_workers"
}

// Range describes the valid values in words, for help and error messages.
func (k Knob) Range() string {
	switch k.Kind {
	case Int:
		if autoKnobs[k.Name] {
			return fmt.Sprintf("auto|%d..%d", k.Min, k.Max)
		}
		return fmt.Sprintf("%d..%d", k.Min, k.Max)
	case Size:
		return FormatSize(k.Min) + ".." + FormatSize(k.Max)
	case Bool:
		return "on|off"
	case Enum:
		return strings.Join(k.Values, "|")
	}
	return ""
}

// Normalize checks v against the knob's type and range and returns its
// canonical form ("On", "1", "true" become "on"; "128m" becomes "128M").
func (k Knob) Normalize(v string) (string, error) {
	v = strings.TrimSpace(v)
	if k.Name == BuildKnob {
		return normalizeBuild(k, v)
	}
	switch k.Kind {
	case Int:
		if autoKnobs[k.Name] && v == "auto" {
			return "auto", nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", &ValueError{Knob: k, Value: v, Reason: "not a whole number"}
		}
		if n < k.Min || n > k.Max {
			return "", &ValueError{Knob: k, Value: v, Reason: "out of range"}
		}
		return strconv.FormatInt(n, 10), nil
	case Size:
		n, err := ParseSize(v)
		if err != nil {
			return "", &ValueError{Knob: k, Value: v, Reason: "not a size like 128M"}
		}
		if n < k.Min || n > k.Max {
			return "", &ValueError{Knob: k, Value: v, Reason: "out of range"}
		}
		return FormatSize(n), nil
	case Bool:
		switch strings.ToLower(v) {
		case "on", "1", "true", "yes":
			return "on", nil
		case "off", "0", "false", "no":
			return "off", nil
		}
		return "", &ValueError{Knob: k, Value: v, Reason: "not on or off"}
	case Enum:
		for _, e := range k.Values {
			if strings.EqualFold(e, v) {
				return e, nil
			}
		}
		return "", &ValueError{Knob: k, Value: v, Reason: "not one of the choices"}
	}
	return "", fmt.Errorf("knob %s: unknown kind", k.Name)
}

// autoKnobs are the Int knobs that also take "auto", the program's own
// choice: nginx's worker per core, h2o's thread per core, Go's GOMAXPROCS
// (every CPU the process may run on) for Caddy.
var autoKnobs = map[string]bool{"nginx.worker_processes": true, "h2o.num_threads": true, "caddy.gomaxprocs": true}

// normalizeBuild accepts "distro" and whatever BuildValidator accepts.
func normalizeBuild(k Knob, v string) (string, error) {
	if strings.EqualFold(v, "distro") {
		return "distro", nil
	}
	if BuildValidator == nil {
		return "", &ValueError{Knob: k, Value: v, Reason: "not a known build (no build cache was consulted)"}
	}
	out, err := BuildValidator(v)
	if err != nil {
		return "", &ValueError{Knob: k, Value: v, Reason: err.Error()}
	}
	return out, nil
}

// ValueError is a value a knob does not accept.
type ValueError struct {
	Knob   Knob
	Value  string
	Reason string
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("knob %s: value %q is %s; valid: %s (default %s)",
		e.Knob.Name, e.Value, e.Reason, e.Knob.Range(), e.Knob.Default)
}

// ErrUnknownKnob is wrapped by errors about names that are not knobs.
var ErrUnknownKnob = errors.New("unknown knob")
