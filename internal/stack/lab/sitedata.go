package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/phptune/phptune/internal/model/outdir"
	"github.com/phptune/phptune/internal/sitecopy/dbcopy"
	"github.com/phptune/phptune/internal/sitecopy/site"
)

// SiteData says where a site lab's database comes from (Options.Data):
// production's, dumped read-only as the app's own account, or a dump the
// user made. Either is loaded into the lab's MariaDB once it answers, with
// the app's account as its configuration names it, and then snapshotted
// so that lab reset restores it.
type SiteData struct {
	// From, when set, is production's database (dbcopy.SourceFor); the
	// lab sets the account its client programs run as.
	From *dbcopy.Source
	// DumpFile, when set instead, is a dump of the site's database (plain
	// or gzip), opened only when no other account could have written it.
	DumpFile string
	// Progress, when set, receives the bytes dumped so far and the
	// database's size on disk (0: unknown).
	Progress func(done, total int64)
}

// DBCopy is what a site lab records about its copy of the database.
type DBCopy struct {
	// Source says where it came from: "production at unix:/run/mysqld/…"
	// or "dump FILE".
	Source string `json:"source"`
	DB     string `json:"db"`
	// SizeBytes is the database's size on disk in production (0: unknown
	// or a dump); DumpBytes the dump's size as loaded.
	SizeBytes int64 `json:"size_bytes,omitempty"`
	DumpBytes int64 `json:"dump_bytes"`
	// Seconds is the time from the dump's start to the lab's copy loaded.
	Seconds float64 `json:"seconds"`
	// ProductionConnections is how many connections the copy opened to
	// production: the grants' read and the dump's (0 for a dump file).
	ProductionConnections int `json:"production_connections"`
	// User and Hosts are the app's account in the lab; Grants says whose
	// rights it has.
	User   string   `json:"user"`
	Hosts  []string `json:"hosts"`
	Grants string   `json:"grants"`
	// Notes say what was left out (a grant the lab cannot make).
	Notes []string `json:"notes,omitempty"`
}

// siteAccountHosts are the hosts the app's account gets in the lab: those
// production's grants name, those its endpoint implies, and always
// localhost (the socket) and 127.0.0.1 (TCP: the lab's server skips name
// resolution, so 'localhost' does not match a TCP client).
func siteAccountHosts(granted, implied []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, hs := range [][]string{granted, implied, {"localhost", "127.0.0.1"}} {
		for _, h := range hs {
			if h != "" && !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	return out
}

// fillSite loads the site's database into the lab's MariaDB from d, as
// the lab's account (the client programs never run as root), and returns
// what it did. Production is reached only by dbcopy.ReadGrants and
// dbcopy.Dump, each one connection that only reads.
func (l *Lab) fillSite(ctx context.Context, acct *account, s *site.Site, d *SiteData, rootPassword string, say func(string)) (*DBCopy, error) {
	app := s.App
	if app == nil || app.DB.Name == "" || app.DB.User == "" {
		return nil, errors.New("the site's configuration names no literal database and user, so the lab cannot create the app's account for a copy; leave --db-from and --db-dump out (--db-from none) or fix what phptune site reports")
	}
	runAs := dbcopy.Account{Name: acct.Name, UID: acct.UID, GID: acct.GID, Start: l.Limits.startCapped}
	// The load is root of the lab's server: its client runs as the lab's
	// MariaDB account, which the site's code cannot reach; the reads of
	// production run as the site's own account, with the site's own
	// password.
	dbAcct, err := l.dbAccount()
	if err != nil {
		return nil, err
	}
	loadAs := dbcopy.Account{Name: dbAcct.Name, UID: dbAcct.UID, GID: dbAcct.GID, Start: l.Limits.startCapped}
	t := dbcopy.Target{Socket: l.MariaDBSocket, RootPassword: rootPassword, DB: app.DB.Name, User: app.DB.User, Password: app.DB.Password, RunAs: loadAs}
	rec := &DBCopy{DB: app.DB.Name, User: app.DB.User}
	var implied []string
	if s.DB != nil {
		implied = dbcopy.HostsForTarget(s.DB)
	}
	start := time.Now()
	var loaded atomic.Int64
	switch {
	case d.From != nil:
		src := *d.From
		src.RunAs = runAs
		rec.Source = "production at " + src.Conn.Network + ":" + src.Conn.Address
		rec.SizeBytes = src.SizeBytes
		gs, notes, err := dbcopy.ReadGrants(ctx, src)
		rec.ProductionConnections++
		if err != nil {
			rec.Notes = append(rec.Notes, fmt.Sprintf("production's grants were not read (%v): the app's account gets all privileges on %s", err, app.DB.Name))
		} else {
			kept, dropped := dbcopy.ForDB(gs, app.DB.Name)
			t.Grants = gs
			rec.Notes = append(append(rec.Notes, notes...), dropped...)
			if len(kept) > 0 {
				rec.Grants = "production's grants on " + app.DB.Name
			}
			t.Hosts = siteAccountHosts(dbcopy.AccountHosts(gs), implied)
		}
		if t.Hosts == nil {
			t.Hosts = siteAccountHosts(nil, implied)
		}
		say(fmt.Sprintf("copying database %s from production (%s on disk, mariadb-dump --single-transaction as %s, read-only)", app.DB.Name, sizeOrUnknown(src.SizeBytes), src.Conn.User))
		pr, pw := io.Pipe()
		dumped := make(chan error, 1)
		rec.ProductionConnections++
		go func() {
			err := dbcopy.Dump(ctx, src, pw, d.Progress)
			pw.CloseWithError(err)
			dumped <- err
		}()
		lerr := dbcopy.Load(ctx, t, loadCounter{pr, &loaded})
		pr.CloseWithError(errors.New("the load ended"))
		derr := <-dumped
		if derr != nil {
			return nil, derr
		}
		if lerr != nil {
			return nil, lerr
		}
	case d.DumpFile != "":
		f, err := outdir.OpenTrusted(d.DumpFile)
		if err != nil {
			return nil, fmt.Errorf("--db-dump: %w", err)
		}
		defer f.Close()
		t.Hosts = siteAccountHosts(nil, implied)
		rec.Source = "dump " + d.DumpFile
		say(fmt.Sprintf("loading %s into the lab's database %s", d.DumpFile, app.DB.Name))
		if err := dbcopy.Load(ctx, t, loadCounter{f, &loaded}); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("no database source: give --db-from or --db-dump")
	}
	if rec.Grants == "" {
		rec.Grants = "all privileges on " + app.DB.Name
	}
	rec.Hosts = t.Hosts
	rec.DumpBytes = loaded.Load()
	rec.Seconds = time.Since(start).Seconds()
	return rec, nil
}

// loadCounter counts the bytes read through it.
type loadCounter struct {
	r io.Reader
	n *atomic.Int64
}

func (c loadCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func sizeOrUnknown(n int64) string {
	if n <= 0 {
		return "size unknown"
	}
	return dbcopy.Size(n)
}
