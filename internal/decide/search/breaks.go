package search

import (
	"fmt"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/errlog"
)

// Breaks says why a challenger's run shows that its configuration breaks
// the site, against the incumbent's run of the same round, whatever its
// speed: PHP logged fatal errors in it that the incumbent's run did not
// (from a file, or with a message, the incumbent's fatal errors do not
// have), or its page answered another status or title than the run's
// first check while the incumbent's did not. "" when neither (or when
// either run is missing). A newer PHP (php.build) that a site's code no
// longer runs on is rejected here even when the failing page is too small
// a share of the traffic to break the error-rate limit, or when PHP's
// fatal error came after the page had answered 200.
func Breaks(inc, own *results.Bench) string {
	if inc == nil || own == nil {
		return ""
	}
	if n, first := newFatals(phpErrors(inc), phpErrors(own)); n > 0 {
		return fmt.Sprintf("%d fatal PHP %s in its trial that the incumbent's did not log, first: %s", n, plural(n, "error", "errors"), first)
	}
	if own.PageDrift != "" && inc.PageDrift == "" {
		return "its page is not the site's: " + termsafe.Line(own.PageDrift)
	}
	return ""
}

func phpErrors(b *results.Bench) *results.PHPErrors {
	if b.ServerErrors == nil {
		return nil
	}
	return b.ServerErrors.PHP
}

// newFatals counts own's fatal errors whose file and message inc's have
// not, and says the first: "Uncaught Error: Call to undefined function
// f() in page.php".
func newFatals(inc, own *results.PHPErrors) (int64, string) {
	seen := map[[2]string]bool{}
	for _, f := range fatalFiles(inc) {
		seen[[2]string{f.File, f.Example}] = true
	}
	var n int64
	var first string
	for _, f := range fatalFiles(own) {
		if seen[[2]string{f.File, f.Example}] {
			continue
		}
		n += f.Count
		if first == "" {
			first = termsafe.Line(f.Example)
			if f.File != "" {
				first += " in " + termsafe.Line(f.File)
			}
		}
	}
	return n, first
}

func fatalFiles(p *results.PHPErrors) []results.PHPErrorFile {
	if p == nil {
		return nil
	}
	for _, c := range p.Classes {
		if c.Class == errlog.PHPFatal {
			return c.Files
		}
	}
	return nil
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
