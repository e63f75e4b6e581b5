// Package distrobin finds the binary of a distro package phptune runs
// (nginx, apache2, lighttpd, caddy, h2o): where the Debian package installs
// it, else on PATH, else an error that says how to install it.
package distrobin

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// Find returns path if it is an executable file, else the first executable
// of path's base name on PATH. When there is none, the error names the
// binary and how to install it: "phptune setup", or install (an apt-get
// line and what to do after it).
func Find(path, install string) (string, error) {
	if _, err := exec.LookPath(path); err == nil {
		return path, nil
	}
	name := filepath.Base(path)
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s is not installed; run: phptune setup (or %s)", name, install)
}
