package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/decide/tune"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/stack/stacksession"
)

// --site on the stack commands (tune, compare, bench, capacity, profile):
// a sealed site lab of the command's own, started from the live site's
// configuration, measured and taken down at the end.

// siteHost is the host --site finds sites on: this one. Tests point it
// at a copy of a Debian host's configuration.
var siteHost = site.Host{Root: "/"}

// siteFlagHelp is --site's help on the stack commands.
const siteFlagHelp = "measure a sealed lab of its own of a site of this host, found by its server_name or document root (NAME|DIR, as phptune site shows it): the site's code with its real Host, started from its live pool and php.ini, its own MariaDB, nothing reaching production (root; see lab up --site)"

// siteLab is a site found for --site before anything starts, with the
// live configuration its lab starts from.
type siteLab struct {
	site *site.Site
	live site.Start
	data siteDataFlags
}

// siteDataFlags say where a --site lab's database comes from, as on lab
// up --site: a copy of the one the site's configuration names (auto), a
// dump file, or none.
type siteDataFlags struct {
	from, dump string
	// db is the database named on the command line (--db, ...).
	db siteDBFlags
}

// recordedData are the data flags a run's site record kept (auto for a
// run stored before it kept them).
func recordedData(r tune.SiteRecord) siteDataFlags {
	return siteDataFlags{from: firstNonEmpty(r.DBFrom, "auto"), dump: r.DBDump}
}

func (d *siteDataFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&d.from, "db-from", "auto", "with --site: the database copied into the lab: auto (the one the site's configuration names), its name, or none (the lab's MariaDB starts empty)")
	fl.StringVar(&d.dump, "db-dump", "", "with --site: load this dump (FILE or FILE.gz, root's) into the lab's MariaDB instead of copying production's")
	d.db.add(fl)
}

// planSiteLab finds the site query names on this host and reads its live
// configuration; every refusal is a usage error (exit 2) before anything
// starts. user is --user ("" for the site pool's account).
func planSiteLab(ctx context.Context, query, user string, data siteDataFlags) (*siteLab, error) {
	s, err := discoverSite(ctx, query)
	if err != nil {
		return nil, err
	}
	if err := data.db.apply(s); err != nil {
		return nil, err
	}
	if err := lab.CheckUser(user, s.DocRoot.Path); err != nil {
		return nil, usageErr("Try: --user www-data (as root), or leave --user out (the site pool's account)", "%v", err)
	}
	return &siteLab{site: s, live: site.LiveStart(s), data: data}, nil
}

// record is the site as a run stores it (tune.SiteRecord): where it is
// and what it names, never its database's password. The app root is the
// lab's to decide; the caller adds it once the lab is up.
func (s *siteLab) record() *tune.SiteRecord {
	st := s.site
	r := &tune.SiteRecord{Name: st.Query, VhostFile: st.Vhost.File, Server: st.Vhost.Server, DocRoot: st.DocRoot.Path,
		DBFrom: s.data.from, DBDump: s.data.dump}
	if st.Pool != nil {
		r.Pool = st.Pool.Name
	}
	if st.App != nil {
		r.DBName, r.DBHost, r.DBUser = st.App.DB.Name, st.App.DB.Host, st.App.DB.User
	}
	return r
}

// checkUnchanged refuses, with the fix, a site found again for run id's
// --resume whose vhost or document root is not the one recorded when the
// run began: its trials measured another site. A record of a run stored
// before records were kept names the site alone and is not checked.
func (s *siteLab) checkUnchanged(id string, rec tune.SiteRecord) error {
	now := s.record()
	var changed []string
	if rec.VhostFile != "" && rec.VhostFile != now.VhostFile {
		changed = append(changed, fmt.Sprintf("its vhost was %s, now %s", termsafe.Text(rec.VhostFile), termsafe.Text(now.VhostFile)))
	}
	if rec.DocRoot != "" && rec.DocRoot != now.DocRoot {
		changed = append(changed, fmt.Sprintf("its docroot was %s, now %s", termsafe.Text(rec.DocRoot), termsafe.Text(now.DocRoot)))
	}
	if len(changed) == 0 {
		return nil
	}
	return usageErr("Start a new tune of the site as it is now: phptune tune --site "+termsafe.Text(rec.Name),
		"--resume %s: site %s changed since the run began (%s): the run's trials measured the site as it was", id, termsafe.Text(rec.Name), strings.Join(changed, "; "))
}

// options are the lab.Options of the site's own lab: the site, sealed,
// started from the live configuration (its knobs and the pool lines phptune
// has none for) with set (--set, --knobs) on top, and a copy of the
// database its configuration names, as lab up --site makes by default
// (siteData: refused before the lab starts when it cannot be made or would
// not fit memoryMax and the lab's disk).
func (s *siteLab) options(env *Env, name, ownedBy, user string, set []string, memoryMax int64) (lab.Options, error) {
	data, err := siteData(env, s.site, s.data.from, s.data.dump, memoryMax)
	if err != nil {
		return lab.Options{}, err
	}
	live := s.live
	return lab.Options{Name: name, App: lab.SiteApp, Site: s.site, User: user, Set: append(knobAssignments(s.live.Config), set...), OwnedBy: ownedBy,
		Live: &live, Data: data, MemoryMax: memoryMax}, nil
}

// start is the configuration the site's lab starts from: the live one
// with set on top, or an error naming the setting.
func (s *siteLab) start(set []string) (knob.Config, error) {
	cfg := s.live.Config.Clone()
	for _, a := range set {
		name, value, _ := strings.Cut(a, "=")
		if err := cfg.Set(strings.TrimSpace(name), value); err != nil {
			return nil, usageErr("Try: --set pm.max_children=16", "--set %s: %v", a, err)
		}
	}
	return cfg, nil
}

// say prints what --site found and what of the live configuration the
// lab carries.
func (s *siteLab) say(w io.Writer) {
	printSiteFound(w, s.site)
	for _, n := range s.live.Notes {
		fmt.Fprintf(w, "lab: live start: %s\n", termsafe.Text(n))
	}
}

// knobAssignments are cfg's settings as sorted KNOB=VALUE assignments.
func knobAssignments(cfg knob.Config) []string {
	out := make([]string, 0, len(cfg))
	for k, v := range cfg {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// useLabLiveStart makes a tune or compare on a running sealed site lab
// (--lab) start from the live site's configuration the lab recorded
// (labstack.LiveStart), with the distro baseline beside it. It says so,
// and returns whether it did.
func useLabLiveStart(l *lab.Lab, opt *tune.Options, say func(string, ...any)) (bool, error) {
	live, ok, err := labstack.LiveStart(l)
	if err != nil || !ok {
		return false, err
	}
	opt.UseLiveStart(live)
	say("lab %s is a site lab: the tune starts from the live site's configuration (%s), with Debian's default beside it as the distro baseline", l.Name, labstack.LiveStartFile)
	return true, nil
}

// upOwnLab is bench --app, --docroot or --site: it opens a session on a
// lab of its own (for --site the site's sealed lab, started from the live
// configuration) and points the bench at it as --lab would.
func (f *benchFlags) upOwnLab(env *Env) (*stacksession.Session, error) {
	st := &f.stack
	if st.site != "" && f.labFCGI {
		return nil, usageErr("Leave --fcgi out: a site lab is benched through its web server, with the site's Host", "--fcgi does not go with --site")
	}
	set, _, err := knobConfig(st.knobsFile, st.set)
	if err != nil {
		return nil, err
	}
	plan, err := st.plan(env.Ctx)
	if err != nil {
		return nil, err
	}
	// bench parses its workload itself, on the lab it then names.
	sess, err := openSession(env, st, sessionSpec{command: "bench", site: plan.site, set: set, redactNames: f.redact})
	if err != nil {
		return nil, err
	}
	st.lab = sess.Lab.Name
	return sess, nil
}
