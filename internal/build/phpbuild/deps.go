package phpbuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/build/setup"
)

// checkDeps finds missing packages; as root (without NoInstall) it
// installs them, otherwise it fails with the exact line to run.
func (b *builder) checkDeps(ctx context.Context, pkgs []string) error {
	missing := missingPackages(ctx, pkgs)
	if len(missing) == 0 {
		return nil
	}
	line := "apt-get install -y --no-install-recommends " + strings.Join(missing, " ")
	if os.Geteuid() != 0 || b.o.NoInstall {
		return &MissingDepsError{Packages: missing, Line: line}
	}
	fmt.Fprintf(b.o.Progress, "build: installing the build dependencies: %s\n", line)
	if err := setup.InstallMissing(ctx, missing, b.o.Progress); err != nil {
		return fmt.Errorf("installing the build dependencies failed: %v; run as root: apt-get update && %s", err, line)
	}
	return nil
}

// MissingDepsError is a build that cannot start for want of packages.
type MissingDepsError struct {
	Packages []string
	Line     string
}

func (e *MissingDepsError) Error() string {
	return fmt.Sprintf("missing build dependencies: %s; as root run:\n  apt-get update && %s", strings.Join(e.Packages, " "), e.Line)
}

func missingPackages(ctx context.Context, pkgs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range pkgs {
		if seen[p] {
			continue
		}
		seen[p] = true
		o, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${db:Status-Abbrev}", p).Output()
		if err != nil || !strings.HasPrefix(string(o), "ii") {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
