package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/model/redact"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/report"
)

// compareRunsFlags are compare's flags for stored runs: --runs makes the
// arguments stored bench runs (or bench records' JSON files) instead of
// configurations, --force sets runs side by side that CompareRuns refuses.
type compareRunsFlags struct {
	runs, force bool
}

func (f *compareRunsFlags) add(fl *pflag.FlagSet) {
	fl.BoolVar(&f.runs, "runs", false, "compare stored bench runs instead of measuring: the arguments are RUN IDs (phptune report --list), latest, or bench records' JSON files (phptune import locust --json, report RUN --format json); nothing is started")
	fl.BoolVar(&f.force, "force", false, "with --runs: set runs side by side even when they loaded different targets or workloads or ran different load models")
}

// compareRunsAllowed are the flags that go with --runs.
var compareRunsAllowed = map[string]bool{"runs": true, "force": true, "json": true, "redact": true}

// compareStoredRuns is phptune compare --runs: it reads the runs, sets them
// side by side (report.CompareRuns) and prints the table or, with asJSON,
// the comparison. No stack is started.
func compareStoredRuns(env *Env, c *cobra.Command, args []string, f compareRunsFlags, asJSON bool, names []string) error {
	var other []string
	c.Flags().Visit(func(fl *pflag.Flag) {
		if !compareRunsAllowed[fl.Name] {
			other = append(other, "--"+fl.Name)
		}
	})
	if len(other) > 0 {
		return usageErr("Try: phptune compare --runs RUN_A RUN_B", "--runs compares stored runs and measures nothing: leave %s out", strings.Join(other, ", "))
	}
	if len(args) < 2 {
		return usageErr("Try: phptune compare --runs RUN_A RUN_B (see phptune report --list)", "--runs needs at least two runs to compare, got %d", len(args))
	}
	if err := checkRedactNames(names); err != nil {
		return err
	}
	runs := make([]report.StoredBench, 0, len(args))
	for _, arg := range args {
		r, err := loadComparedRun(env, arg, names)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	cmp, err := report.CompareRuns(runs, f.force)
	var nc *report.NotComparableError
	if errors.As(err, &nc) {
		return usageErr("Compare runs of the same target, workload and load model, or add --force to set them side by side anyway", "%v", err)
	}
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(cmp)
	}
	return report.RunsComparisonText(env.Stdout, cmp)
}

// loadComparedRun reads one --runs argument: a bench record's JSON file
// (a name ending in .json; as root only one no other account could have
// written) or a stored run's ID.
func loadComparedRun(env *Env, arg string, names []string) (report.StoredBench, error) {
	if strings.HasSuffix(arg, ".json") {
		data, err := readTrusted(arg)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return report.StoredBench{}, usageErr("Give a bench record's JSON file (phptune import locust --json, phptune report RUN --format json) or a stored run's ID", "%s does not exist", arg)
			}
			return report.StoredBench{}, err
		}
		var b results.Bench
		dec := json.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(&b); err != nil {
			return report.StoredBench{}, usageErr("Give a bench record's JSON file (phptune import locust --json, phptune report RUN --format json)", "%s is not a bench record: %v", arg, err)
		}
		if b.Kind != results.KindBench {
			return report.StoredBench{}, usageErr("Give a bench record's JSON file (phptune import locust --json, phptune report RUN --format json)", "%s is not a bench record (its kind is %q)", arg, b.Kind)
		}
		if err := redact.Value(&b, names); err != nil {
			return report.StoredBench{}, err
		}
		if b.ID == "" {
			b.ID = arg
		}
		return report.StoredBench{Bench: &b}, nil
	}
	if !store.Exists(resultsDBPath()) {
		return report.StoredBench{}, fmt.Errorf("no results database at %s yet: run phptune bench or phptune import locust first", resultsDBPath())
	}
	db, err := openResults(env.Ctx, names)
	if err != nil {
		return report.StoredBench{}, err
	}
	defer db.Close()
	run, err := findRun(env.Ctx, db, arg)
	if err != nil {
		return report.StoredBench{}, err
	}
	if run.Bench == nil {
		return report.StoredBench{}, usageErr("Give bench runs (phptune report --list shows each run's kind); compare configurations by measuring them: phptune compare CONFIG...", "run %s is a %s run, not a bench record", run.ID, run.Kind)
	}
	return report.StoredBench{Bench: run.Bench, Workload: run.Workload}, nil
}
