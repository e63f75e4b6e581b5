package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/servers/mariadb"
)

// Apply restarts the lab's servers with cfg (the tuner's trial step); a
// change of the server knob stops one web server and starts the other
// (and php-fpm only where cfg runs it). MariaDB
// restarts only when one of its knobs changes. Invalid configurations are
// refused before anything stops. The lab is locked and marked "restarting"
// (with this process as its owner) while its servers are down, so a
// concurrent `lab status` shows it as such and never reaps it.
func (l *Lab) Apply(ctx context.Context, cfg knob.Config) error {
	return l.apply(ctx, cfg, "", false)
}

// apply is Apply; with setProfiler it also turns the PHP sampler to
// profiler (see SetPHPProfiler), after the lab's state is read again.
func (l *Lab) apply(ctx context.Context, cfg knob.Config, profiler string, setProfiler bool) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if l.Sealed() {
		// A site lab runs only the servers it can seal (nginx, Apache).
		if err := sitePlanChecks(cfg); err != nil {
			return err
		}
	}
	if err := raiseOpenFiles(cfg); err != nil {
		return err
	}
	fpmBin, _, err := phpFor(cfg)
	if err != nil {
		return err
	}
	web, webBin, err := webFor(cfg)
	if err != nil {
		return err
	}
	acct, err := l.account()
	if err != nil {
		return err
	}
	unlock, err := l.lockFresh()
	if err != nil {
		return err
	}
	defer unlock()
	dbChanged := false
	for _, ch := range knob.Diff(l.Config, cfg) {
		// A lab without MariaDB (hello, strings...) has none to restart:
		// the search raises mariadb.max_connections with a large pool.
		if k, _ := knob.Lookup(ch.Knob); k.Component == knob.MariaDB && l.MariaDBSocket != "" {
			dbChanged = true
		}
	}
	old, oldProfiler := l.Config, l.PHPProfiler
	l.Config = cfg.Clone()
	if setProfiler {
		l.PHPProfiler = profiler
	}
	if err := l.render(acct); err != nil {
		l.Config, l.PHPProfiler = old, oldProfiler
		return err
	}
	if err := l.testConfigs(ctx, acct, fpmBin, web, webBin); err != nil {
		l.Config, l.PHPProfiler = old, oldProfiler
		_ = l.render(acct)
		return err
	}
	ownerPID, ownerStart := l.OwnerPID, l.OwnerStart
	l.State, l.OwnerPID, l.OwnerStart = "restarting", os.Getpid(), startTime(os.Getpid())
	if err := l.writeState(); err != nil {
		return err
	}
	// Whichever web server runs stops (the server knob may switch it
	// between trials), and php-fpm; the new configuration's start.
	stop := append(append([]string(nil), webComponents...), "php-fpm")
	if dbChanged {
		stop = append(stop, "mariadb")
	}
	if err := l.stopComponents(stop...); err != nil {
		return err
	}
	if dbChanged {
		dbBin, err := mariadb.Find()
		if err != nil {
			return err
		}
		s, err := l.ReadSecrets()
		if err != nil {
			return err
		}
		dbAcct, err := l.dbAccount()
		if err != nil {
			return err
		}
		if err := l.startMariaDB(ctx, dbAcct, dbBin, "root", s.MariaDBRootPassword); err != nil {
			return err
		}
	}
	if knob.RunsFPM(cfg.Server()) {
		if err := l.startFPM(ctx, acct, fpmBin); err != nil {
			return err
		}
	}
	if err := l.startWeb(ctx, acct, web, webBin); err != nil {
		return err
	}
	// Up again, whatever an earlier restart that failed halfway left: the
	// owner is the lab's own (a tune's), or none.
	l.State = "up"
	if l.OwnedBy == "" {
		ownerPID, ownerStart = 0, 0
	}
	l.OwnerPID, l.OwnerStart = ownerPID, ownerStart
	return l.writeState()
}

// stopComponents stops the named components' process groups and forgets them.
func (l *Lab) stopComponents(names ...string) error {
	var stop []Process
	keep := l.Processes[:0]
	for _, p := range l.Processes {
		match := false
		for _, n := range names {
			match = match || p.Component == n
		}
		if match {
			stop = append(stop, p)
		} else {
			keep = append(keep, p)
		}
	}
	// Only the recorded groups: the lab's other servers keep running.
	o := l.owner()
	o.dir = ""
	if left := killAll(o, stop, 15*time.Second); len(left) > 0 {
		l.Processes = append(keep, stop...)
		return fmt.Errorf("processes %v did not stop", left)
	}
	l.Processes = keep
	return l.writeState()
}

// smoke fetches the front page once and records its status, size and
// title: a stack that starts but cannot serve its app is a failed lab, not
// an "up" one. An app that could not write its own files says how to run
// the pool as the account that owns them.
func (l *Lab) smoke(ctx context.Context) error {
	p, err := l.FetchPage(ctx, "/")
	if err != nil {
		return err
	}
	l.FrontPage = &p
	if p.Status < 400 {
		return nil
	}
	msg := fmt.Sprintf("the app's front page %s answered %d: %.300s", p.URL, p.Status, termsafe.Text(strings.TrimSpace(p.Body)))
	phpLogs := "php-fpm"
	switch l.Config.Server() {
	case knob.ApachePreforkModPHP:
		phpLogs = "apache" // PHP runs inside Apache
	case knob.UnitPHP:
		phpLogs = "unit" // PHP runs in Unit's application processes
	}
	logs, _ := l.Logs(phpLogs, 20)
	if line := lastPHPError(logs); line != "" {
		msg += "\nPHP's log says: " + termsafe.Text(line)
	}
	if l.User == StackUser && (strings.Contains(p.Body, "Permission denied") || strings.Contains(logs, "Permission denied")) {
		msg += fmt.Sprintf("\nthe app could not open its own files as the lab's account %q; if they belong to the app's account (for example www-data), run the lab as it: --user www-data (root only; the app then runs with that account's rights)", l.User)
	}
	return errors.New(msg)
}

// lastPHPError is the last line of logs in which PHP reports an error
// (fatal, parse, warning, uncaught exception), trimmed to 500 bytes; ""
// when there is none.
func lastPHPError(logs string) string {
	lines := strings.Split(logs, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		for _, mark := range []string{"PHP Fatal error", "PHP Parse error", "PHP Warning", "Uncaught ", "PHP Recoverable fatal error"} {
			if strings.Contains(l, mark) {
				if len(l) > 500 {
					l = l[:500]
				}
				return l
			}
		}
	}
	return ""
}
