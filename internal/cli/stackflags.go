package cli

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/servers/apps"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/traffic/load"
)

// stackFlags are the flags that say which stack a command measures and
// with what traffic: the same names, help and checks on every stack
// command (tune, compare, capacity, profile, bench, servers). A flag a
// command cannot honour is still registered there and refused with the
// reason (refuse), never silently ignored.
type stackFlags struct {
	lab, app, docroot, site string
	// unsealedProduction: --unsealed-production (checkLiveDocroot).
	unsealedProduction    bool
	siteData              siteDataFlags
	user, cpus, memoryMax string
	knobsFile             string
	set                   []string
	workload, fromLog     string
	allowPost             bool
	expect, host          string

	// command is the command's name, for the refusals' hints.
	command string
	// defaultApp is the app a command without --lab, --app, --docroot or
	// --site runs ("": one of them must be given, unless targetOK).
	defaultApp string
	// targetOK: a TARGET argument may stand instead of a stack (bench).
	targetOK bool
	// ownCPUs: the command has a --cpus of its own meaning (bench's pins
	// the generator, and has since before the stack flags), so the lab's
	// is not registered.
	ownCPUs bool
	// refused are the flags the command cannot take, with why and what to
	// do instead.
	refused map[string]stackRefusal
	fs      *pflag.FlagSet

	// caps are --cpus and --memory-max, read by check.
	caps lab.Options
}

// stackRefusal is why a command cannot take a stack flag, and the fix.
type stackRefusal struct{ why, fix string }

// The stack flags' names.
const (
	flagLab, flagApp, flagDocroot, flagSite = "lab", "app", "docroot", "site"
	flagDBFrom, flagDBDump                  = "db-from", "db-dump"
	flagUser, flagCPUs, flagMemoryMax       = "user", "cpus", "memory-max"
	flagKnobs, flagSet                      = "knobs", "set"
	flagWorkload, flagFromLog               = "workload", "workload-from-log"
	flagAllowPost, flagExpect, flagHost     = "allow-post", "expect", "host"
)

// stackFlagNames are every stack flag, in the order they are registered.
var stackFlagNames = []string{flagLab, flagApp, flagDocroot, flagSite, flagDBFrom, flagDBDump, flagDB, flagDBUser, flagDBHost, flagDBPasswordFile, flagUser, flagCPUs, flagMemoryMax,
	flagKnobs, flagSet, flagWorkload, flagFromLog, flagAllowPost, flagExpect, flagHost}

// The stack flags' help, one text for every command.
const (
	labFlagHelp       = "measure this running lab (see phptune lab status); a configuration the command changes is restored at the end"
	appFlagHelp       = "measure a lab of its own, taken down at the end, with this built-in app: "
	docrootFlagHelp   = "measure a lab of its own, taken down at the end, serving this PHP directory (your app, with its index.php)"
	userFlagHelp      = "run the lab of its own (nginx, php-fpm, MariaDB) as this account: the app runs with that account's rights, e.g. www-data for an app whose writable directories it owns (--site: default the site pool's account); "
	cpusFlagHelp      = "pin the lab of its own to these CPUs (e.g. 1 or 0-1), beside production"
	memoryMaxFlagHelp = "cap the memory of the lab of its own (e.g. 2G; root; cgroup v2 or v1's memory controller)"
	knobsFlagHelp     = "start the lab of its own with the knob settings in this file (recommended.knobs; with --site on top of the live configuration)"
	setFlagHelp       = "start the lab of its own with this knob set, KNOB=VALUE (repeatable; with --site on top of the live configuration)"
	workloadFlagHelp  = "front (GET /), comment (WordPress comment POSTs; the DB is reset between runs), mix (WordPress pages, search and comments as readers use them), a path like /shop/, or a scenario file (a file at an absolute path is read as one)"
	fromLogFlagHelp   = "replay the top paths of an nginx/Apache access log (combined, vhost_combined or common format), weighted by their counts; static files are left to the web server; 'vhost' with --site or --lab of a site lab: the site's own access log, as phptune site shows it (a file called vhost: ./vhost)"
	allowPostFlagHelp = "with --workload-from-log: replay its POSTs too (with empty bodies; logs keep none)"
	expectFlagHelp    = "a regular expression every 2xx response body must match (its first 64 KiB); others count as errors of class unexpected_body, so an error page answered with 200 is not measured"
)

// add registers the stack flags on fl for command; defaultWorkload is
// --workload's default ("front"; bench's is none).
func (s *stackFlags) add(fl *pflag.FlagSet, command, defaultWorkload string) {
	s.command, s.fs = command, fl
	fl.StringVar(&s.lab, flagLab, "", labFlagHelp)
	fl.StringVar(&s.app, flagApp, s.defaultApp, appFlagHelp+appNames())
	fl.StringVar(&s.docroot, flagDocroot, "", docrootFlagHelp)
	fl.StringVar(&s.site, flagSite, "", siteFlagHelp)
	s.siteData.add(fl)
	fl.StringVar(&s.user, flagUser, "", userFlagHelp+userFlagRule)
	addUnsealedProductionFlag(fl, &s.unsealedProduction)
	if !s.ownCPUs {
		fl.StringVar(&s.cpus, flagCPUs, "", cpusFlagHelp)
	}
	fl.StringVar(&s.memoryMax, flagMemoryMax, "", memoryMaxFlagHelp)
	fl.StringVar(&s.knobsFile, flagKnobs, "", knobsFlagHelp)
	fl.StringArrayVar(&s.set, flagSet, nil, setFlagHelp)
	fl.StringVar(&s.workload, flagWorkload, defaultWorkload, workloadFlagHelp)
	fl.StringVar(&s.fromLog, flagFromLog, "", fromLogFlagHelp)
	fl.BoolVar(&s.allowPost, flagAllowPost, false, allowPostFlagHelp)
	fl.StringVar(&s.expect, flagExpect, "", expectFlagHelp)
	fl.StringVar(&s.host, flagHost, "", hostFlagHelp)
}

// given reports whether the flag name was on the command line.
func (s *stackFlags) given(name string) bool {
	if s.fs == nil {
		return false // set by the command itself (demo)
	}
	f := s.fs.Lookup(name)
	return f != nil && f.Changed
}

// ownLab reports whether the command brings up a lab of its own (--app,
// --docroot, --site or the default app), not --lab's or a TARGET.
func (s *stackFlags) ownLab() bool {
	return s.lab == "" && (s.app != "" || s.docroot != "" || s.site != "")
}

// stacksGiven counts the stacks the command line names.
func (s *stackFlags) stacksGiven() int {
	n := 0
	for _, g := range []bool{s.given(flagApp) && s.app != "", s.lab != "", s.docroot != "", s.site != ""} {
		if g {
			n++
		}
	}
	return n
}

// check validates the stack flags, before anything starts, the same way on
// every command: a flag the command refuses, one stack, the account and
// caps of a lab of its own, the workload's source, --expect and --host.
// targetGiven says a TARGET argument was given (bench). It resolves
// --docroot to an absolute path, the default app and the caps.
func (s *stackFlags) check(targetGiven bool) error {
	if err := s.checkRefused(); err != nil {
		return err
	}
	if err := s.checkStack(targetGiven); err != nil {
		return err
	}
	if g := s.siteData.db; g.given() && s.site == "" {
		return usageErr("Try: --site NAME "+siteDBHint, "%s name a site lab's database: give --site too", strings.Join(g.names(), ", "))
	}
	if err := s.checkOwnLab(); err != nil {
		return err
	}
	return s.checkTraffic(targetGiven)
}

// checkTraffic checks the requests' flags: the workload's source,
// --expect and --host. noStack: the command line names no stack (a TARGET,
// or a resumed run's stored one), so a built-in workload's app is not
// checked here.
func (s *stackFlags) checkTraffic(noStack bool) error {
	if err := s.checkWorkload(noStack); err != nil {
		return err
	}
	if s.expect != "" {
		if _, err := load.CompileExpect(s.expect); err != nil {
			return usageErr("Try: --expect 'Just another WordPress site'", "--expect: %v", err)
		}
	}
	return checkHostFlag(s.host)
}

// checkRefused refuses the stack flags the command cannot take, naming why.
func (s *stackFlags) checkRefused() error {
	names := make([]string, 0, len(s.refused))
	for n := range s.refused {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if r := s.refused[n]; r.why != "" && s.given(n) {
			return usageErr(r.fix, "--%s does not go with phptune %s: %s", n, s.command, r.why)
		}
	}
	return nil
}

// checkStack checks that one stack is named: exactly one of --lab, --app,
// --docroot and --site (the default app counting when none is given), or a
// TARGET where the command takes one.
func (s *stackFlags) checkStack(targetGiven bool) error {
	n := s.stacksGiven()
	if targetGiven {
		n++
	}
	if n == 0 && (s.defaultApp != "" || s.targetOK) {
		if s.defaultApp == "" && s.targetOK {
			return nil // the command's own refusal names TARGET
		}
		n = 1
	}
	if n != 1 && s.targetOK {
		return usageErr("Try: phptune "+s.command+" TARGET, or --lab NAME, or --app hello, or --docroot DIR, or --site NAME", "give exactly one of TARGET, --lab, --app, --docroot and --site")
	}
	if n != 1 {
		return usageErr("Try: phptune "+s.command+" --app hello, or --lab NAME, or --docroot DIR, or --site NAME", "give exactly one of --lab, --app, --docroot and --site")
	}
	if s.lab != "" || s.docroot != "" || s.site != "" || targetGiven {
		s.app = "" // the default app is not what runs
	}
	if s.app != "" {
		if _, err := apps.Lookup(s.app); err != nil {
			return usageErr("Choose one of: "+appNames(), "--app %q is not a built-in app", s.app)
		}
	}
	if s.docroot != "" {
		abs, err := filepath.Abs(s.docroot)
		if err != nil {
			return usageErr("Try: --docroot DIR, a directory holding your app's index.php", "--docroot %s: %v", s.docroot, err)
		}
		s.docroot = abs
	}
	return nil
}

// checkOwnLab checks the flags of a lab of its own: refused with --lab (or
// a TARGET), and the account and caps it runs with.
func (s *stackFlags) checkOwnLab() error {
	if !s.ownLab() {
		var given []string
		for _, n := range []string{flagUser, flagCPUs, flagMemoryMax, flagKnobs, flagSet} {
			if s.given(n) {
				given = append(given, "--"+n)
			}
		}
		if len(given) > 0 {
			return usageErr("Try: phptune lab up "+given[0]+" ..., then phptune "+s.command+" --lab NAME",
				"%s: only for a lab of its own (--app, --docroot, --site): a running lab (--lab) keeps the account, caps and configuration it was started with", strings.Join(given, ", "))
		}
		return nil
	}
	if s.site == "" {
		// A site's account is checked against its document root when
		// the site is found (planSiteLab).
		if err := lab.CheckUser(s.user, s.docroot); err != nil {
			return usageErr("Try: --user www-data (as root), or leave --user out", "%v", err)
		}
	}
	if s.docroot != "" {
		if err := checkLiveDocroot(s.docroot, s.command, s.unsealedProduction); err != nil {
			return err
		}
	} else if s.unsealedProduction {
		return usageErr("Leave --"+flagUnsealedProduction+" out", "--%s goes with --docroot", flagUnsealedProduction)
	}
	s.caps = lab.Options{CPUs: s.cpus}
	return labLimits(&s.caps, s.memoryMax)
}

// checkWorkload checks where the requests come from: --workload or
// --workload-from-log (then the workload is its spec), --allow-post only
// with the log, and a built-in workload on the app it needs.
func (s *stackFlags) checkWorkload(noStack bool) error {
	if s.fromLog == vhostLog && s.site == "" && s.lab == "" {
		return errVhostLogStack()
	}
	if s.fromLog != "" {
		if s.given(flagWorkload) {
			return usageErr("Try: --workload-from-log access.log (without --workload)", "give --workload or --workload-from-log, not both")
		}
	} else if s.allowPost {
		return usageErr("Try: --workload-from-log access.log --allow-post", "--allow-post goes with --workload-from-log")
	}
	if need, ok := workload.Builtin(s.workload); ok && need != "" && s.lab == "" && !noStack && s.app != need {
		return usageErr("Try: --app "+need+" --workload "+s.workload, "--workload %s needs --app %s", s.workload, need)
	}
	return nil
}

// workloadSpec is the workload as workload.Parse reads it:
// --workload, or --workload-from-log's spec.
func (s *stackFlags) workloadSpec() string {
	if s.fromLog != "" {
		return workload.LogSpec(s.fromLog, s.allowPost)
	}
	return s.workload
}

// appLabel is what the result calls the stack's app before the lab is
// up: the built-in app, docroot or the site app ("" for --lab: the lab's).
func (s *stackFlags) appLabel() string {
	switch {
	case s.site != "":
		return lab.SiteApp
	case s.docroot != "":
		return "docroot"
	}
	return s.app
}

// refuseAll refuses each name with the same reason and fix.
func refuseAll(why, fix string, names ...string) map[string]stackRefusal {
	m := map[string]stackRefusal{}
	for _, n := range names {
		m[n] = stackRefusal{why: why, fix: fix}
	}
	return m
}

// merge is the refusals of every one of ms.
func merge(ms ...map[string]stackRefusal) map[string]stackRefusal {
	out := map[string]stackRefusal{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
