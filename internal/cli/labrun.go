package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/lab"
	"github.com/phptune/phptune/internal/labstack"
	"github.com/phptune/phptune/internal/pagecheck"
)

// What tune and compare do alike around a lab they measure.

// restoreLab puts a running lab (--lab) back to the configuration it had
// before the run, however the run ended.
func restoreLab(ctx context.Context, l *lab.Lab, cfg knob.Config, say func(string, ...any)) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := l.Apply(rctx, cfg); err != nil {
		say("restoring lab %s's configuration: %v", l.Name, err)
	} else {
		say("lab %s runs its starting configuration again", l.Name)
	}
}

// checkStartPage shows the page a run is about before anything is measured
// and warns when it reads like an error page (an error page answered with
// 200 would otherwise be measured); later trials compare with it. A page
// that answers a redirect or an error status (labstack.StartPageRefusal) is
// a usage error: the run would measure nothing real.
func checkStartPage(ctx context.Context, env *Env, stack *labstack.Stack, say func(string, ...any)) error {
	p, err := stack.CheckPage(ctx)
	if err != nil {
		say("checking the page: %v", err)
		return nil
	}
	say("page: %s", p)
	if why := labstack.StartPageRefusal(p, stack.Workload); why != "" {
		return usageErr("Fix: "+labstack.StartPageFixes+".", "%s", why)
	}
	stack.FirstPage = &p
	for _, warn := range labstack.PageWarnings(pagecheck.Page{}, p) {
		fmt.Fprintln(env.Stderr, "warning:", warn)
	}
	return nil
}
