package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/phptune/phptune/internal/live/livehost"
	"github.com/phptune/phptune/internal/live/recommend"
	"github.com/phptune/phptune/internal/model/knob"
)

// printApplyPlan writes what apply will do: each file's diff, php-fpm's
// checks, reload and health checks, the grace transaction first, nginx's
// part, MariaDB's, and what is left to do by hand.
func printApplyPlan(w io.Writer, live *livehost.LiveFPM, p *livehost.ApplyPlan, f *applyFlags) {
	printFPMPlan(w, live, p, f)
	printGrace(w, p.Grace)
	printNginxPlan(w, p, f.root)
	if p.DB != nil {
		printMariaDBPlan(w, p.DB, p.Settings)
	}
	printManual(w, f.rec, p.NginxHandled)
}

// printFPMPlan writes each file's diff and php-fpm's part of the plan.
func printFPMPlan(w io.Writer, live *livehost.LiveFPM, p *livehost.ApplyPlan, f *applyFlags) {
	fmt.Fprintf(w, "php-fpm %s, master of %s, pool %s (%s)\n", live.Bin.Version, live.FPM.Conf, live.Pool.Name, live.Pool.Listen)
	fmt.Fprint(w, p.Diff())
	if len(p.Plan.Steps) == 0 || p.Plan.Steps[0].Name != "php-fpm" {
		return // nothing of php-fpm's changes
	}
	reload := "SIGUSR2 to php-fpm's master of " + live.FPM.Conf + " (found in /proc, owned by root)"
	if live.FPM.Systemd != "" {
		reload = "systemctl reload-or-restart " + live.FPM.Systemd
	}
	fmt.Fprintf(w, "Plan: save the files' previous state; write them; %s -t; %s; wait %v; ", live.Bin.Path, reload, f.settle)
	if live.Pool.StatusPath != "" {
		fmt.Fprintf(w, "read pool %s's status page %s", live.Pool.Name, live.Pool.StatusPath)
	} else {
		fmt.Fprintf(w, "connect to pool %s (pm.status_path is off in it: set pm.status_path = /status for a real health check)", live.Pool.Name)
	}
	if f.checkURL != "" {
		fmt.Fprintf(w, "; GET %s", f.checkURL)
		if f.checkHost != "" {
			fmt.Fprintf(w, " (Host: %s)", f.checkHost)
		}
	}
	fmt.Fprintln(w, "; on any failure, put every file back and reload.")
}

// printManual prints the recommendation's settings apply does not write
// (handled: the nginx knobs apply wrote or printed a patch for).
func printManual(w io.Writer, rec knob.Config, handled map[string]bool) {
	var web []string
	for _, ch := range knob.Diff(knob.Defaults(), rec) {
		k, _ := knob.Lookup(ch.Knob)
		if k.Component != knob.PHPFPM && k.Component != knob.PHP && k.Component != knob.Server && k.Component != knob.Build && k.Component != knob.MariaDB && !handled[ch.Knob] {
			web = append(web, ch.Knob+"="+ch.To)
		}
	}
	if len(web) == 0 {
		return
	}
	fmt.Fprintf(w, "Not applied (%s): the web server's settings apply writes only for a running nginx it read (a drop-in or a patch; an upstream's keepalive not at all); merge these by hand:\n", strings.Join(web, " "))
	files := recommend.Files(knob.Defaults(), rec, recommend.Target{})
	for _, name := range []string{recommend.WebFile(rec.Server())} {
		if b, ok := files[name]; ok {
			fmt.Fprintf(w, "--- %s\n%s", name, b)
		}
	}
}

// stdinIsTerminal says whether apply can ask (a variable for tests).
var stdinIsTerminal = func() bool { return term.IsTerminal(int(os.Stdin.Fd())) }

// confirm asks on the terminal before command (apply, rollback) changes
// a live host; without a terminal it refuses.
func confirm(env *Env, command, prompt string) (bool, error) {
	if !stdinIsTerminal() {
		fix := "Add --yes to " + command + " without asking"
		if command == "apply" {
			fix += ", or --dry-run to see the plan"
		}
		return false, usageErr(fix, "%s asks before changing a live host, and standard input is not a terminal", command)
	}
	fmt.Fprint(env.Stderr, prompt)
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(line)), "y"), nil
}
