package report

import (
	"fmt"
	"io"
	"sort"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/errlog"
)

// TunePHPByBuildText says, when a tune's trials ran more than one PHP
// (php.build: the distro's and a PHP root's 8.4, say), what PHP logged
// under each: fatal errors, warnings and deprecations per 1000 requests
// over every measured trial of that build, and the file most of each
// came from — the compatibility beside the speed its decision line gives.
//
//	PHP's messages by php.build (every measured trial of each):
//	  distro (the distro's PHP, 30 trials): 0 fatal errors, 0 warnings, 0 deprecations per 1000 requests (412345 requests)
//	  debian-8.4 (PHP 8.4.28, 2 trials): 250 fatal errors, ... ; fatal error most from poly.php (...)
func TunePHPByBuildText(w io.Writer, res *results.Tune) {
	type agg struct {
		cc     results.CompareConfig
		trials int
		unread int // trials whose servers' logs were not read
		recs   []*results.PHPErrors
	}
	by := map[string]*agg{}
	for _, t := range res.Trials {
		if t.Bench == nil || t.Bench.Requests == 0 {
			continue
		}
		id := t.Config[knob.BuildKnob]
		if id == "" {
			id = "distro"
		}
		a := by[id]
		if a == nil {
			a = &agg{cc: results.CompareConfig{Label: id, Config: knob.Config{knob.BuildKnob: id}}}
			by[id] = a
		}
		a.trials++
		if t.Bench.ServerErrors == nil {
			a.unread++
			continue
		}
		a.cc.Requests = append(a.cc.Requests, t.Bench.Requests)
		a.cc.RPS = append(a.cc.RPS, t.Bench.ThroughputRPS)
		if t.Bench.ServerErrors.PHP != nil {
			a.recs = append(a.recs, t.Bench.ServerErrors.PHP)
		}
	}
	if len(by) < 2 {
		return
	}
	ids := make([]string, 0, len(by))
	for id := range by {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { // the distro's first
		return ids[i] == "distro" || ids[j] != "distro" && ids[i] < ids[j]
	})
	var builds []results.PHPBuild
	if res.Environment != nil {
		builds = res.Environment.PHPBuilds
	}
	fmt.Fprintln(w, "\nPHP's messages by php.build (every measured trial of each):")
	for _, id := range ids {
		a := by[id]
		if len(a.cc.Requests) == 0 {
			fmt.Fprintf(w, "  %s (%s): not known: the servers' logs of its %d trials were not read\n", termsafe.Line(id), buildName(id, builds), a.trials)
			continue
		}
		a.cc.PHPErrors = errlog.MergePHP(a.recs...)
		noun := "trials"
		if a.trials == 1 {
			noun = "trial"
		}
		unread := ""
		if a.unread > 0 {
			unread = fmt.Sprintf("; %d not counted: its servers' logs were not read", a.unread)
		}
		fmt.Fprintf(w, "  %s (%s, %d %s%s): %s\n", termsafe.Line(id), buildName(id, builds), a.trials, noun, unread, phpRates(a.cc))
	}
	fmt.Fprintln(w, "  "+PHPLogCaveat)
}
