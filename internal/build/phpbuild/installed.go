package phpbuild

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
)

// installedFPM finds the installed phpX.Y-fpm package: "8.2" and its
// version. (dpkg-query is the distro's; no build binary runs as root.)
func installedFPM(ctx context.Context) (name, version string, err error) {
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f", "${Package} ${Version} ${db:Status-Abbrev}\n", "php*-fpm").Output()
	if err != nil && len(out) == 0 {
		return "", "", fmt.Errorf("no php-fpm package is installed (dpkg-query: %v); phptune builds the installed PHP: run phptune setup", err)
	}
	re := regexp.MustCompile(`^php(\d+\.\d+)-fpm (\S+) ii`)
	for _, line := range strings.Split(string(out), "\n") {
		if m := re.FindStringSubmatch(line); m != nil && (name == "" || versionLess(name, m[1])) {
			name, version = m[1], m[2]
		}
	}
	if name == "" {
		return "", "", errors.New("no phpX.Y-fpm package is installed; phptune builds the installed PHP: run phptune setup")
	}
	return name, version, nil
}

var verNumRE = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)`)

// versionLess compares the leading X.Y[.Z] of two versions.
func versionLess(a, b string) bool {
	pa, pb := versionParts(a), versionParts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

func versionParts(v string) [3]int {
	var out [3]int
	for i, f := range strings.SplitN(v, ".", 3) {
		n := 0
		for _, c := range f {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
		}
		out[i] = n
	}
	return out
}

// OlderThan reports whether PHP version src ("8.2.32") is older than the
// installed package version ("8.2.36-1~deb12u1").
func OlderThan(src, installed string) bool {
	m := verNumRE.FindString(installed)
	if m == "" || verNumRE.FindString(src) == "" {
		return false
	}
	return versionLess(src, m)
}
