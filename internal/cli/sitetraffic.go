package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/phptune/phptune/internal/base/shellquote"
	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/sitecopy/site"
	"github.com/phptune/phptune/internal/stack/lab"
)

// The site's own traffic: the access log production's vhost writes,
// offered as the workload of a site lab. lab up --site names it with the
// command that replays it, tune says so before it measures the front
// page instead, and --workload-from-log vhost stands for it.

// vhostLog is --workload-from-log's shorthand for the site's own access
// log (a file called vhost is ./vhost).
const vhostLog = "vhost"

// siteReplayLog picks the access log of logs that can be replayed on
// this host (site.Host.ReplayLog on siteHost); tests replace it.
var siteReplayLog = func(logs []site.AccessLog) (site.AccessLog, error) { return siteHost.ReplayLog(logs) }

// hostPath is p, a path on the site's host, as this process opens it
// (under siteHost's root in tests).
func hostPath(p string) string {
	if siteHost.Root == "" || siteHost.Root == "/" {
		return p
	}
	return filepath.Join(siteHost.Root, p)
}

// logLabel is "PATH (FORMAT)", with ", shared with other vhosts" for a
// server level's log, for messages.
func logLabel(l site.AccessLog) string {
	shared := ""
	if l.Shared {
		shared = "; the server level's, which other vhosts write too"
	}
	return fmt.Sprintf("%s (%s%s)", termsafe.Text(l.Path), termsafe.Text(l.Format), shared)
}

// siteTrafficLine is the line of lab up --site's summary about
// production's traffic: the vhost's access log and the command that
// replays it on lab labName, or why none is offered.
func siteTrafficLine(labName string, logs []site.AccessLog) string {
	l, err := siteReplayLog(logs)
	switch {
	case errors.Is(err, site.ErrNoAccessLog):
		return "traffic:    production's vhost " + err.Error() + ": replay a log of yours with phptune tune --lab " + labName + " --workload-from-log FILE"
	case err != nil:
		return fmt.Sprintf("traffic:    production's access log %s is not offered: %s", logLabel(l), termsafe.Text(err.Error()))
	}
	return fmt.Sprintf("traffic:    production's access log %s: phptune tune --lab %s --workload-from-log %s", logLabel(l), labName, shellquote.Quote(termsafe.Text(hostPath(l.Path))))
}

// siteLogHint is what tune says, before it measures, when a site's lab
// is measured without a workload flag: the vhost's access log holds
// production's traffic and how to replay it, or why it cannot be; ""
// when the vhost names none.
func siteLogHint(logs []site.AccessLog) string {
	l, err := siteReplayLog(logs)
	switch {
	case errors.Is(err, site.ErrNoAccessLog):
		return ""
	case err != nil:
		return fmt.Sprintf("the site's access log %s is not offered as the workload: %s; measuring --workload front (GET /)", logLabel(l), termsafe.Text(err.Error()))
	}
	return fmt.Sprintf("the site's access log %s holds production's traffic; this run measures --workload front (GET /) only: replay production's with --workload-from-log %s (or --workload-from-log %s)",
		logLabel(l), shellquote.Quote(termsafe.Text(hostPath(l.Path))), vhostLog)
}

// siteLogs are the access logs of the site measured: --site's vhost's,
// or a site lab's recorded ones (nil for any other stack).
func siteLogs(s *siteLab, l *lab.Lab) ([]site.AccessLog, bool) {
	switch {
	case s != nil:
		return s.site.Vhost.AccessLogs, true
	case l != nil && l.Sealed():
		return l.SiteAccessLogs, true
	}
	return nil, false
}

// vhostLogPath resolves --workload-from-log vhost: the access log of the
// site measured (siteLogs) that can be replayed, as this process opens
// it, or a usage error saying why there is none.
func vhostLogPath(s *siteLab, l *lab.Lab) (string, error) {
	logs, ok := siteLogs(s, l)
	if !ok {
		return "", errVhostLogStack()
	}
	lg, err := siteReplayLog(logs)
	if errors.Is(err, site.ErrNoAccessLog) {
		return "", usageErr("Give an access log: --workload-from-log FILE", "--workload-from-log %s: the site's vhost %s", vhostLog, err)
	}
	if err != nil {
		return "", usageErr("Give an access log you trust: --workload-from-log FILE", "--workload-from-log %s: the site's access log %s cannot be replayed: %s", vhostLog, logLabel(lg), termsafe.Text(err.Error()))
	}
	return hostPath(lg.Path), nil
}

// errVhostLogStack refuses --workload-from-log vhost without a site.
func errVhostLogStack() error {
	return usageErr("Give the log's path: --workload-from-log FILE (a file called vhost: ./vhost)",
		"--workload-from-log %s is the site's own access log: it goes with --site NAME or --lab of a site lab (lab up --site)", vhostLog)
}
