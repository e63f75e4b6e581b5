package cli

import (
	"context"
	"fmt"

	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/stack/stacksession"
)

// What tune and compare do alike around a lab they measure.

// checkStartPage shows the page a run is about before anything is measured
// and warns when it reads like an error page (an error page answered with
// 200 would otherwise be measured); later trials compare with it. A page
// that answers a redirect or an error status (labstack.StartPageRefusal) is
// a usage error: the run would measure nothing real.
func checkStartPage(ctx context.Context, env *Env, stack *labstack.Stack, say func(string, ...any)) error {
	sp, err := stacksession.CheckStartPage(ctx, stack)
	if err != nil {
		say("checking the page: %v", err)
		return nil
	}
	say("page: %s", sp.Page)
	if sp.Refusal != "" {
		return usageErr("Fix: "+labstack.StartPageFixes+".", "%s", sp.Refusal)
	}
	for _, warn := range sp.Warnings {
		fmt.Fprintln(env.Stderr, "warning:", warn)
	}
	return nil
}
