package lab

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/apache"
	"github.com/phptune/phptune/internal/servers/wordpress"
	"github.com/phptune/phptune/internal/sitecopy/dbcopy"
	"github.com/phptune/phptune/internal/sitecopy/site"
)

// LiveKnobsFile is the knob file a site lab keeps of the live site's
// configuration, its start.
const LiveKnobsFile = "live.knobs"

// noCronName is the lab's prepend file that turns WP-cron off for a
// WordPress site (wordpress.NoCronPrepend), in the lab's root-owned app/.
const noCronName = "nocron.php"

// setLive records what a site lab carries of the live site: the pool
// lines phptune has no knob for, the pool's own prepend file, and whether
// WP-cron is turned off (a WordPress site).
func (l *Lab) setLive(s *site.Site, live *site.Start) {
	if live != nil {
		l.SitePool = append([]string(nil), live.Pool...)
		l.SitePrepend = live.Prepend
		l.SiteApache = live.Apache
		l.LiveKnobs = layout{l.Dir}.p(LiveKnobsFile)
	}
	l.SiteNoCron = s.App != nil && s.App.Kind == "wordpress"
}

// writeLiveKnobs writes DIR/live.knobs, root's and readable by the lab's
// group: the live configuration as a knob file, for tune --lab to start
// from.
func (l *Lab) writeLiveKnobs(acct *account, live *site.Start) error {
	if live == nil || l.LiveKnobs == "" {
		return nil
	}
	text := knob.FormatFile(live.Config, "The live site's configuration, as production runs it: the start of lab "+l.Name+".\nWritten by phptune lab up --site.")
	return writeOwned(l.LiveKnobs, []byte(text), acct.readFileMode(), acct.group())
}

// isPrependLine reports whether a pool line sets auto_prepend_file.
func isPrependLine(line string) bool {
	key, _, _ := strings.Cut(line, "=")
	key = strings.TrimSpace(key)
	return key == "php_admin_value[auto_prepend_file]" || key == "php_value[auto_prepend_file]"
}

// modPHPPoolLines are the mod_php settings a site lab's Apache carries
// (php_value NAME "VALUE" of production's vhost), as php-fpm's pool
// lines: when the lab's server runs php-fpm (a challenger of a mod_php
// site, or --set server=...), its pool sets them, as production's mod_php
// does, and the lab's httpd.conf leaves them out (apache.ModPHPSetting).
func (l *Lab) modPHPPoolLines() []string {
	if l.SiteApache == nil || !knob.RunsFPM(l.Config.Server()) {
		return nil
	}
	var out []string
	for _, line := range l.SiteApache.Lines {
		if key, value, ok := apache.ModPHPSetting(line); ok {
			out = append(out, key+" = "+value)
		}
	}
	return out
}

// sitePoolLines are the extra pool lines of a site lab: the live pool's
// (SitePool) and, for a WordPress site, the lab's prepend file that turns
// WP-cron off in place of the live prepend, which it chains with the
// profiler's when one runs. The prepend file is rendered here, root's,
// readable by the lab's group.
func (l *Lab) sitePoolLines(acct *account) ([]string, error) {
	if !l.Sealed() {
		return nil, nil
	}
	if !l.SiteNoCron {
		return l.SitePool, nil
	}
	var out []string
	for _, line := range l.SitePool {
		if !isPrependLine(line) {
			out = append(out, line)
		}
	}
	chain := []string{l.SitePrepend}
	if l.PHPProfiler == ProfilerCPU || l.PHPProfiler == ProfilerWall {
		chain = append(chain, filepath.Join(l.Dir, statusDir, profilerScriptName))
	}
	text, err := wordpress.NoCronPrepend(chain...)
	if err != nil {
		return nil, err
	}
	path := layout{l.Dir}.p("app", noCronName)
	if err := writeOwned(path, []byte(text), acct.readFileMode(), acct.group()); err != nil {
		return nil, err
	}
	return append(out, wordpress.NoCronPoolLine(path)), nil
}

// copySiteData loads the site's database from p.data into the lab's
// MariaDB, records it (state and secrets: the app's database and
// account), and snapshots it for lab reset.
func (l *Lab) copySiteData(ctx context.Context, acct *account, p *plan, secrets *Secrets) error {
	rec, err := l.fillSite(ctx, acct, p.site, p.data, secrets.MariaDBRootPassword, p.progress)
	if err != nil {
		return fmt.Errorf("copying the site's database: %w", err)
	}
	l.DBCopy = rec
	p.progress(fmt.Sprintf("database %s copied (%s of dump) in %.1f s; the app's account %s exists for %s with %s",
		rec.DB, dbcopy.Size(rec.DumpBytes), rec.Seconds, rec.User, strings.Join(rec.Hosts, ", "), rec.Grants))
	for _, n := range rec.Notes {
		p.progress("database copy: " + n)
	}
	secrets.DBName, secrets.DBUser, secrets.DBPassword = rec.DB, rec.User, p.site.App.DB.Password.Reveal()
	if err := l.writeSecrets(*secrets); err != nil {
		return err
	}
	if err := l.writeState(); err != nil {
		return err
	}
	p.progress("snapshotting the copy (lab reset restores it)")
	return l.snapshot(ctx, acct, p.db, rec.DB)
}
