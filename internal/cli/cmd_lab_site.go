package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/model/outdir"
	"github.com/phptune/phptune/internal/sitecopy/dbcopy"
	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/seal"
)

// discoverSite is --site NAME|DIR: the site as the live host serves it,
// or a usage error (exit 2) when it cannot be sealed or is not found,
// before anything starts.
func discoverSite(ctx context.Context, query string) (*site.Site, error) {
	if err := lab.CheckSealing(); err != nil {
		return nil, usageErr("", "%v", err)
	}
	return findSite(ctx, query)
}

// findSite is the site NAME|DIR as the live host serves it, read only, or
// a usage error (exit 2) when it is not found.
func findSite(ctx context.Context, query string) (*site.Site, error) {
	if strings.HasPrefix(query, ".") && strings.Contains(query, "/") {
		if abs, err := filepath.Abs(query); err == nil {
			query = abs
		}
	}
	s, err := site.Discover(ctx, siteHost, query)
	var nm *site.NoMatchError
	var am *site.AmbiguousError
	if errors.As(err, &nm) || errors.As(err, &am) {
		return nil, usageErr("See what this host serves: phptune site NAME", "--site: %s", termsafe.Text(err.Error()))
	}
	if err != nil {
		// Nothing has started: what the host could not tell is an
		// input problem too (exit 2).
		return nil, usageErr("Check what this host serves with: phptune site "+query+" (it takes --nginx-config and --root; lab up --site reads the running nginx of this host)", "--site: %s", termsafe.Text(err.Error()))
	}
	return s, nil
}

// printSiteFound says what --site found, before the lab starts.
func printSiteFound(w io.Writer, s *site.Site) {
	fmt.Fprintf(w, "lab: site %s: vhost %s:%d (%s), docroot %s", termsafe.Text(s.Query), termsafe.Text(s.Vhost.File), s.Vhost.Line,
		termsafe.Text(strings.Join(s.Vhost.Names, " ")), termsafe.Text(s.DocRoot.Path))
	if s.Pool != nil {
		fmt.Fprintf(w, ", pool %s (account %s)", termsafe.Text(s.Pool.Name), termsafe.Text(s.Pool.User))
	}
	fmt.Fprintln(w)
	if s.App != nil {
		fmt.Fprintf(w, "lab: app %s, database settings from %s\n", termsafe.Text(s.App.Name()), termsafe.Text(s.App.Source()))
	}
	if s.DB != nil && s.DB.Endpoint.Network == "" {
		fmt.Fprintf(w, "lab: %s\n", termsafe.Text(s.DB.Error))
	} else if s.DB != nil {
		at := s.DB.Endpoint.String()
		if addr, ok := strings.CutPrefix(at, "remote:"); ok {
			at = "tcp:" + addr + " (another machine)"
		}
		fmt.Fprintf(w, "lab: the site's database is at %s in production; the lab runs its own MariaDB at that address inside its seal, with a copy of the data (--db-from, --db-dump)\n", termsafe.Text(at))
	}
}

// printSealed is the part of a site lab's summary that says how to reach
// it and what it tried to reach.
func printSealed(ctx context.Context, w io.Writer, l *lab.Lab) {
	if !l.Sealed() {
		return
	}
	overlay := l.AppRoot
	if overlay == "" {
		overlay = l.DocRoot
	}
	fmt.Fprintf(w, "sealed:     yes: loopback-only network, its own processes only, a file system of what the lab needs (no /home, /srv, /opt, /var/lib), %s as an overlay (writes land in %s)\n", termsafe.Text(overlay), filepath.Join(l.Seal, "overlay", "upper"))
	fmt.Fprintf(w, "site:       %s (names %s inside resolve to the lab)\n", l.SiteURL(), strings.Join(l.SiteNames, " "))
	if l.SiteBySocket() {
		fmt.Fprintf(w, "open it:    curl --unix-socket %s -H 'Host: %s' http://%s/\n", l.HTTPSocket, l.Host, l.Host)
		fmt.Fprintf(w, "            or from a browser: phptune lab forward %s (a loopback URL into the lab while it runs)\n", l.Name)
	} else {
		fmt.Fprintf(w, "open it:    phptune lab forward %s (a loopback URL into the lab while it runs; %s listens inside the seal only)\n", l.Name, l.Server)
	}
	printCaches(w, l)
	printAttempts(ctx, w, l)
}

// printCaches states what each cache server the site names leads to
// inside the seal (lab.Lab.SiteCaches), one line each.
func printCaches(w io.Writer, l *lab.Lab) {
	for i, c := range l.SiteCaches {
		label := "cache:     "
		if i > 0 {
			label = "           "
		}
		fmt.Fprintf(w, "%s %s\n", label, termsafe.Text(c))
	}
}

// printAttempts shows the connections the sealed lab tried to open
// outside (all refused), by destination.
func printAttempts(ctx context.Context, w io.Writer, l *lab.Lab) {
	as, err := l.Attempts(ctx)
	switch {
	case err != nil:
		fmt.Fprintf(w, "blocked:    could not read the seal's counters: %v\n", err)
	case len(as) == 0:
		fmt.Fprintf(w, "blocked:    nothing tried to leave the lab\n")
	default:
		for i, a := range as {
			label := "blocked:   "
			if i > 0 {
				label = "           "
			}
			fmt.Fprintf(w, "%s the lab tried to reach %s %s %d time%s (refused)\n", label, a.Proto, a.Dest, a.Count, plural(a.Count))
		}
	}
}

func plural(n uint64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// warnFrontPage says loudly when a site lab's front page is not a 2xx:
// a redirect or an error page is not the site's page.
func warnFrontPage(w io.Writer, l *lab.Lab) {
	p := l.FrontPage
	if !l.Sealed() || p == nil || (p.Status >= 200 && p.Status < 300) {
		return
	}
	msg := fmt.Sprintf("WARNING: the site's front page answered %d, not the site's page", p.Status)
	if p.Location != "" {
		msg += " (a redirect to " + p.Location + ")"
	}
	fmt.Fprintf(w, "%s; measuring it would measure that answer: check the Host (%s) and the app's own URL settings\n", msg, l.Host)
}

func newLabForwardCmd(env *Env) *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "forward [NAME]",
		Short: "Open a sealed site lab from this host: a loopback URL into it, in the foreground",
		Long: `A site lab (lab up --site) runs sealed: its web server listens on 127.0.0.1:80
inside its own network namespace and on a unix socket in the lab directory,
nothing else. lab forward listens on a loopback address of this host and
copies each connection to that socket (inbound only: nothing in the lab can
use it to reach out) until it is interrupted (Ctrl-C). Send the site's Host:
curl -H 'Host: site.test' http://127.0.0.1:PORT/, or map the name to
127.0.0.1 in your browser's machine.`,
		Example: `  phptune lab forward
  phptune lab forward mysite --listen 127.0.0.1:8080`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			name := "lab"
			if len(args) == 1 {
				name = args[0]
			}
			l, err := lab.Open(name)
			if err != nil {
				return err
			}
			if !l.Sealed() {
				return usageErr("Open "+l.URL+"/ directly", "lab %s is not a sealed site lab: its URL is %s/ already", name, l.URL)
			}
			addr, err := forwardSite(env.Ctx, l, listen)
			if err != nil {
				return usageErr("Try: --listen 127.0.0.1:8080", "%v", err)
			}
			fmt.Fprintf(env.Stdout, "forwarding http://%s/ into lab %s (Ctrl-C stops)\n  curl -H 'Host: %s' http://%s/\n", addr, name, l.Host, addr)
			<-env.Ctx.Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "loopback address and port to listen on (port 0 picks a free one)")
	return cmd
}

// siteData decides where a site lab's database comes from (--db-from,
// --db-dump) and refuses, before anything starts, a copy that cannot be
// made or would not fit the lab (memoryMax: --memory-max). nil is an
// empty database (--db-from none, or a site without one), said on stderr.
func siteData(env *Env, s *site.Site, from, dump string, memoryMax int64) (*lab.SiteData, error) {
	if dump != "" {
		if from != "auto" && from != "" {
			return nil, usageErr("Give one of them", "--db-from %s and --db-dump %s both fill the lab's database", from, dump)
		}
		if s.App == nil || s.App.DB.Name == "" || s.App.DB.User == "" {
			return nil, usageErr("Name them: --db NAME --db-user USER (see what phptune site "+s.Query+" reads of the app's configuration)", "--db-dump: the site's configuration names no literal database and user (%s), so the lab cannot load the dump for the app's account", termsafe.Text(firstNonEmpty(s.AppError, "no app configuration found")))
		}
		f, err := outdir.OpenTrusted(dump)
		if err != nil {
			return nil, usageErr("Give a dump file root owns that only root can write: chown root FILE; chmod go-w FILE", "--db-dump: %v", err)
		}
		f.Close()
		return &lab.SiteData{DumpFile: dump}, nil
	}
	if from == "none" {
		fmt.Fprintf(env.Stderr, "warning: --db-from none: the lab's MariaDB starts empty, so the site answers whatever it answers without its database (an error or install page), not its pages\n")
		return nil, nil
	}
	if s.App == nil || s.DB == nil {
		fmt.Fprintf(env.Stderr, "warning: the site's configuration names no database phptune can copy (%s); the lab's MariaDB starts empty: name the site's database with "+siteDBHint+", or give a dump with --db-dump FILE, if the site uses one\n",
			termsafe.Text(firstNonEmpty(s.AppError, "no application configuration found")))
		return nil, nil
	}
	if from != "auto" && from != "" && from != s.App.DB.Name {
		return nil, usageErr("Try: --db-from auto (or --db-from "+s.App.DB.Name+")", "--db-from %s: the site's configuration (%s) uses the database %s; the lab copies that one, as the app's own account", termsafe.Text(from), termsafe.Text(s.App.File), termsafe.Text(s.App.DB.Name))
	}
	if s.App.DB.Engine() != "mysql" {
		return nil, usageErr("Leave the lab's database empty with --db-from none (a lab runs MariaDB only), or give a MariaDB dump of it with --db-dump FILE", "--db-from: %s", termsafe.Text(s.DB.Error))
	}
	src, err := dbcopy.SourceFor(s.App, s.DB, dbcopy.Account{})
	if err != nil {
		return nil, usageErr("Name it with "+siteDBHint+", give a dump you made with --db-dump FILE, or leave the lab's database empty with --db-from none", "--db-from: %s", termsafe.Text(err.Error()))
	}
	budget, err := dbcopy.NewBudget(lab.Root(), memoryMax)
	if err != nil {
		return nil, err
	}
	if err := budget.Check(src.SizeBytes); err != nil {
		return nil, usageErr("", "--db-from: %v", err)
	}
	if src.SizeBytes <= 0 {
		fmt.Fprintf(env.Stderr, "warning: the size of database %s is unknown (its directory in the server's datadir was not read): the lab's disk and memory budget was not checked\n", termsafe.Text(src.DB))
	}
	return &lab.SiteData{From: &src, Progress: dumpProgress(env.Stderr)}, nil
}

// largeDump is the size above which the dump's progress is shown.
const largeDump = 64 << 20

// dumpProgress prints the dump's progress on w every few seconds once it
// is large.
func dumpProgress(w io.Writer) func(done, total int64) {
	var last time.Time
	return func(done, total int64) {
		if done < largeDump && total < largeDump || time.Since(last) < 3*time.Second {
			return
		}
		last = time.Now()
		if total > 0 {
			fmt.Fprintf(w, "lab: dumped %s (the database is %s on disk; a dump is often larger or smaller)\n", dbcopy.Size(done), dbcopy.Size(total))
		} else {
			fmt.Fprintf(w, "lab: dumped %s\n", dbcopy.Size(done))
		}
	}
}

// printSiteStart says what a site lab started from: the live
// configuration and what of it was carried, WP-cron, the database, and
// production's traffic (siteTrafficLine).
func printSiteStart(w io.Writer, l *lab.Lab, live *site.Start) {
	if !l.Sealed() {
		return
	}
	if live != nil {
		fmt.Fprintf(w, "start:      the live site's configuration (%s; the distro's defaults are the baseline beside it)\n", l.LiveKnobs)
		for _, line := range l.SitePool {
			fmt.Fprintf(w, "            pool line carried as-is: %s\n", termsafe.Text(line))
		}
		for _, n := range live.Notes {
			fmt.Fprintf(w, "            %s\n", termsafe.Text(n))
		}
	}
	if l.SiteNoCron {
		chained := ""
		if l.SitePrepend != "" {
			chained = ", then the pool's own " + termsafe.Text(l.SitePrepend)
		}
		fmt.Fprintf(w, "wp-cron:    off while the lab runs (DISABLE_WP_CRON from the lab's auto_prepend_file%s): no page load spawns wp-cron.php\n", chained)
	}
	switch c := l.DBCopy; {
	case c != nil:
		fmt.Fprintf(w, "database:   %s, a copy from %s: %s of dump in %.1f s (%d connection%s to production, read-only); account %s@%s with %s\n",
			termsafe.Text(c.DB), termsafe.Text(c.Source), dbcopy.Size(c.DumpBytes), c.Seconds, c.ProductionConnections, plural(uint64(c.ProductionConnections)),
			termsafe.Text(c.User), termsafe.Text(strings.Join(c.Hosts, ",")), termsafe.Text(c.Grants))
		fmt.Fprintf(w, "            phptune lab reset %s restores this copy\n", l.Name)
	case l.MariaDBSocket != "":
		fmt.Fprintf(w, "database:   the lab's MariaDB is empty (no copy was loaded)\n")
	}
	fmt.Fprintln(w, siteTrafficLine(l.Name, l.SiteAccessLogs))
}

// forwardSite listens on listen and relays each connection into the
// sealed lab l: to its web server's unix socket (nginx), else to its
// address inside the seal (Apache).
func forwardSite(ctx context.Context, l *lab.Lab, listen string) (net.Addr, error) {
	if l.SiteBySocket() {
		return seal.Forward(ctx, listen, l.HTTPSocket, l.PeerUID())
	}
	ns, err := l.SiteNetNS()
	if err != nil {
		return nil, err
	}
	return seal.ForwardInside(ctx, listen, ns, l.SiteAddr())
}
