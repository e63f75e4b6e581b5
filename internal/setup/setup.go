// Package setup installs the Debian packages phptune's lab and tests use.
package setup

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
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
}

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

// quiet reports whether group is installed with service starts denied.
func quiet(group []string) bool {
	for _, p := range group {
		for _, a := range Apache {
			if p == a {
				return true
			}
		}
	}
	return false
}

// TestTools are what `make test` and the benchmarks add: the reference load
// generators and a browser for the report's test.
var TestTools = []string{"wrk", "apache2-utils", "chromium", "patch"}

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

// Install apt-gets what is missing when run as root, and otherwise returns
// an error with the exact command to run.
func Install(ctx context.Context, withTestTools bool, log io.Writer) error {
	groups := append([][]string(nil), Packages...)
	if withTestTools {
		groups = append(groups, TestTools)
	}
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

// installGroup apt-gets one group; Apache's with service starts denied.
func installGroup(ctx context.Context, log io.Writer, m []string) error {
	fmt.Fprintln(log, "setup: apt-get install", strings.Join(m, " "))
	if quiet(m) {
		restore, note, err := DenyServiceStarts()
		if err != nil {
			return err
		}
		defer restore()
		fmt.Fprintf(log, "setup: Apache is installed for the labs only: Debian's apache2 service is neither installed, started nor enabled (%s); a service already running is left alone\n", note)
	}
	return aptGet(ctx, log, append([]string{"install", "-y", "-q", "--no-install-recommends"}, m...)...)
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
