package knob

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// PHPWorkers is c's PHP concurrency: the value of WorkersKnob(c.Server()).
// A configuration without it (it needs only its own server's knobs) has
// the knob's default.
func (c Config) PHPWorkers() int64 {
	n, _ := strconv.ParseInt(c.value(byName[WorkersKnob(c.Server())]), 10, 64)
	return n
}

// Config maps every knob name to its canonical value.
type Config map[string]string

// Defaults returns the distro's configuration.
func Defaults() Config {
	c := make(Config, len(registry))
	for _, k := range registry {
		c[k.Name] = k.Default
	}
	return c
}

// Clone returns a copy of c.
func (c Config) Clone() Config {
	out := make(Config, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

// Set validates and assigns one knob.
func (c Config) Set(name, value string) error {
	k, err := Lookup(name)
	if err != nil {
		return err
	}
	v, err := k.Normalize(value)
	if err != nil {
		return err
	}
	c[name] = v
	return nil
}

// Apply parses assignments of the form knob=value (as given to --set) onto a
// copy of c. It checks each value but not the cross-knob rules; call Validate.
func (c Config) Apply(assignments []string) (Config, error) {
	out := c.Clone()
	for _, a := range assignments {
		name, value, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("--set %q: expected KNOB=VALUE, e.g. pm.max_children=16", a)
		}
		if err := out.Set(strings.TrimSpace(name), value); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Int returns an integer knob's value; "auto" and malformed values give 0.
func (c Config) Int(name string) int64 {
	n, _ := strconv.ParseInt(c[name], 10, 64)
	return n
}

// Bytes returns a size knob's value in bytes.
func (c Config) Bytes(name string) int64 {
	n, _ := ParseSize(c[name])
	return n
}

// Relevant reports whether knob name has any effect in c: the spare
// settings only matter to a dynamic pool, the idle timeout to an ondemand
// one, the JIT mode only with a JIT buffer, the revalidation period only
// while timestamps are validated.
//
// A knob of another server than c's (see ServersOf) has no effect either.
func (c Config) Relevant(name string) bool {
	if k, ok := byName[name]; ok && !UsedBy(k, c.Server()) {
		return false
	}
	switch name {
	case "pm.start_servers", "pm.min_spare_servers", "pm.max_spare_servers":
		return c["pm"] == "dynamic"
	case "pm.process_idle_timeout":
		return c["pm"] == "ondemand"
	case "opcache.jit":
		return c.Bytes("opcache.jit_buffer_size") > 0
	case "opcache.revalidate_freq":
		return c.On("opcache.validate_timestamps")
	}
	return true
}

// Server is c's web server: the server knob, nginx-fpm when c was stored
// before the knob existed.
func (c Config) Server() string {
	if v := c[ServerKnob]; v != "" {
		return v
	}
	return NginxFPM
}

// value is c's value of k, its default when c has none (a configuration
// needs only its own server's knobs, and older ones lack newer knobs).
func (c Config) value(k Knob) string {
	if v, ok := c[k.Name]; ok {
		return v
	}
	return k.Default
}

// On reports whether a bool knob is on.
func (c Config) On(name string) bool { return c[name] == "on" }

// Validate checks every value and the rules between knobs that the programs
// themselves enforce (php-fpm refuses to start otherwise). All problems are
// reported together.
//
// A configuration needs only the knobs of its own server (see ServersOf);
// a knob of another server may be missing or at its default (where it is
// simply irrelevant), and is refused, naming the servers it belongs to,
// when it is set to anything else: the change would silently do nothing.
func (c Config) Validate() error {
	var errs []error
	server := c.Server()
	if _, err := byName[ServerKnob].Normalize(server); err != nil {
		return err
	}
	for _, k := range registry {
		v, ok := c[k.Name]
		if !ok && (k.Name == BuildKnob || k.Name == ServerKnob) {
			continue // configs stored before the knob existed ran the distro's PHP behind nginx
		}
		if !UsedBy(k, server) {
			if ok && v != k.Default {
				errs = append(errs, &ServerError{Knob: k, Value: v, Server: server})
			}
			continue
		}
		if !ok {
			errs = append(errs, fmt.Errorf("knob %s has no value", k.Name))
			continue
		}
		if _, err := k.Normalize(v); err != nil {
			errs = append(errs, err)
		}
	}
	if server == ApachePreforkModPHP && c[BuildKnob] != "" && c[BuildKnob] != "distro" {
		errs = append(errs, fmt.Errorf("php.build=%s: server=%s runs PHP as Debian's Apache module (libphp8.2.so), and phptune's builds run as php-fpm only; use php.build=distro or server=%s", c[BuildKnob], server, ApacheEventFPM))
	}
	if server == UnitPHP && c[BuildKnob] != "" && c[BuildKnob] != "distro" {
		errs = append(errs, fmt.Errorf("php.build=%s: server=%s runs PHP through Debian's embed SAPI (libphp8.2-embed), and phptune's builds run as php-fpm only; use php.build=distro or a php-fpm server", c[BuildKnob], server))
	}
	for name := range c {
		if _, ok := byName[name]; !ok {
			errs = append(errs, fmt.Errorf("%w %q", ErrUnknownKnob, name))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	maxc := c.Int("pm.max_children")
	errs = append(errs, c.validateApache(server)...)
	errs = append(errs, c.validateTopology()...)
	if server == NginxFPM {
		if n, wc := c.Int("nginx.worker_rlimit_nofile"), c.Int("nginx.worker_connections"); n > 0 && n < 2*wc {
			errs = append(errs, fmt.Errorf("nginx.worker_rlimit_nofile=%d is below 2 x nginx.worker_connections = %d: each proxied connection holds a client socket and an upstream one; valid: 0 (not set) or %d..1048576", n, 2*wc, 2*wc))
		}
	}
	if server == UnitPHP && c.Int("unit.threads") > 1 {
		errs = append(errs, fmt.Errorf("unit.threads=%s: Debian's PHP embed library (libphp8.2-embed) is built without thread safety (NTS), and Unit runs several request threads in a PHP process only with a ZTS PHP; valid here: 1; raise unit.processes instead", c["unit.threads"]))
	}
	if server == UnitPHP && c["unit.pm"] == "dynamic" {
		if sp, mx := c.Int("unit.spare_processes"), c.Int("unit.processes"); sp > mx {
			errs = append(errs, fmt.Errorf("unit.spare_processes=%d is greater than unit.processes=%d; Unit requires spare <= max", sp, mx))
		}
	}
	if !UsedBy(byName["pm"], server) {
		return errors.Join(errs...)
	}
	if c["pm"] == "dynamic" {
		minS, maxS, start := c.Int("pm.min_spare_servers"), c.Int("pm.max_spare_servers"), c.Int("pm.start_servers")
		if maxS > maxc {
			errs = append(errs, fmt.Errorf("pm.max_spare_servers=%d is greater than pm.max_children=%d; php-fpm requires max_spare_servers <= max_children", maxS, maxc))
		}
		if minS > maxS {
			errs = append(errs, fmt.Errorf("pm.min_spare_servers=%d is greater than pm.max_spare_servers=%d; php-fpm requires min_spare_servers <= max_spare_servers", minS, maxS))
		}
		if start < minS || start > maxS {
			errs = append(errs, fmt.Errorf("pm.start_servers=%d is outside [pm.min_spare_servers=%d, pm.max_spare_servers=%d]; php-fpm requires it within", start, minS, maxS))
		}
	}
	return errors.Join(errs...)
}

// validateApache checks the MPM rules that Apache would otherwise "fix" at
// start with a warning, running another configuration than the one asked.
func (c Config) validateApache(server string) []error {
	var errs []error
	workers := c.Int("apache.max_request_workers")
	switch server {
	case ApacheEventFPM:
		threads, limit := c.Int("apache.event.threads_per_child"), c.Int("apache.event.server_limit")
		minT, maxT := c.Int("apache.event.min_spare_threads"), c.Int("apache.event.max_spare_threads")
		if workers < threads {
			errs = append(errs, fmt.Errorf("apache.max_request_workers=%d is below apache.event.threads_per_child=%d; Apache raises it to one child's threads", workers, threads))
		} else if workers%threads != 0 {
			errs = append(errs, fmt.Errorf("apache.max_request_workers=%d is not a multiple of apache.event.threads_per_child=%d; Apache lowers it to %d", workers, threads, workers/threads*threads))
		}
		if workers > limit*threads {
			errs = append(errs, fmt.Errorf("apache.max_request_workers=%d is above apache.event.server_limit x threads_per_child = %d x %d; Apache lowers it (raise server_limit to at least %d)", workers, limit, threads, (workers+threads-1)/threads))
		}
		if maxT < minT+threads {
			errs = append(errs, fmt.Errorf("apache.event.max_spare_threads=%d is below min_spare_threads + threads_per_child = %d; Apache raises it", maxT, minT+threads))
		}
		if start := c.Int("apache.event.start_servers"); start > limit {
			errs = append(errs, fmt.Errorf("apache.event.start_servers=%d is above apache.event.server_limit=%d", start, limit))
		}
	case ApachePreforkModPHP:
		limit := c.Int("apache.prefork.server_limit")
		minS, maxS := c.Int("apache.prefork.min_spare_servers"), c.Int("apache.prefork.max_spare_servers")
		if workers > limit {
			errs = append(errs, fmt.Errorf("apache.max_request_workers=%d is above apache.prefork.server_limit=%d; Apache lowers it", workers, limit))
		}
		if maxS <= minS {
			errs = append(errs, fmt.Errorf("apache.prefork.max_spare_servers=%d is not above min_spare_servers=%d; Apache raises it to %d", maxS, minS, minS+1))
		}
		if start := c.Int("apache.prefork.start_servers"); start > limit {
			errs = append(errs, fmt.Errorf("apache.prefork.start_servers=%d is above apache.prefork.server_limit=%d", start, limit))
		}
	}
	return errs
}

// ServerError is a knob set for a server the configuration does not run.
type ServerError struct {
	Knob   Knob
	Value  string
	Server string // the configuration's server
}

func (e *ServerError) Error() string {
	owners := ServersOf(e.Knob)
	names := strings.Join(owners, " or ")
	if n := len(owners); n > 2 {
		names = strings.Join(owners[:n-1], ", ") + " or " + owners[n-1]
	}
	msg := fmt.Sprintf("knob %s=%s belongs to server %s, but this configuration runs server=%s",
		e.Knob.Name, e.Value, names, e.Server)
	switch {
	case e.Knob.Component == PHPFPM && e.Server == ApachePreforkModPHP:
		msg += " (PHP runs inside Apache's children there, with no php-fpm: size them with apache.max_request_workers and apache.prefork.*)"
	case e.Knob.Component == PHPFPM && e.Server == UnitPHP:
		msg += " (PHP runs in Unit's application processes there, with no php-fpm: size them with unit.pm, unit.processes and unit.spare_processes)"
	}
	return msg + fmt.Sprintf("; set server=%s, or leave %s at its default %s", owners[0], e.Knob.Name, e.Knob.Default)
}

// FitDynamic returns c with the dynamic pool's spare and start settings
// brought inside php-fpm's rules for its max_children, keeping them where they
// already fit. The tuner uses it when it changes max_children alone.
func (c Config) FitDynamic() Config {
	out := c.Clone()
	maxc := out.Int("pm.max_children")
	minS, maxS, start := out.Int("pm.min_spare_servers"), out.Int("pm.max_spare_servers"), out.Int("pm.start_servers")
	if maxS > maxc {
		maxS = maxc
	}
	if minS > maxS {
		minS = maxS
	}
	if start < minS {
		start = minS
	}
	if start > maxS {
		start = maxS
	}
	out["pm.min_spare_servers"] = strconv.FormatInt(minS, 10)
	out["pm.max_spare_servers"] = strconv.FormatInt(maxS, 10)
	out["pm.start_servers"] = strconv.FormatInt(start, 10)
	return out
}

// Change is one knob whose value differs between two configs.
type Change struct {
	Knob     string `json:"knob"`
	From, To string
}

// Diff lists the knobs whose values differ from a to b, in registry order.
func Diff(a, b Config) []Change {
	var out []Change
	for _, k := range All() {
		if av, bv := a.value(k), b.value(k); av != bv {
			out = append(out, Change{Knob: k.Name, From: av, To: bv})
		}
	}
	return out
}

// Overrides returns the assignments (knob=value) that turn Defaults into c,
// in registry order: the form --set and knob files take.
func (c Config) Overrides() []string {
	var out []string
	for _, ch := range Diff(Defaults(), c) {
		out = append(out, ch.Knob+"="+ch.To)
	}
	return out
}
