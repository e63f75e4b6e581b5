package cli

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/lab"
)

// fakeReplayLog makes siteReplayLog pass the logs whose path is in ok
// and refuse the others, for the test's time.
func fakeReplayLog(t *testing.T, ok ...string) {
	t.Helper()
	saved := siteReplayLog
	t.Cleanup(func() { siteReplayLog = saved })
	siteReplayLog = func(logs []site.AccessLog) (site.AccessLog, error) {
		if len(logs) == 0 {
			return site.AccessLog{}, site.ErrNoAccessLog
		}
		for _, l := range logs {
			for _, p := range ok {
				if l.Path == p {
					return l, nil
				}
			}
		}
		return logs[0], fmt.Errorf("%s is a symbolic link: refused", logs[0].Path)
	}
}

var (
	wikiLog   = site.AccessLog{Path: "/var/log/apache2/wiki.access.log", Format: "vhost_combined", At: "/etc/apache2/sites-enabled/wiki.conf:7"}
	sharedLog = site.AccessLog{Path: "/var/log/nginx/access.log", Format: "combined", At: "/etc/nginx/nginx.conf:40", Shared: true}
	linkLog   = site.AccessLog{Path: "/var/log/x/planted\x1b[2J.log", Format: "combined"}
)

// TestSiteTrafficLine: lab up --site names production's access log with
// the exact command that replays it, says why a log is not offered (its
// path through termsafe: the host's configuration wrote it), and what
// to do when the vhost names none.
func TestSiteTrafficLine(t *testing.T) {
	fakeReplayLog(t, wikiLog.Path, sharedLog.Path)
	for _, tc := range []struct {
		name string
		logs []site.AccessLog
		want string
	}{
		{"own log", []site.AccessLog{wikiLog},
			"traffic:    production's access log /var/log/apache2/wiki.access.log (vhost_combined): phptune tune --lab wiki --workload-from-log /var/log/apache2/wiki.access.log"},
		{"shared log", []site.AccessLog{sharedLog},
			"traffic:    production's access log /var/log/nginx/access.log (combined; the server level's, which other vhosts write too): phptune tune --lab wiki --workload-from-log /var/log/nginx/access.log"},
		{"a refused log", []site.AccessLog{linkLog},
			"traffic:    production's access log /var/log/x/planted\\x1b[2J.log (combined) is not offered: /var/log/x/planted\\x1b[2J.log is a symbolic link: refused"},
		{"none", nil,
			"traffic:    production's vhost " + site.ErrNoAccessLog.Error() + ": replay a log of yours with phptune tune --lab wiki --workload-from-log FILE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := siteTrafficLine("wiki", tc.logs); got != tc.want {
				t.Errorf("\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestPrintSiteStartSaysTraffic: a sealed lab's summary ends with the
// traffic line of the logs it recorded.
func TestPrintSiteStartSaysTraffic(t *testing.T) {
	fakeReplayLog(t, wikiLog.Path)
	l := &lab.Lab{Name: "wiki", Seal: t.TempDir(), SiteAccessLogs: []site.AccessLog{wikiLog}}
	var out bytes.Buffer
	printSiteStart(&out, l, nil)
	if want := "traffic:    production's access log /var/log/apache2/wiki.access.log (vhost_combined): phptune tune --lab wiki --workload-from-log /var/log/apache2/wiki.access.log\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("printSiteStart:\n%s\nwant it to end with\n%s", out.String(), want)
	}
	out.Reset()
	printSiteStart(&out, &lab.Lab{Name: "hello"}, nil)
	if out.Len() != 0 {
		t.Errorf("an unsealed lab's summary says %q", out.String())
	}
}

// TestSiteLogHint: tune without a workload flag says the site's log
// exists and how to replay it, or why it cannot; nothing when the vhost
// names none.
func TestSiteLogHint(t *testing.T) {
	fakeReplayLog(t, wikiLog.Path)
	for _, tc := range []struct {
		name string
		logs []site.AccessLog
		want string
	}{
		{"a log", []site.AccessLog{wikiLog}, "the site's access log /var/log/apache2/wiki.access.log (vhost_combined) holds production's traffic; this run measures --workload front (GET /) only: replay production's with --workload-from-log /var/log/apache2/wiki.access.log (or --workload-from-log vhost)"},
		{"refused", []site.AccessLog{linkLog}, "the site's access log /var/log/x/planted\\x1b[2J.log (combined) is not offered as the workload: /var/log/x/planted\\x1b[2J.log is a symbolic link: refused; measuring --workload front (GET /)"},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := siteLogHint(tc.logs); got != tc.want {
				t.Errorf("\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestVhostLogPath: --workload-from-log vhost is the site's (or the site
// lab's) access log that can be replayed; refused, with why, for a
// stack that is no site, a site without a log and a log that cannot be
// replayed.
func TestVhostLogPath(t *testing.T) {
	fakeReplayLog(t, wikiLog.Path)
	withLogs := func(logs ...site.AccessLog) *siteLab {
		return &siteLab{site: &site.Site{Vhost: site.Vhost{AccessLogs: logs}}}
	}
	sealed := &lab.Lab{Name: "wiki", Seal: t.TempDir(), SiteAccessLogs: []site.AccessLog{linkLog, wikiLog}}
	for _, tc := range []struct {
		name      string
		site      *siteLab
		lab       *lab.Lab
		want, err string
	}{
		{"--site", withLogs(wikiLog), nil, wikiLog.Path, ""},
		{"a site lab: the first that can be replayed", nil, sealed, wikiLog.Path, ""},
		{"a lab that is no site lab", nil, &lab.Lab{Name: "hello"}, "", "it goes with --site NAME or --lab of a site lab"},
		{"no stack", nil, nil, "", "it goes with --site NAME or --lab of a site lab"},
		{"a site without a log", withLogs(), nil, "", "the site's vhost its configuration names no access log file"},
		{"a log refused", withLogs(linkLog), nil, "", "cannot be replayed: /var/log/x/planted\\x1b[2J.log is a symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := vhostLogPath(tc.site, tc.lab)
			if got != tc.want {
				t.Errorf("path %q, want %q", got, tc.want)
			}
			var ue *UsageError
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("err %v, want one saying %q", err, tc.err)
			case err != nil && !errors.As(err, &ue):
				t.Errorf("err %v is not a usage error", err)
			}
		})
	}
}

// TestVhostLogRefusedWithoutSite: the shorthand on a stack that is no
// site is a usage error before anything starts, on every stack command.
func TestVhostLogRefusedWithoutSite(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	want, fix := "--workload-from-log vhost is the site's own access log: it goes with --site NAME or --lab of a site lab", "a file called vhost: ./vhost"
	checkUsageErrors(t, []usageCase{
		{[]string{"tune", "--app", "hello", "--workload-from-log", "vhost"}, want, fix},
		{[]string{"compare", "--docroot", t.TempDir(), "--workload-from-log", "vhost", "default"}, want, fix},
		{[]string{"bench", "--workload-from-log", "vhost", "http://127.0.0.1:1/"}, want, fix},
		{[]string{"tune", "--lab", "nope", "--workload-from-log", "vhost"}, "--lab nope", "phptune lab status"},
	})
}
