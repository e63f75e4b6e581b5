package main

import (
	"fmt"
	"sort"
	"strings"
)

// Group is one floor of the module: the packages under Dirs, which may
// import their own group's packages and those of the groups before it in
// Groups, never one after it.
type Group struct {
	Name  string
	About string
	Dirs  []string // module-relative directories whose packages are the group's
}

// Groups are the module's floors in pipeline order, lowest first: the
// README's loop (lab, load, observe, search, report and apply) read from the
// bottom up. A package belongs to the first group one of whose Dirs is, or
// holds, its directory.
var Groups = []Group{
	{"base", "Small pieces every floor uses: paths written into configuration, safe reads and writes, loopback and peer checks, sockets made in a lab's network namespace, terminal text.", []string{"internal/base"}},
	{"testkit", "Test support: golden files, the README's commands as tests, network namespaces of a test's own.", []string{"internal/testkit"}},
	{"model", "The pure core's data: knobs and their domains, results, statistics, stored runs, output directories.", []string{"internal/model"}},
	{"servers", "Each server in its own syntax — nginx, Apache, Caddy, h2o, lighttpd, Unit, php-fpm, MariaDB — the apps a lab serves, and (servers/status) their status pages.", []string{"internal/servers"}},
	{"traffic", "Load: the generator and its wire (HTTP/1.1, FastCGI), Locust, traffic from access logs, page checks.", []string{"internal/traffic"}},
	{"watch", "Observe: every process's CPU and memory, listen queues, error logs, perf profiles, the host and its limits.", []string{"internal/watch"}},
	{"decide", "Search: the tuner, the search and its statistics, sizing, capacity, interleaved runs.", []string{"internal/decide"}},
	{"live", "A live host: reading its configuration, advice, apply and rollback, recommendations, Ansible.", []string{"internal/live"}},
	{"sitecopy", "The user's own site: finding what serves it and copying its database.", []string{"internal/sitecopy"}},
	{"stack", "Labs: launching a stack, the seal around a site's copy, sessions over a stack, workloads, server comparisons.", []string{"internal/stack"}},
	{"build", "PHP built for the machine (PGO) and the distro packages phptune installs.", []string{"internal/build"}},
	{"report", "The evidence: text, the offline HTML report, charts.", []string{"internal/report"}},
	{"command", "The command line: thin commands that parse flags and print.", []string{"internal/cli", "cmd"}},
	{"tools", "The developers' own commands (documentation checks, cleanup of test labs).", []string{"internal/tools"}},
}

// groupOf is the index in Groups of the package in dir, or -1 when no
// group holds it.
func groupOf(dir string) int {
	for i, g := range Groups {
		for _, d := range g.Dirs {
			if dir == d || strings.HasPrefix(dir, d+"/") {
				return i
			}
		}
	}
	return -1
}

// CheckGroups returns one line per package outside every group and per
// import that runs up: from a group to a later one in Groups.
func CheckGroups(pkgs []Package) []string {
	var bad []string
	for _, p := range pkgs {
		from := groupOf(p.Dir)
		if from < 0 {
			bad = append(bad, fmt.Sprintf("%s is in no group: move it under one of the groups' directories (internal/tools/layout/groups.go lists them) or add a group", p.Dir))
			continue
		}
		for _, imp := range p.Imports {
			to := groupOf(imp)
			if to > from {
				bad = append(bad, fmt.Sprintf("%s (%s) imports %s (%s), a later group: move the shared piece down to %s or below, or the importer up", p.Dir, Groups[from].Name, imp, Groups[to].Name, Groups[from].Name))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// byGroup sorts pkgs into Groups' order, keeping each group's packages in
// their directories' order; packages of no group come last.
func byGroup(pkgs []Package) [][]Package {
	out := make([][]Package, len(Groups)+1)
	for _, p := range pkgs {
		i := groupOf(p.Dir)
		if i < 0 {
			i = len(Groups)
		}
		out[i] = append(out[i], p)
	}
	return out
}
