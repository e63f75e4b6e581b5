package phpbuild

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
)

// aptArchive answers the dependency check from this system's own apt
// configuration (apt-cache and dpkg, the distro's programs, run as root:
// they read only root's files; every name and version passed to them was
// checked by ParseRelations).
type aptArchive struct {
	ctx      context.Context
	versions map[string][]string
}

// newAptArchive reads the installed and candidate versions of every
// package rels name, with one apt-cache policy.
func newAptArchive(ctx context.Context, rels []Relation) (*aptArchive, error) {
	set := map[string]bool{}
	for _, r := range rels {
		for _, a := range r {
			set[a.Name] = true
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	a := &aptArchive{ctx: ctx, versions: map[string][]string{}}
	if len(names) == 0 {
		return a, nil
	}
	out, err := exec.CommandContext(ctx, "apt-cache", append([]string{"policy", "--"}, names...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("apt-cache policy (the build-dependency check): %v", err)
	}
	a.versions = ParsePolicy(string(out))
	return a, nil
}

func (a *aptArchive) Versions(name string) []string { return a.versions[name] }

func (a *aptArchive) Provided(name string) bool {
	out, err := exec.CommandContext(a.ctx, "apt-cache", "showpkg", "--", name).Output()
	return err == nil && ParseReverseProvides(string(out))
}

func (a *aptArchive) Satisfies(have, op, want string) bool {
	dop := map[string]string{"<<": "lt", "<=": "le", "=": "eq", ">=": "ge", ">>": "gt"}[op]
	if dop == "" {
		return false
	}
	return exec.CommandContext(a.ctx, "dpkg", "--compare-versions", have, dop, want).Run() == nil
}

// checkForeignBuildDeps checks the Build-Depends of pkg's version (from
// showsrc) against this system's archive before anything is downloaded:
// a build of another release is refused with the list of what this
// Debian lacks.
func (b *builder) checkForeignBuildDeps(ctx context.Context, showsrc, pkg, version string, log io.Writer) error {
	field, ok := BuildDepends(showsrc, version)
	if !ok || field == "" {
		fmt.Fprintf(log, "%s %s: apt-cache showsrc gave no Build-Depends; not checked\n", pkg, version)
		return nil
	}
	rels, err := ParseRelations(field)
	if err != nil {
		return fmt.Errorf("%s %s: %v", pkg, version, err)
	}
	host := "amd64"
	if out, err := exec.CommandContext(ctx, "dpkg", "--print-architecture").Output(); err == nil && debPkgNameRE.MatchString(strings.TrimSpace(string(out))) {
		host = strings.TrimSpace(string(out))
	}
	a, err := newAptArchive(ctx, rels)
	if err != nil {
		return err
	}
	lacking := Unsatisfied(rels, a, host)
	fmt.Fprintf(log, "%s %s Build-Depends (%d relations) against this system's archive: %d lacking\n", pkg, version, len(rels), len(lacking))
	if len(lacking) == 0 {
		fmt.Fprintf(b.o.Progress, "build: this Debian has every build dependency %s %s names (%d)\n", pkg, version, len(rels))
		return nil
	}
	var names []string
	for _, r := range lacking {
		names = append(names, r.String())
	}
	return fmt.Errorf("%s %s needs build dependencies this Debian's archive does not have: %s; build the installed PHP %s instead (leave --php out), or give a %s source whose dependencies it has with --source",
		pkg, version, strings.Join(names, ", "), b.phpName, pkg)
}
