package phpbuild

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// flags evaluates debian/rules as the build account and derives the
// configure line and compiler flags.
func (b *builder) flags(ctx context.Context, log io.Writer) error {
	if _, err := os.Lstat(filepath.Join(b.src, "debian", "rules")); err != nil {
		return fmt.Errorf("%s has no debian/rules: phptune takes Debian's configure choices from the php source package's rules; give a directory unpacked by `apt-get source php%s` (or its tarball), or leave --source out", b.rec.Source, b.target)
	}
	// A full build also compiles the shared extensions the installed
	// php-fpm enables, with Debian's flags for each (extbuild.go).
	var enabled []Module
	var extVars []string
	if !b.o.Minimal {
		var err error
		if enabled, err = EnabledModules(filepath.Join("/etc/php", b.phpName, "fpm", "conf.d")); err != nil {
			return err
		}
		for _, m := range enabled {
			extVars = append(extVars, ExtConfigVar(m.Name))
		}
	}
	out, err := b.output(ctx, b.src, nil, "make", "-s", "--no-print-directory", "-f", "debian/rules", "--eval", RulesEval(extVars...), "phptune-print-vars")
	fmt.Fprint(log, out)
	if err != nil {
		return fmt.Errorf("evaluating debian/rules: %v: %s", err, lastLines(out, 5))
	}
	vars, err := ParseRulesOutput(out)
	if err != nil {
		return err
	}
	if vars["PHP_NAME_VERSION"] != b.target {
		if b.target == b.phpName {
			return fmt.Errorf("the source is PHP %s but the installed php-fpm is %s: the distro's extensions would not load; give a php%s source, or build that release with --php %s", vars["PHP_NAME_VERSION"], b.phpName, b.phpName, vars["PHP_NAME_VERSION"])
		}
		return fmt.Errorf("the source is PHP %s but --php asks for %s; give a php%s source", vars["PHP_NAME_VERSION"], b.target, b.target)
	}
	words, err := SplitWords(vars["fpm_config"])
	if err != nil {
		return fmt.Errorf("%w: fpm_config: %v", ErrRules, err)
	}
	opc, err := SplitWords(vars["opcache_config"])
	if err != nil {
		return fmt.Errorf("%w: opcache_config: %v", ErrRules, err)
	}
	if b.rec.Configure, err = ConfigureArgs(words, opc, b.o.Minimal); err != nil {
		return err
	}
	if b.rec.Configure, b.rec.Built, err = ExtensionArgs(b.rec.Configure, enabled, vars); err != nil {
		return err
	}
	if b.foreign() {
		b.rec.DistroPHP = b.phpName
		b.rec.Unavailable = ForeignUnavailable(enabled, b.rec.Built)
		if len(b.rec.Unavailable) > 0 {
			msg := fmt.Sprintf("build: PHP %s's source has no %s, which the installed php-fpm %s enables (Debian 12 builds them for PHP %s only): a lab of this build runs without them, and a site that needs one cannot run on it",
				b.target, strings.Join(b.rec.Unavailable, ", "), b.phpName, b.phpName)
			fmt.Fprintln(b.o.Progress, msg)
			fmt.Fprintln(log, msg)
		}
	}
	api := vars["PHP_ZEND_VERSION"]
	if !regexp.MustCompile(`^\d{8}$`).MatchString(api) {
		return fmt.Errorf("%w: PHP_ZEND_VERSION %q is not a module API number", ErrRules, api)
	}
	b.rec.PHPAPI, b.rec.ExtDir = api, "/usr/lib/php/"+api
	env := BuildFlagsEnv(vars)
	for _, f := range []struct {
		name string
		dst  *string
	}{{"CFLAGS", &b.rec.CFLAGS}, {"CPPFLAGS", &b.rec.CPPFLAGS}, {"LDFLAGS", &b.rec.LDFLAGS}} {
		v, err := b.output(ctx, b.src, env, "dpkg-buildflags", "--get", f.name)
		if err != nil {
			return fmt.Errorf("dpkg-buildflags --get %s: %v", f.name, err)
		}
		*f.dst = strings.TrimSpace(v)
		fmt.Fprintf(log, "%s=%s\n", f.name, *f.dst)
	}
	fmt.Fprintf(log, "configure %s\n", strings.Join(b.rec.Configure, " "))
	return nil
}
