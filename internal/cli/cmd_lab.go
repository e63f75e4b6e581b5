package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/apps"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/pagecheck"
	"github.com/phptune/phptune/internal/site"
)

// userFlagRule is the --user rule (lab.CheckAccount) as the flags' help
// says it.
const userFlagRule = "root only; www-data, an ordinary account (uid 1000 and up) or a system account that owns --docroot — never root, phptune-build or an account that owns a service's data (mysql: /var/lib/mysql)"

func init() { register(newLabCmd) }

func newLabCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Bring up, inspect and take down private PHP stacks",
		Long: `A lab is nginx + php-fpm (+ MariaDB) + an app, started from the distro's
packages with configuration rendered into a private directory (` + lab.Root() + `),
on a free loopback port. Nothing under /etc is written and no system service
is touched. Processes run as an unprivileged user.

lab up --site NAME|DIR serves a site of this host (found as phptune site
finds it) sealed: every process of the lab in a private network namespace
with loopback only and a private mount namespace, nginx with the site's names
on 127.0.0.1:80 and on a unix socket in the lab directory (the host's only
way in: curl --unix-socket, or phptune lab forward), the lab's own MariaDB
on 127.0.0.1:3306 and /run/mysqld/mysqld.sock inside, the docroot as an
overlay whose writes stay in the lab. Connections that try to leave are
refused and counted (lab up and lab status show them). Its database is a
copy of production's (--db-from, by default the one the site's
configuration names: mariadb-dump --single-transaction as the app's own
account, read-only) or a dump of yours (--db-dump), with the app's account
and password; lab reset restores that copy. It starts from the live pool
and php.ini (kept in the lab's live.knobs), and WP-cron is off while it
runs for a WordPress site.`,
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

func newLabUpCmd(env *Env) *cobra.Command {
	var opt lab.Options
	var knobsFile, memoryMax, server, siteQuery, dbFrom, dbDump string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a lab and leave it running",
		Example: `  phptune lab up --site site.test
  phptune lab up --app wordpress
  phptune lab up --name big --app io --set pm=static --set pm.max_children=48
  phptune lab up --docroot ./public --knobs recommended.knobs
  phptune lab up --app wordpress --server apache-prefork-modphp --set apache.max_request_workers=10`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			// Input errors are usage errors (exit 2), found before
			// lab.Up creates anything.
			if err := lab.CheckName(opt.Name); err != nil {
				return usageErr("Try: --name mylab", "--name: %v", err)
			}
			if siteQuery != "" {
				if opt.DocRoot != "" || c.Flags().Changed("app") {
					return usageErr("Try: --site NAME alone, or --docroot DIR for a directory", "--site serves the site's own docroot: leave --docroot and --app out")
				}
				if opt.Port != 0 {
					return usageErr("Leave --port out", "--port: a site lab listens on the site's own port inside its seal and on a unix socket for this host")
				}
				s, err := discoverSite(env.Ctx, siteQuery)
				if err != nil {
					return err
				}
				opt.Site, opt.App = s, lab.SiteApp
				printSiteFound(env.Stderr, s)
				live := site.LiveStart(s)
				opt.Live = &live
			} else if c.Flags().Changed("db-from") || dbDump != "" {
				return usageErr("Try: --site NAME --db-from auto", "--db-from and --db-dump fill a site lab's database: give --site too")
			} else if opt.DocRoot != "" {
				if err := apps.CheckDocRoot(opt.DocRoot); err != nil {
					return usageErr("Try: --docroot DIR, a directory holding your app's index.php", "%v", err)
				}
			} else if _, err := apps.Lookup(opt.App); err != nil {
				return usageErr("Choose one of: "+appNames(), "--app %q is not a built-in app", opt.App)
			}
			if opt.Port != 0 && (opt.Port < 1024 || opt.Port > 65535) {
				return usageErr("Try: --port 8080, or leave it out to pick a free port", "--port %d: use 1024..65535 (the lab runs unprivileged)", opt.Port)
			}
			userDocroot := opt.DocRoot
			if opt.Site != nil {
				userDocroot = opt.Site.DocRoot.Path
			}
			if err := lab.CheckUser(opt.User, userDocroot); err != nil {
				return usageErr("Try: --user www-data (as root), or leave --user out", "%v", err)
			}
			if err := labLimits(&opt, memoryMax); err != nil {
				return err
			}
			if opt.Site != nil {
				// After --memory-max: the copy must fit the lab's cap.
				data, err := siteData(env, opt.Site, dbFrom, dbDump, opt.MemoryMax)
				if err != nil {
					return err
				}
				opt.Data = data
			}
			if server != "" {
				// --server X is --set server=X, after the other settings.
				opt.Set = append(opt.Set, knob.ServerKnob+"="+server)
			}
			set, _, err := knobConfig(knobsFile, opt.Set)
			if err != nil {
				return err
			}
			if opt.Live != nil {
				// The live configuration is the start, as if --set each;
				// --knobs and --set go on top.
				set = append(opt.Live.Config.Overrides(), set...)
				if _, _, err := knobConfig("", set); err != nil {
					return err
				}
			}
			opt.Set = set
			opt.Progress = func(s string) { fmt.Fprintln(env.Stderr, "lab:", s) }
			warnNeighbours(env)
			l, err := lab.Up(env.Ctx, opt)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(env, l)
			}
			printLab(env, l)
			printSealed(env.Ctx, env.Stdout, l)
			printSiteStart(env.Stdout, l, opt.Live)
			warnFrontPage(env.Stderr, l)
			if l.FrontPage != nil {
				if bad, word := pagecheck.LooksLikeError(l.FrontPage.Title); bad {
					fmt.Fprintf(env.Stderr, "warning: the front page's title reads like an error or setup page (%q): check the app before measuring it\n", word)
				}
			}
			fmt.Fprintf(env.Stdout, "\nTake it down with: phptune lab down %s\n", l.Name)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opt.Name, "name", "lab", "lab name (letters, digits, dashes)")
	f.StringVar(&opt.App, "app", "hello", "built-in app: "+appNames())
	f.StringVar(&opt.DocRoot, "docroot", "", "serve your own PHP app from this directory instead of a built-in one")
	f.StringVar(&siteQuery, "site", "", "serve a site of this host, found by its server_name or document root (NAME|DIR, as phptune site shows it), sealed: its own network and mount namespaces, its own MariaDB at the addresses the site's configuration names, the docroot as an overlay (root, Landlock)")
	f.StringVar(&dbFrom, "db-from", "auto", "with --site: copy this production database into the lab, read-only (mariadb-dump --single-transaction as the app's own account): auto is the one the site's configuration names; none leaves the lab's MariaDB empty (the site then answers its error page)")
	f.StringVar(&dbDump, "db-dump", "", "with --site: load this dump of the site's database (FILE or FILE.gz, root's, as mariadb-dump makes it) instead of copying production's")
	f.StringArrayVar(&opt.Set, "set", nil, "set a knob, KNOB=VALUE (repeatable; see phptune knobs; with --site it goes on top of the live configuration)")
	f.StringVar(&knobsFile, "knobs", "", "read knob settings from a file of KNOB=VALUE lines (as phptune tune writes)")
	f.StringVar(&server, "server", "", "web server: "+strings.Join(knob.Servers, "|")+" (shorthand for --set server=X; default nginx-fpm; see docs/servers.md)")
	f.IntVar(&opt.Port, "port", 0, "HTTP port on 127.0.0.1 (default: a free one)")
	f.StringVar(&opt.CPUs, "cpus", "", "pin every process of the lab to these CPUs (e.g. 1 or 0-1,3), so it leaves the others to what the machine serves")
	f.StringVar(&memoryMax, "memory-max", "", "cap the memory of all the lab's processes together (e.g. 2G; root, cgroup v2 or v1's memory controller): refused when it cannot be enforced")
	f.StringVar(&opt.User, "user", "", "run the lab (nginx, php-fpm, MariaDB) as this account: the app then runs with that account's rights, e.g. --user www-data for an app whose caches and uploads www-data owns (with --site: the site pool's account unless given); "+userFlagRule)
	f.BoolVar(&asJSON, "json", false, "print the lab's state as JSON")
	return cmd
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
		if _, err := lab.ParseCPUList(opt.CPUs); err != nil {
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
	fmt.Fprintf(w, "url:        %s/\n", l.URL)
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
		fmt.Fprintf(w, "fpm_status: %s%s (over FastCGI, or through the web server from 127.0.0.1)\n", l.URL, l.FPMStatusPath)
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
				var keep []lab.Health
				for _, h := range hs {
					if h.Lab.Name == args[0] {
						keep = append(keep, h)
					}
				}
				if len(keep) == 0 {
					_, err := lab.Open(args[0])
					return err
				}
				hs = keep
			}
			if asJSON {
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
				if len(args) == 1 && len(out) == 1 {
					return printJSON(env, out[0])
				}
				return printJSON(env, out)
			}
			if len(hs) == 0 {
				fmt.Fprintln(env.Stdout, "no labs; start one with: phptune lab up")
				return nil
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
					printAttempts(env.Ctx, env.Stdout, h.Lab)
					if c := h.Lab.DBCopy; c != nil {
						fmt.Fprintf(env.Stdout, "database:   %s, a copy from %s (lab reset %s restores it)\n", c.DB, c.Source, h.Lab.Name)
					}
					if h.Lab.LiveKnobs != "" {
						fmt.Fprintf(env.Stdout, "start:      the live configuration, %s: %s\n", h.Lab.LiveKnobs, strings.Join(h.Lab.Config.Overrides(), " "))
					}
				}
			}
			if secrets {
				for _, h := range hs {
					if s, err := h.Lab.ReadSecrets(); err == nil && (s.DBPassword != "" || s.MariaDBRootPassword != "") {
						fmt.Fprintf(env.Stdout, "\n%s secrets:\n  mariadb root password: %s\n  db %s user %s password %s\n", h.Lab.Name, s.MariaDBRootPassword, s.DBName, s.DBUser, s.DBPassword)
						if s.WPAdminPassword != "" {
							fmt.Fprintf(env.Stdout, "  wordpress admin %s password %s\n", s.WPAdminUser, s.WPAdminPassword)
						}
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&secrets, "secrets", false, "also print the lab's database and admin passwords")
	return cmd
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
