package stacksession

import (
	"context"

	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/traffic/pagecheck"
)

// StartPage is the page a run is about, read before anything is measured.
type StartPage struct {
	// Page is what the workload's first request answered.
	Page pagecheck.Page
	// Refusal, when not empty, says why the run would measure nothing real
	// (a redirect or an error status; labstack.StartPageRefusal): the
	// command refuses to run, with labstack.StartPageFixes as the fix.
	Refusal string
	// Warnings say where the page reads like an error page answered
	// with 200.
	Warnings []string
}

// CheckStartPage reads the page stack's workload is about and judges it.
// Unless it is refused, the stack keeps it (Stack.FirstPage) for later
// trials to compare with. An error is a page that could not be read,
// which the command reports and goes on from.
func CheckStartPage(ctx context.Context, stack *labstack.Stack) (StartPage, error) {
	p, err := stack.CheckPage(ctx)
	if err != nil {
		return StartPage{}, err
	}
	sp := StartPage{Page: p, Refusal: labstack.StartPageRefusal(p, stack.Workload)}
	if sp.Refusal != "" {
		return sp, nil
	}
	stack.FirstPage = &p
	sp.Warnings = labstack.PageWarnings(pagecheck.Page{}, p)
	return sp, nil
}
