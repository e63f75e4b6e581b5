package cli

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/decide/tune"
	"github.com/phptune/phptune/internal/sitecopy/site"
)

// recordedSite is a site as discovery returns it, with a database
// password in its configuration.
func recordedSite() *siteLab {
	return &siteLab{site: &site.Site{
		Query:   "shop.test",
		Vhost:   site.Vhost{Server: "nginx", File: "/etc/nginx/sites-enabled/shop", Names: []string{"shop.test"}},
		DocRoot: site.DocRoot{Path: "/srv/shop/public"},
		Pool:    &site.Pool{Name: "shop", User: "shop"},
		App: &site.App{Kind: "laravel", File: "/srv/shop/.env",
			DB: site.Database{Name: "shopdb", User: "shopuser", Host: "127.0.0.1", Password: site.NewSecret("Zq-shop-pw-93")}},
	}, data: siteDataFlags{from: "auto", dump: "/root/shop.sql.gz"}}
}

// TestSiteRecordHoldsNoSecret: a --site run stores its site as a record of
// where it is (name, vhost, docroot, server, pool, database name, host and
// user), and the stored options hold no password of the site's
// configuration.
func TestSiteRecordHoldsNoSecret(t *testing.T) {
	rec := recordedSite().record()
	want := tune.SiteRecord{Name: "shop.test", VhostFile: "/etc/nginx/sites-enabled/shop", Server: "nginx", DocRoot: "/srv/shop/public",
		Pool: "shop", DBName: "shopdb", DBHost: "127.0.0.1", DBUser: "shopuser", DBFrom: "auto", DBDump: "/root/shop.sql.gz"}
	if *rec != want {
		t.Errorf("record: %+v\nwant    %+v", *rec, want)
	}
	stored, err := json.Marshal(tune.Options{ID: "x", Site: rec})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored), "Zq-shop-pw-93") {
		t.Errorf("the stored options hold the site's database password: %s", stored)
	}
	var back tune.Options
	if err := json.Unmarshal(stored, &back); err != nil || back.Site == nil || *back.Site != want {
		t.Errorf("the stored record reads back as %+v (%v); want %+v", back.Site, err, want)
	}
}

// TestSiteRecordReadsOldRuns: a run stored before the record named its
// site by a string; it reads as a record of that name alone.
func TestSiteRecordReadsOldRuns(t *testing.T) {
	var opt tune.Options
	if err := json.Unmarshal([]byte(`{"id":"old","site":"shop.test"}`), &opt); err != nil {
		t.Fatal(err)
	}
	if opt.Site == nil || *opt.Site != (tune.SiteRecord{Name: "shop.test"}) {
		t.Errorf("an old run's site reads as %+v; want the name alone", opt.Site)
	} else if d := recordedData(*opt.Site); d != (siteDataFlags{from: "auto"}) {
		t.Errorf("an old run's lab database: %+v; want a copy of the site's (auto), as before", d)
	}
	var none tune.Options
	if err := json.Unmarshal([]byte(`{"id":"app"}`), &none); err != nil || none.Site != nil {
		t.Errorf("a run with no site reads as %+v (%v)", none.Site, err)
	}
}

// TestResumeRefusesAChangedSite: a resumed --site run's site, found again
// by its name, is refused with the fix when its vhost or docroot is not
// the one recorded; the same site, or an old record of its name alone,
// is not.
func TestResumeRefusesAChangedSite(t *testing.T) {
	s := recordedSite()
	rec := *s.record()
	if err := s.checkUnchanged("run1", rec); err != nil {
		t.Errorf("the same site refused: %v", err)
	}
	if err := s.checkUnchanged("run1", tune.SiteRecord{Name: "shop.test"}); err != nil {
		t.Errorf("an old record of the name alone refused: %v", err)
	}
	for _, c := range []struct {
		name   string
		change func(*tune.SiteRecord)
		says   string
	}{
		{"docroot", func(r *tune.SiteRecord) { r.DocRoot = "/srv/shop-old/public" }, "its docroot was /srv/shop-old/public, now /srv/shop/public"},
		{"vhost", func(r *tune.SiteRecord) { r.VhostFile = "/etc/nginx/conf.d/shop.conf" }, "its vhost was /etc/nginx/conf.d/shop.conf, now /etc/nginx/sites-enabled/shop"},
	} {
		r := rec
		c.change(&r)
		err := s.checkUnchanged("run1", r)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "--resume run1") ||
			!strings.Contains(ue.Hint, "phptune tune --site shop.test") {
			t.Errorf("%s changed: %v (%+v); want a usage error saying %q with the fix", c.name, err, ue, c.says)
		}
	}
}
