package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/base/termsafe"
	"github.com/phptune/phptune/internal/sitecopy/site"
)

// flagUnsealedProduction lets a --docroot lab serve a live site's own
// document root in place.
const flagUnsealedProduction = "unsealed-production"

const unsealedProductionHelp = "with --docroot: serve a directory that is, holds or lies inside a live site's document root in place anyway (its code then runs unsealed against the database its configuration names, production's; a warning says so on every run); without it such a --docroot is refused: use --site"

func addUnsealedProductionFlag(fl *pflag.FlagSet, p *bool) {
	fl.BoolVar(p, flagUnsealedProduction, false, unsealedProductionHelp)
}

// checkLiveDocroot refuses a --docroot that is, contains or lies inside
// the document root of a live site of this host (a vhost of the running
// nginx, an Apache DocumentRoot, a running php-fpm pool's chdir or
// doc_root: site.LiveRoots): a --docroot lab runs
// that code in place and unsealed, so it would reach production's
// database, caches and files. command names the command for the hint;
// unsealed (--unsealed-production) turns the refusal into a warning on
// stderr. Not as root, the host's nginx configuration may be unreadable:
// the check is then as good as what can be read.
func checkLiveDocroot(dir, command string, unsealed bool) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil // the docroot's own check names the problem
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	roots, err := site.LiveRoots(ctx, site.Host{})
	if err != nil {
		if os.Geteuid() != 0 {
			return nil
		}
		return fmt.Errorf("--docroot %s: checking it against this host's live sites: %w", abs, err)
	}
	hits := site.Overlapping(roots, abs)
	if len(hits) == 0 {
		return nil
	}
	h := hits[0]
	relation := "is"
	switch {
	case abs == h.Dir:
	case len(abs) > len(h.Dir):
		relation = "lies inside"
	default:
		relation = "holds"
	}
	what := fmt.Sprintf("%q %s the document root of the live site %s (%s)", abs, relation, h.Site, h.Where)
	if h.Pool != "" {
		dir := h.Dir + ", "
		if abs == h.Dir {
			dir = ""
		}
		what = fmt.Sprintf("%q %s %sthe directory the live php-fpm pool %s serves code from (%s)", abs, relation, dir, h.Pool, h.Where)
	}
	if len(hits) > 1 {
		what += fmt.Sprintf(" and of %d more", len(hits)-1)
	}
	if unsealed {
		fmt.Fprintf(os.Stderr, "warning: --%s: %s: its code runs in place, unsealed, against the database its configuration names (production's)\n", flagUnsealedProduction, termsafe.Text(what))
		return nil
	}
	return usageErr(fmt.Sprintf("Try: phptune %s --site %s (a sealed copy, with a copy of its database); to serve it in place anyway, add --%s", command, h.Site, flagUnsealedProduction),
		"--docroot: %s: a --docroot lab would run that code in place, unsealed, against the database its configuration names (production's)", what)
}
