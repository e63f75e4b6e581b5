// Package setup installs the Debian packages phptune's lab and tests use.
package setup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Packages are what a lab needs. nginx and php-fpm come before wordpress in
// one apt transaction's list, but apt picks alternatives by what is already
// installed, so Install installs them in two steps: WordPress then finds its
// "httpd | apache2" and "php | libapache2-mod-php" dependencies satisfied and
// does not pull in Apache.
var Packages = [][]string{
	{"nginx", "php-fpm", "php-cli", "php-cgi", "php-mysql", "php-mbstring", "php-xml", "php-gd", "php-curl",
		"mariadb-server", "mariadb-client", "procps"},
	{"wordpress", "wordpress-theme-twentytwentythree"},
	Apache,
	WebServers,
	Profilers,
	Seal,
	PHPRoots,
}

// PHPRoots is what phptune php add makes a newer PHP's root with:
// mmdebstrap, which installs a Debian release's own packages (Debian 13's
// php8.4-fpm) into a directory, from the configured archive.
var PHPRoots = []string{"mmdebstrap"}

// Seal is what a sealed site lab (internal/stack/seal) runs besides util-linux's
// unshare, nsenter and setpriv: ip (iproute2) to bring its network
// namespace's loopback up and route everything to it, and nft (nftables)
// to count and refuse the connections that try to leave. Debian ships
// nftables.service disabled; the package is installed with service
// starts denied all the same, and the host's own ruleset is never touched
// (the seal loads its rules inside its namespace only).
var Seal = []string{"nftables", "iproute2"}

// Profilers are what phptune profile samples with: perf (Debian's
// linux-perf) for native stacks, libc's detached symbols (libc6-dbg: the
// string and allocation routines' own names, __memcpy_avx512..., not just
// libc.so.6) and the php-excimer extension for PHP functions. Debian enables excimer for every SAPI when it installs; it
// does nothing until a script starts a profiler (a profiling lab's
// auto-prepended sampler). Installed with service starts denied, so the
// extension's package never reloads a system php-fpm.
var Profilers = []string{"linux-perf", "libc6-dbg", "php-excimer"}

// Apache is what the Apache servers need (server=apache-event-fpm,
// apache-prefork-modphp): the apache2 binary with its modules and Debian's
// PHP module for it. Not the apache2 package: that is Debian's service
// (its /etc/apache2, a systemd unit enabled at install, a server started on
// port 80), and labs render their own configuration. It is installed after
// WordPress, whose "httpd | apache2" alternative would otherwise pull in
// the service, and with service starts denied (see DenyServiceStarts), so
// that libapache2-mod-php's postinst never starts or restarts an apache2
// service either; one already running is left alone.
var Apache = []string{"apache2-bin", "libapache2-mod-php"}

// WebServers are the other servers' packages (server=lighttpd-fpm,
// caddy-fpm, h2o-fpm). Unlike Apache's, Debian does not split their
// binaries from their services: each package ships a systemd unit (and
// lighttpd and h2o an init script) that its postinst enables and starts on
// port 80. They are installed with service starts denied (see
// DenyServiceStarts), and each service a package brought is disabled
// right after (see DisableServices), so nothing is started then or at the
// next boot; a package that was already installed is not touched, nor is
// its service. Labs render their own configuration and run the binaries.
var WebServers = []string{"lighttpd", "caddy", "h2o"}

// Caches are the cache servers a site lab starts for a site that names
// one (a lab-private Redis or Memcached inside its seal, at the address
// the site's configuration names): installed by --with-caches (and with
// the test tools), like WebServers with service starts denied and the
// services they bring disabled, so no Redis or Memcached of the host is
// started on 127.0.0.1:6379 or :11211 by phptune's setup.
var Caches = []string{"redis-server", "memcached"}

// RealServer is what the real-server tier (test/realserver.sh) adds:
// Debian's apache2 package, for its /etc/apache2 as Debian lays it out
// (apache2.conf, envvars, ports.conf, mods-available, a2enmod), which the
// tier copies privately to run a production Apache beside nginx. Installed
// with the test tools, like WebServers: service starts denied and
// apache2.service and its init script disabled once installed, so no
// apache2 service of the host is started on port 80 by phptune's setup
// (the package's postinst itself disables apache-htcacheclean). Labs
// still render their own configuration and run apache2-bin's binary.
var RealServer = []string{"apache2"}

// Services maps a package of WebServers or Caches to the services its
// postinst enables: systemd units (deb-systemd-helper) and init scripts
// (update-rc.d). caddy-api.service is shipped but not enabled.
var Services = map[string]struct{ Units, InitScripts []string }{
	"lighttpd":     {Units: []string{"lighttpd.service"}, InitScripts: []string{"lighttpd"}},
	"caddy":        {Units: []string{"caddy.service"}},
	"h2o":          {Units: []string{"h2o.service"}, InitScripts: []string{"h2o"}},
	"redis-server": {Units: []string{"redis-server.service"}, InitScripts: []string{"redis-server"}},
	"memcached":    {Units: []string{"memcached.service"}, InitScripts: []string{"memcached"}},
	"apache2":      {Units: []string{"apache2.service"}, InitScripts: []string{"apache2"}},
}

// PolicyRC is Debian's policy-rc.d: invoke-rc.d asks it before a package's
// maintainer script starts, stops or restarts a service, and exit code 101
// means "not allowed".
var PolicyRC = "/usr/sbin/policy-rc.d"

// policyText denies every service action.
const policyText = "#!/bin/sh\n# Written by phptune setup while it installs packages: no service starts.\n# Removed when the installation ends.\nexit 101\n"

// DenyServiceStarts makes invoke-rc.d refuse to start services until
// restore is called: a temporary policy-rc.d that exits 101, removed by
// restore. An existing policy-rc.d is the administrator's (or a container
// image's): it is left in place and used as it is, and note says so.
func DenyServiceStarts() (restore func(), note string, err error) {
	if _, err := os.Lstat(PolicyRC); err == nil {
		return func() {}, fmt.Sprintf("%s already exists: the installation follows its policy and phptune leaves it as it is", PolicyRC), nil
	}
	f, err := os.OpenFile(PolicyRC, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return nil, "", fmt.Errorf("denying service starts while installing: %v", err)
	}
	if _, err := f.WriteString(policyText); err != nil {
		f.Close()
		os.Remove(PolicyRC)
		return nil, "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(PolicyRC)
		return nil, "", err
	}
	return func() { os.Remove(PolicyRC) }, fmt.Sprintf("a temporary %s (exit 101) denies service starts during the installation", PolicyRC), nil
}

// quiet reports whether group is installed with service starts denied:
// Apache's, the other web servers', the caches', the real-server tier's,
// the profilers' or the seal's.
func quiet(group []string) bool {
	for _, p := range group {
		if slices.Contains(Apache, p) || slices.Contains(WebServers, p) || slices.Contains(Caches, p) || slices.Contains(RealServer, p) || slices.Contains(Profilers, p) || slices.Contains(Seal, p) {
			return true
		}
	}
	return false
}

// InitDir is where Debian's init scripts are (a package's script is
// disabled with update-rc.d only when it is there).
var InitDir = "/etc/init.d"

// run runs one command of DisableServices with env added to phptune's
// environment; tests replace it.
var run = func(ctx context.Context, log io.Writer, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	return cmd.Run()
}

// DisableServices disables the services that installed, a list of
// packages apt-get has just installed, brought with them (see Services):
// "deb-systemd-helper disable" removes the unit's symlinks and records it
// as disabled, so an upgrade's postinst does not enable it again;
// "update-rc.d NAME disable" turns the init script's start links into
// stop links. Nothing is stopped: starts were denied while installing. It
// returns the services it disabled.
func DisableServices(ctx context.Context, log io.Writer, installed []string) ([]string, error) {
	var done []string
	var errs []error
	for _, p := range installed {
		s, ok := Services[p]
		if !ok {
			continue
		}
		for _, u := range s.Units {
			// deb-systemd-helper works only for a package's maintainer
			// script, which dpkg names in this variable: the package the
			// unit belongs to, whose state it records.
			if err := run(ctx, log, []string{"DPKG_MAINTSCRIPT_PACKAGE=" + p}, "deb-systemd-helper", "disable", u); err != nil {
				errs = append(errs, fmt.Errorf("deb-systemd-helper disable %s: %v", u, err))
				continue
			}
			done = append(done, u)
		}
		for _, n := range s.InitScripts {
			if _, err := os.Stat(filepath.Join(InitDir, n)); err != nil {
				continue
			}
			if err := run(ctx, log, nil, "update-rc.d", n, "disable"); err != nil {
				errs = append(errs, fmt.Errorf("update-rc.d %s disable: %v", n, err))
				continue
			}
			done = append(done, InitDir+"/"+n)
		}
	}
	if len(errs) > 0 {
		return done, fmt.Errorf("disabling the services the web server and cache packages brought: %w; disable them by hand (systemctl disable lighttpd caddy h2o redis-server memcached apache2)", errors.Join(errs...))
	}
	return done, nil
}

// TestTools are what `make test` and the benchmarks add: the reference load
// generators, a browser for the report's test, and what building NGINX Unit
// needs.
var TestTools = []string{"wrk", "apache2-utils", "chromium", "patch",
	// NGINX Unit's tests build it from its source release against the
	// distro's PHP embed SAPI (phptune build unit).
	"gcc", "make", "libc6-dev", "php-dev", "libphp-embed", "libpcre2-dev"}

// BuildDeps are what every `phptune build` needs: the compiler and make,
// autoconf for buildconf, pkg-config, dpkg-dev (dpkg-source,
// dpkg-buildflags, the makefiles debian/rules includes). The packages a
// configure line needs beyond these (libssl-dev, libxml2-dev...) are named
// by package phpbuild from the flags.
var BuildDeps = []string{"gcc", "make", "autoconf", "pkg-config", "dpkg-dev", "libc6-dev"}

// InstallMissing installs what of pkgs is missing, as root; otherwise it
// returns an error with the exact apt-get line to run.
func InstallMissing(ctx context.Context, pkgs []string, log io.Writer) error {
	m := Missing(ctx, pkgs)
	if len(m) == 0 {
		return nil
	}
	line := "apt-get install -y --no-install-recommends " + strings.Join(m, " ")
	if os.Geteuid() != 0 {
		return fmt.Errorf("missing packages %s; as root run:\n  apt-get update && %s", strings.Join(m, " "), line)
	}
	fmt.Fprintln(log, "setup: apt-get update")
	if err := aptGet(ctx, log, "update", "-q"); err != nil {
		return err
	}
	fmt.Fprintln(log, "setup:", line)
	return installGroup(ctx, log, m)
}

// Missing returns the packages of pkgs that dpkg does not list as installed.
func Missing(ctx context.Context, pkgs []string) []string {
	var out []string
	for _, p := range pkgs {
		o, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Status}", p).Output()
		if err != nil || !strings.Contains(string(o), "install ok installed") {
			out = append(out, p)
		}
	}
	return out
}

// Ansible is what runs the role phptune export ansible writes: Debian's
// ansible-core (the engine and its builtin modules, which the role alone
// uses), without the community collections the ansible package adds.
var Ansible = []string{"ansible-core"}

// Install apt-gets what is missing of Packages and the extra groups
// (TestTools, Ansible) when run as root, and otherwise returns an error
// with the exact command to run.
func Install(ctx context.Context, extra [][]string, log io.Writer) error {
	groups := append(append([][]string(nil), Packages...), extra...)
	var missing [][]string
	total := 0
	for _, g := range groups {
		m := Missing(ctx, g)
		if len(m) > 0 {
			missing = append(missing, m)
			total += len(m)
		}
	}
	if total == 0 {
		fmt.Fprintln(log, "setup: every package is installed")
		return nil
	}
	if os.Geteuid() != 0 {
		var lines []string
		for _, m := range missing {
			lines = append(lines, "sudo apt-get install -y --no-install-recommends "+strings.Join(m, " "))
		}
		return fmt.Errorf("missing packages; as root run:\n  sudo apt-get update\n  %s", strings.Join(lines, "\n  "))
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("apt-get not found: phptune's lab needs a Debian-based system")
	}
	fmt.Fprintln(log, "setup: apt-get update")
	if err := aptGet(ctx, log, "update", "-q"); err != nil {
		return err
	}
	for _, m := range missing {
		if err := installGroup(ctx, log, m); err != nil {
			return err
		}
	}
	return nil
}

// installGroup apt-gets one group (m: its missing packages); Apache's and
// the other web servers' with service starts denied, and the services the
// latter bring disabled once installed.
func installGroup(ctx context.Context, log io.Writer, m []string) error {
	fmt.Fprintln(log, "setup: apt-get install", strings.Join(m, " "))
	if !quiet(m) {
		return aptGet(ctx, log, append([]string{"install", "-y", "-q", "--no-install-recommends"}, m...)...)
	}
	restore, note, err := DenyServiceStarts()
	if err != nil {
		return err
	}
	defer restore()
	var servers []string
	for _, p := range m {
		if slices.Contains(WebServers, p) || slices.Contains(Caches, p) || slices.Contains(RealServer, p) {
			servers = append(servers, p)
		}
	}
	if slices.ContainsFunc(m, func(p string) bool { return slices.Contains(Profilers, p) }) {
		fmt.Fprintf(log, "setup: %s installed with service starts denied (%s): no php-fpm service is reloaded\n", strings.Join(m, ", "), note)
	} else if len(servers) == 0 {
		fmt.Fprintf(log, "setup: Apache is installed for the labs only: Debian's apache2 service is neither installed, started nor enabled (%s); a service already running is left alone\n", note)
	} else {
		fmt.Fprintf(log, "setup: %s installed for the labs only: their services are not started (%s) and are disabled once installed; a package already installed and its service are left alone\n", strings.Join(servers, ", "), note)
	}
	if err := aptGet(ctx, log, append([]string{"install", "-y", "-q", "--no-install-recommends"}, m...)...); err != nil {
		return err
	}
	done, err := DisableServices(ctx, log, servers)
	if len(done) > 0 {
		fmt.Fprintf(log, "setup: disabled %s\n", strings.Join(done, ", "))
	}
	return err
}

func aptGet(ctx context.Context, log io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "apt-get", args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("apt-get %s failed: %v", strings.Join(args, " "), err)
	}
	return nil
}
