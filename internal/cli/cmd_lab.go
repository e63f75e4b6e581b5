package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/apps"
	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/stacksession"
	"github.com/phptune/phptune/internal/traffic/pagecheck"
)

// userFlagRule is the --user rule (lab.CheckAccount) as the flags' help
// says it.
const userFlagRule = "root only; www-data, an ordinary account (uid 1000 and up) or a system account that owns --docroot — never root, phptune-build or an account that owns a service's data (mysql: /var/lib/mysql)"

func init() { register(newLabCmd) }

func newLabCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Bring up, inspect and take down private PHP stacks",
		Long:  labLong(),
	}
	cmd.AddCommand(newLabUpCmd(env), newLabDownCmd(env), newLabStatusCmd(env), newLabLogsCmd(env), newLabResetCmd(env), newLabForwardCmd(env))
	return cmd
}

// knobConfig reads --knobs FILE and the --set flags (--set wins) onto the
// distro defaults and checks every value and php-fpm's rules, before
// anything starts. It returns the assignments (for lab.Options.Set) and the
// configuration. Every problem is a UsageError naming its source: the
// file and line, or the --set flag.
func knobConfig(file string, set []string) ([]string, knob.Config, error) {
	hint := "See every knob, its default and its range: phptune knobs"
	cfg := knob.Defaults()
	var out []string
	if file != "" {
		// As root, only a file no other account could have written:
		// apply and export roll it onto production.
		data, err := readTrusted(file)
		var ue *UsageError
		if errors.As(err, &ue) {
			return nil, nil, err
		}
		if err != nil {
			return nil, nil, usageErr("Give a knob file of KNOB=VALUE lines, as phptune tune writes (recommended.knobs)", "--knobs %s: %v", file, err)
		}
		if cfg, err = cfg.ApplyFile(string(data)); err != nil {
			return nil, nil, usageErr(hint, "--knobs %s: %v", file, err)
		}
		lines, _ := knob.ParseFileLines(string(data)) // ApplyFile parsed them
		for _, l := range lines {
			out = append(out, l.Assignment)
		}
	}
	for _, a := range set {
		name, value, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, nil, usageErr("Try: --set pm.max_children=16", "--set %q: write KNOB=VALUE", a)
		}
		if err := cfg.Set(strings.TrimSpace(name), value); err != nil {
			return nil, nil, usageErr(hint, "--set %s: %v", a, err)
		}
		out = append(out, a)
	}
	if err := cfg.Validate(); err != nil {
		src := "the configuration"
		switch {
		case file != "" && len(set) > 0:
			src = "the configuration of --knobs " + file + " and --set"
		case file != "":
			src = "the configuration of --knobs " + file
		case len(set) > 0:
			src = "the configuration of --set"
		}
		return nil, nil, usageErr(hint, "%s: %v", src, err)
	}
	return out, cfg, nil
}

// labUpFlags are lab up's flags.
type labUpFlags struct {
	opt                                                     lab.Options
	knobsFile, memoryMax, server, siteQuery, dbFrom, dbDump string
	asJSON                                                  bool
	appGiven, dbFromGiven                                   bool // --app and --db-from given on the command line
	db                                                      siteDBFlags
	unsealedProduction                                      bool // --unsealed-production
}

func (f *labUpFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.opt.Name, "name", "lab", "lab name (letters, digits, dashes)")
	fl.StringVar(&f.opt.App, "app", "hello", "built-in app: "+appNames())
	fl.StringVar(&f.opt.DocRoot, "docroot", "", "serve your own PHP app from this directory instead of a built-in one")
	fl.StringVar(&f.siteQuery, "site", "", "serve a site of this host, found by its server_name or document root (NAME|DIR, as phptune site shows it), sealed: its own network and mount namespaces, its own MariaDB at the addresses the site's configuration names, the docroot as an overlay (root, Landlock)")
	fl.StringVar(&f.dbFrom, "db-from", "auto", "with --site: copy this production database into the lab, read-only (mariadb-dump --single-transaction as the app's own account): auto is the one the site's configuration names; none leaves the lab's MariaDB empty (the site then answers its error page)")
	fl.StringVar(&f.dbDump, "db-dump", "", "with --site: load this dump of the site's database (FILE or FILE.gz, root's, as mariadb-dump makes it) instead of copying production's")
	f.db.add(fl)
	fl.StringArrayVar(&f.opt.Set, "set", nil, "set a knob, KNOB=VALUE (repeatable; see phptune knobs; with --site it goes on top of the live configuration)")
	fl.StringVar(&f.knobsFile, "knobs", "", "read knob settings from a file of KNOB=VALUE lines (as phptune tune writes)")
	fl.StringVar(&f.server, "server", "", "web server: "+strings.Join(knob.Servers, "|")+" (shorthand for --set server=X; default nginx-fpm; see docs/servers.md)")
	fl.IntVar(&f.opt.Port, "port", 0, "HTTP port on 127.0.0.1 (default: a free one)")
	fl.StringVar(&f.opt.CPUs, "cpus", "", "pin every process of the lab to these CPUs (e.g. 1 or 0-1,3), so it leaves the others to what the machine serves")
	fl.StringVar(&f.memoryMax, "memory-max", "", "cap the memory of all the lab's processes together (e.g. 2G; root, cgroup v2 or v1's memory controller): refused when it cannot be enforced")
	fl.StringVar(&f.opt.User, "user", "", "run the lab (nginx, php-fpm, MariaDB) as this account: the app then runs with that account's rights, e.g. --user www-data for an app whose caches and uploads www-data owns (with --site: the site pool's account unless given); "+userFlagRule)
	fl.BoolVar(&f.asJSON, "json", false, "print the lab's state as JSON")
	addUnsealedProductionFlag(fl, &f.unsealedProduction)
}

// validate refuses, as usage errors (exit 2), the flags that contradict
// each other or name nothing, before anything is read or started.
func (f *labUpFlags) validate() error {
	opt := &f.opt
	if err := lab.CheckName(opt.Name); err != nil {
		return usageErr("Try: --name mylab", "--name: %v", err)
	}
	if f.unsealedProduction && opt.DocRoot == "" {
		return usageErr("Leave --"+flagUnsealedProduction+" out", "--%s goes with --docroot", flagUnsealedProduction)
	}
	switch {
	case f.siteQuery != "":
		if opt.DocRoot != "" || f.appGiven {
			return usageErr("Try: --site NAME alone, or --docroot DIR for a directory", "--site serves the site's own docroot: leave --docroot and --app out")
		}
		if opt.Port != 0 {
			return usageErr("Leave --port out", "--port: a site lab listens on the site's own port inside its seal and on a unix socket for this host")
		}
	case f.dbFromGiven || f.dbDump != "":
		return usageErr("Try: --site NAME --db-from auto", "--db-from and --db-dump fill a site lab's database: give --site too")
	case f.db.given():
		return usageErr("Try: --site NAME "+siteDBHint, "%s name a site lab's database: give --site too", strings.Join(f.db.names(), ", "))
	case opt.DocRoot != "":
		// A live site's directory is named as such first, whatever it
		// holds (a panel's pool may serve a directory with no .php).
		if err := checkLiveDocroot(opt.DocRoot, "lab up", f.unsealedProduction); err != nil {
			return err
		}
		if err := apps.CheckDocRoot(opt.DocRoot); err != nil {
			return usageErr("Try: --docroot DIR, a directory holding your app's index.php", "%v", err)
		}
	default:
		if _, err := apps.Lookup(opt.App); err != nil {
			return usageErr("Choose one of: "+appNames(), "--app %q is not a built-in app", opt.App)
		}
	}
	if opt.Port != 0 && (opt.Port < 1024 || opt.Port > 65535) {
		return usageErr("Try: --port 8080, or leave it out to pick a free port", "--port %d: use 1024..65535 (the lab runs unprivileged)", opt.Port)
	}
	return nil
}

// options completes lab.Options: the site (found and said on stderr),
// the account, the caps, the site's database and the knobs, each
// checked before lab.Up creates anything.
func (f *labUpFlags) options(env *Env) (lab.Options, error) {
	opt := f.opt
	userDocroot := opt.DocRoot
	if f.siteQuery != "" {
		s, err := discoverSite(env.Ctx, f.siteQuery)
		if err != nil {
			return opt, err
		}
		if err := f.db.apply(s); err != nil {
			return opt, err
		}
		opt.Site, opt.App = s, lab.SiteApp
		printSiteFound(env.Stderr, s)
		live := site.LiveStart(s)
		opt.Live = &live
		userDocroot = s.DocRoot.Path
	}
	if err := lab.CheckUser(opt.User, userDocroot); err != nil {
		return opt, usageErr("Try: --user www-data (as root), or leave --user out", "%v", err)
	}
	if err := labLimits(&opt, f.memoryMax); err != nil {
		return opt, err
	}
	if opt.Site != nil {
		// After --memory-max: the copy must fit the lab's cap.
		data, err := siteData(env, opt.Site, f.dbFrom, f.dbDump, opt.MemoryMax)
		if err != nil {
			return opt, err
		}
		opt.Data = data
	}
	set := append([]string(nil), opt.Set...)
	if f.server != "" {
		// --server X is --set server=X, after the other settings.
		set = append(set, knob.ServerKnob+"="+f.server)
	}
	set, _, err := knobConfig(f.knobsFile, set)
	if err != nil {
		return opt, err
	}
	if opt.Live != nil {
		// The live configuration is the start, as if --set each;
		// --knobs and --set go on top.
		set = append(opt.Live.Config.Overrides(), set...)
		if _, _, err := knobConfig("", set); err != nil {
			return opt, err
		}
	}
	opt.Set = set
	opt.Progress = func(s string) { fmt.Fprintln(env.Stderr, "lab:", s) }
	return opt, nil
}

func newLabUpCmd(env *Env) *cobra.Command {
	var f labUpFlags
	cmd := &cobra.Command{
		Use:     "up",
		Short:   "Start a lab and leave it running",
		Example: labUpExample,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			f.appGiven, f.dbFromGiven = c.Flags().Changed("app"), c.Flags().Changed("db-from")
			return runLabUp(env, &f)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

// runLabUp checks lab up's flags, starts the lab and prints it.
func runLabUp(env *Env, f *labUpFlags) error {
	if err := f.validate(); err != nil {
		return err
	}
	opt, err := f.options(env)
	if err != nil {
		return err
	}
	warnNeighbours(env)
	s, err := stacksession.Open(env.Ctx, stacksession.Options{Command: "lab up", Own: opt, Keep: true})
	if err != nil {
		return err
	}
	s.Close() // the lab stays up: Keep
	l := s.Lab
	if f.asJSON {
		return printJSON(env, l)
	}
	printLabUp(env, l, opt.Live)
	return nil
}

// printLabUp prints a started lab: its state, the seal, what a site lab
// started from, and the front page's warnings.
func printLabUp(env *Env, l *lab.Lab, live *site.Start) {
	printLab(env, l)
	printSealed(env.Ctx, env.Stdout, l)
	printSiteStart(env.Stdout, l, live)
	warnFrontPage(env.Stderr, l)
	if l.FrontPage != nil {
		if bad, word := pagecheck.LooksLikeError(l.FrontPage.Title); bad {
			fmt.Fprintf(env.Stderr, "warning: the front page's title reads like an error or setup page (%q): check the app before measuring it\n", word)
		}
	}
	fmt.Fprintf(env.Stdout, "\nTake it down with: phptune lab down %s\n", l.Name)
}

func appNames() string {
	var n []string
	for _, a := range apps.Catalog() {
		n = append(n, a.Name)
	}
	return strings.Join(n, "|")
}

// labLimits checks --cpus and --memory-max before anything starts.
func labLimits(opt *lab.Options, memoryMax string) error {
	if opt.CPUs != "" {
		if _, err := lab.CPUSet(opt.CPUs); err != nil {
			return usageErr("Try: --cpus 1 (see nproc)", "%v", err)
		}
	}
	if memoryMax != "" {
		n, err := knob.ParseSize(memoryMax)
		if err != nil || n <= 0 {
			return usageErr("Try: --memory-max 2G", "--memory-max %q: give a size such as 512M or 2G", memoryMax)
		}
		opt.MemoryMax = n
	}
	return nil
}

// warnNeighbours says what a lab will compete with on this machine.
func warnNeighbours(env *Env) {
	if n := lab.Neighbours(); len(n) > 0 {
		fmt.Fprintf(env.Stderr, "warning: this machine also runs %s; the lab shares its CPUs, memory and disks with them, so both disturb each other's figures (--cpus and --memory-max cap the lab)\n", strings.Join(n, ", "))
	}
}

func printLab(env *Env, l *lab.Lab) {
	w := env.Stdout
	fmt.Fprintf(w, "lab:        %s (%s)\n", l.Name, l.App)
	url, where := l.URL, ""
	if l.Sealed() && !l.SiteBySocket() {
		url, where = "http://"+l.SiteAddr().String(), " inside the seal (this host reaches it through the seal's network namespace)"
	}
	fmt.Fprintf(w, "url:        %s/%s\n", url, where)
	switch {
	case l.Server == knob.UnitPHP:
		fmt.Fprintf(w, "server:     %s (status: GET /status on the control socket %s, root or the lab's account)\n", l.Server, l.UnitControl)
	case l.Server != "" && l.Server != knob.NginxFPM && l.ServerStatusURL != "":
		fmt.Fprintf(w, "server:     %s (status %s, from 127.0.0.1)\n", l.Server, l.ServerStatusURL)
	case l.Server != "" && l.Server != knob.NginxFPM:
		fmt.Fprintf(w, "server:     %s (no status page)\n", l.Server)
	}
	switch {
	case l.FPMListen != "":
		fmt.Fprintf(w, "fpm_socket: %s\n", l.FPMListen)
		fmt.Fprintf(w, "fpm_status: %s%s (over FastCGI, or through the web server from 127.0.0.1)\n", url, l.FPMStatusPath)
	case l.Server == knob.UnitPHP:
		fmt.Fprintf(w, "php:        in Unit's application processes (php.unit.so, Debian's embed SAPI): no php-fpm\n")
	default:
		fmt.Fprintf(w, "php:        inside the web server (mod_php): no php-fpm\n")
	}
	fmt.Fprintf(w, "docroot:    %s\n", l.DocRoot)
	if l.MariaDBSocket != "" {
		fmt.Fprintf(w, "mariadb:    %s\n", l.MariaDBSocket)
	}
	fmt.Fprintf(w, "dir:        %s\n", l.Dir)
	if l.User != lab.StackUser && os.Geteuid() == 0 {
		fmt.Fprintf(w, "runs as:    %s (--user: the whole lab has that account's rights)\n", l.User)
	} else {
		fmt.Fprintf(w, "runs as:    %s\n", l.User)
	}
	if lim := l.Limits; lim.CPUs != "" || lim.MemoryMaxB > 0 {
		fmt.Fprintf(w, "caps:       cpus %s, memory %d MiB (enforced by %s)\n", firstNonEmpty(lim.CPUs, "all"), lim.MemoryMaxB>>20, strings.Join(lim.Enforced, ", "))
	}
	if p := l.FrontPage; p != nil {
		fmt.Fprintf(w, "front page: %s\n", p)
	}
	if o := l.Config.Overrides(); len(o) > 0 {
		fmt.Fprintf(w, "knobs:      %s (the rest as the distro ships)\n", strings.Join(o, " "))
	} else {
		fmt.Fprintf(w, "knobs:      the distro's defaults\n")
	}
}

func printJSON(env *Env, v any) error {
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newLabDownCmd(env *Env) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "down [NAME]",
		Short: "Stop every process of a lab and remove its directory",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if all {
				hs, err := lab.List()
				if err != nil {
					return err
				}
				var failed []string
				for _, h := range hs {
					switch {
					case strings.HasPrefix(h.Status, "cleaned"):
						continue
					case strings.HasPrefix(h.Status, "unmarked"):
						// Not phptune's own: only removed when named.
						fmt.Fprintf(env.Stderr, "left alone: %s/%s is not marked as phptune's (remove it by name: phptune lab down %s)\n", lab.Root(), h.Lab.Name, h.Lab.Name)
						continue
					}
					if err := lab.Down(h.Lab.Name); err != nil {
						fmt.Fprintf(env.Stderr, "lab %s: %v\n", h.Lab.Name, err)
						failed = append(failed, h.Lab.Name)
						continue
					}
					fmt.Fprintf(env.Stdout, "lab %s is down\n", h.Lab.Name)
				}
				if len(failed) > 0 {
					return fmt.Errorf("could not take down %s", strings.Join(failed, ", "))
				}
				return nil
			}
			name := "lab"
			if len(args) == 1 {
				name = args[0]
			}
			if err := lab.Down(name); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "lab %s is down\n", name)
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "take down every lab")
	return cmd
}

func newLabStatusCmd(env *Env) *cobra.Command {
	var asJSON, secrets bool
	cmd := &cobra.Command{
		Use:   "status [NAME]",
		Short: "List labs and their health; dead labs are cleaned up",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			hs, err := lab.List()
			if err != nil {
				return err
			}
			if len(args) == 1 {
				if hs, err = onlyLab(hs, args[0]); err != nil {
					return err
				}
			}
			if asJSON {
				return printLabStatusJSON(env, hs, secrets, len(args) == 1)
			}
			printLabStatus(env, hs, secrets)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&secrets, "secrets", false, "also print the lab's database and admin passwords")
	return cmd
}

// onlyLab keeps the lab called name, or says why there is none
// (lab.Open's error).
func onlyLab(hs []lab.Health, name string) ([]lab.Health, error) {
	var keep []lab.Health
	for _, h := range hs {
		if h.Lab.Name == name {
			keep = append(keep, h)
		}
	}
	if len(keep) == 0 {
		_, err := lab.Open(name)
		return nil, err
	}
	return keep, nil
}

// printLabStatusJSON prints the labs and their health as JSON, with their
// secrets when asked: one object when one lab was named.
func printLabStatusJSON(env *Env, hs []lab.Health, secrets, named bool) error {
	type entry struct {
		*lab.Lab
		Health  string       `json:"health"`
		Secrets *lab.Secrets `json:"secrets,omitempty"`
	}
	var out []entry
	for _, h := range hs {
		e := entry{Lab: h.Lab, Health: h.Status}
		if secrets {
			e.Secrets, _ = h.Lab.ReadSecrets()
		}
		out = append(out, e)
	}
	if named && len(out) == 1 {
		return printJSON(env, out[0])
	}
	return printJSON(env, out)
}

// printLabStatus prints the labs' table, what each sealed site lab holds
// and, when asked, their passwords.
func printLabStatus(env *Env, hs []lab.Health, secrets bool) {
	if len(hs) == 0 {
		fmt.Fprintln(env.Stdout, "no labs; start one with: phptune lab up")
		return
	}
	tw := tabwriter.NewWriter(env.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tAPP\tHEALTH\tURL\tFPM SOCKET")
	for _, h := range hs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.Lab.Name, h.Lab.App, h.Status, h.Lab.URL, h.Lab.FPMListen)
	}
	tw.Flush()
	for _, h := range hs {
		if h.Lab.Sealed() {
			fmt.Fprintf(env.Stdout, "\n%s (sealed site lab, %s):\n", h.Lab.Name, h.Lab.SiteURL())
			printCaches(env.Stdout, h.Lab)
			printAttempts(env.Ctx, env.Stdout, h.Lab)
			if c := h.Lab.DBCopy; c != nil {
				fmt.Fprintf(env.Stdout, "database:   %s, a copy from %s (lab reset %s restores it)\n", c.DB, c.Source, h.Lab.Name)
			}
			if h.Lab.LiveKnobs != "" {
				fmt.Fprintf(env.Stdout, "start:      the live configuration, %s: %s\n", h.Lab.LiveKnobs, strings.Join(h.Lab.Config.Overrides(), " "))
			}
		}
	}
	if !secrets {
		return
	}
	for _, h := range hs {
		if s, err := h.Lab.ReadSecrets(); err == nil && (s.DBPassword != "" || s.MariaDBRootPassword != "") {
			fmt.Fprintf(env.Stdout, "\n%s secrets:\n  mariadb root password: %s\n  db %s user %s password %s\n", h.Lab.Name, s.MariaDBRootPassword, s.DBName, s.DBUser, s.DBPassword)
			if s.WPAdminPassword != "" {
				fmt.Fprintf(env.Stdout, "  wordpress admin %s password %s\n", s.WPAdminUser, s.WPAdminPassword)
			}
		}
	}
}

func newLabLogsCmd(env *Env) *cobra.Command {
	var component string
	var lines int
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print the end of a lab's logs",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			l, err := lab.Open(args[0])
			if err != nil {
				return err
			}
			s, err := l.Logs(component, lines)
			if err != nil {
				return usageErr("", "%v", err)
			}
			fmt.Fprint(env.Stdout, s)
			return nil
		},
	}
	cmd.Flags().StringVar(&component, "component", "", "only this component: "+strings.Join(lab.Components, "|"))
	cmd.Flags().IntVarP(&lines, "lines", "n", 100, "lines from the end of each log")
	return cmd
}

func newLabResetCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "reset NAME",
		Short: "Restore a lab's database to its seeded state (WordPress) or to the copy it was brought up with (a site lab)",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			l, err := lab.Open(args[0])
			if err != nil {
				return err
			}
			if err := l.Reset(env.Ctx); err != nil {
				return err
			}
			if l.DBCopy != nil {
				fmt.Fprintf(env.Stdout, "lab %s: database %s restored to the copy taken at lab up (%s)\n", l.Name, l.DBCopy.DB, l.DBCopy.Source)
				return nil
			}
			fmt.Fprintf(env.Stdout, "lab %s: database restored to its seeded state\n", l.Name)
			return nil
		},
	}
}

func newKnobsCmd(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "knobs",
		Short: "List every knob with its default, valid range and meaning",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if asJSON {
				return printJSON(env, knob.All())
			}
			tw := tabwriter.NewWriter(env.Stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KNOB\tCOMPONENT\tDEFAULT\tRANGE\tMEANING")
			for _, k := range knob.All() {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s%s\n", k.Name, k.Component, k.Default, k.Range(), k.Help, k.Versions())
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func init() { register(newKnobsCmd) }
