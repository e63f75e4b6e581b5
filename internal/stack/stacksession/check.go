package stacksession

import (
	"context"
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/servers/apps"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/traffic/load"
)

// CheckError is a stack or workload a command line names that cannot run,
// with the fix: the command refuses it as a usage error before anything
// starts.
type CheckError struct {
	// Fix says what to do instead ("Try: --workload front, ...").
	Fix string
	Err error
}

func (e *CheckError) Error() string { return e.Err.Error() }

func refuse(fix, format string, args ...any) error {
	return &CheckError{Fix: fix, Err: fmt.Errorf(format, args...)}
}

// CheckStack checks the stack a command would run on, before anything
// starts: the lab exists (labName) or the docroot can be served, and the
// workload can run on it. For a lab it returns the lab and the parsed
// workload; for a lab of its own, which does not exist yet, it checks what
// it can without it. Refusals are *CheckError.
func CheckStack(ctx context.Context, labName, app, docroot, spec string) (*lab.Lab, *workload.Workload, error) {
	if labName != "" {
		l, err := lab.Open(labName)
		if err != nil {
			return nil, nil, refuse("See the running labs with: phptune lab status; start one with: phptune lab up --name "+labName, "--lab %s: %v", labName, err)
		}
		w, err := workload.Parse(ctx, l, spec)
		if err != nil {
			return nil, nil, refuse("Try: --workload front, --workload /path, or a scenario file", "--workload: %v", err)
		}
		return l, &w, nil
	}
	if docroot != "" {
		if err := apps.CheckDocRoot(docroot); err != nil {
			return nil, nil, refuse("Try: --docroot DIR, a directory holding your app's index.php", "%v", err)
		}
		app = "docroot"
	}
	return nil, nil, CheckWorkload(spec, app)
}

// CheckWorkload checks a workload for a lab running app before the lab
// exists: what workload.Parse would refuse without asking the lab.
// Refusals are *CheckError.
func CheckWorkload(spec, app string) error {
	switch {
	case spec == "" || spec == workload.Front || workload.IsPath(spec):
		return nil
	case strings.HasPrefix(spec, workload.LogPrefix) || strings.HasPrefix(spec, workload.LogPostPrefix):
		if _, _, err := workload.FromSpec(spec); err != nil {
			return refuse("Try: --workload-from-log /var/log/nginx/access.log", "--workload-from-log: %v", err)
		}
		return nil
	}
	if need, ok := workload.Builtin(spec); ok {
		if need != "" && app != need {
			return refuse("Try: --app "+need+" --workload "+spec, "--workload %s needs the %s app; the %s app has no such pages", spec, need, app)
		}
		return nil
	}
	fh, err := workload.OpenScenario(spec)
	if err != nil {
		return refuse("Try: --workload front, --workload /path, or a scenario file", "--workload %q is not front, comment, a path starting with / or a readable scenario file: %v", spec, err)
	}
	defer fh.Close()
	if _, err := load.ParseScenario(fh); err != nil {
		return refuse("Each line of a scenario file: WEIGHT METHOD PATH [BODY], e.g. 1 GET /index.php", "--workload %s: %v", spec, err)
	}
	return nil
}
