package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/base/shellquote"
	"github.com/phptune/phptune/internal/model/redact"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/traffic/locust"
)

func init() { register(newImportCmd) }

func newImportCmd(env *Env) *cobra.Command {
	return groupCmd("import", "Store a run made by another tool as a bench record: Locust's statistics",
		usageErr("Try: phptune import locust stats.json", "import needs what to read: locust"),
		newImportLocustCmd(env))
}

func newImportLocustCmd(env *Env) *cobra.Command {
	var target string
	var users int
	var asJSON, noSave bool
	var names []string
	cmd := &cobra.Command{
		Use:   "locust STATS.json | CSV-PREFIX",
		Short: "Store a Locust run's statistics as a bench record (then report, compare)",
		Long: `phptune import locust reads a Locust run made elsewhere and stores it in the
results database as a bench record (engine: locust), with an HTML report,
so that phptune report shows it and phptune compare sets it against a run of
phptune's own generator.

It reads Locust's JSON statistics (locust --json > stats.json, or
--json-file stats), or its CSV files given by their prefix (locust --csv run:
run_stats.csv and run_failures.csv). The JSON has response-time buckets but no
failure messages: failures count as locust_failure unless the CSV's failures
file is beside it. Failures of a locustfile phptune export locust wrote carry
phptune's error classes and their status (status_5xx (status 502),
read_timeout (status 0)). Locust's statistics count no status codes: the
record has those the failure messages name, and says that the successful
requests' are not known (a run of phptune bench --engine locust counts them
all). Latencies are Locust's rounded buckets, timed from each send.`,
		Example: `  locust -f load/locustfile.py --headless -u 4 -t 30s --host http://10.0.0.5 --json > stats.json
  phptune import locust stats.json --target http://10.0.0.5/ --users 4
  phptune import locust run     # run_stats.csv and run_failures.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkRedactNames(names); err != nil {
				return err
			}
			res, err := readLocustStats(args[0])
			if err != nil {
				return err
			}
			b := locust.Bench(res, locust.Meta{Target: target, Users: users, KeepAlive: true,
				Command: "phptune " + shellquote.Join(redact.Args(env.Args, names))})
			if b.Requests == 0 {
				return usageErr("Give the statistics of a run that sent requests", "%s holds no request", args[0])
			}
			if b.Target == "" {
				b.Target = "(imported from Locust)"
			}
			started := b.StartedAt
			if started.IsZero() {
				// CSV statistics have no timestamps: the run is named by
				// when it was imported.
				started = time.Now().UTC()
				b.Warnings = append(b.Warnings, "the run's start time is not known: Locust's CSV statistics have no timestamps (its JSON statistics do)")
			}
			b.ID = fmt.Sprintf("bench-%s-%d", started.Format("20060102T150405"), os.Getpid())
			b.Warnings = append(b.Warnings, "imported from Locust's statistics ("+args[0]+"): made elsewhere, so no observation of the stack and no generator cost")
			if err := redact.Value(b, names); err != nil {
				return err
			}
			if !noSave {
				path, serr := saveBenchRun(context.WithoutCancel(env.Ctx), b, "", "", "", names)
				if serr != nil {
					return fmt.Errorf("saving the imported run: %v", serr)
				}
				fmt.Fprintf(env.Stderr, "import: stored as run %s; report: %s\n", b.ID, path)
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(b)
			}
			return report.BenchText(env.Stdout, b)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&target, "target", "", "the URL the run loaded, for the record (Locust's statistics do not say)")
	fl.IntVar(&users, "users", 0, "the run's Locust users (-u), for the record")
	fl.BoolVar(&asJSON, "json", false, "write the record as JSON to stdout")
	fl.BoolVar(&noSave, "no-save", false, "do not store the record nor write its report")
	addRedactFlag(fl, &names)
	return cmd
}

// readLocustStats reads a JSON statistics file, phptune's own result
// document, or a CSV prefix's files; as root only files no other account
// could have written (readTrusted).
func readLocustStats(arg string) (*locust.Result, error) {
	if data, err := readTrusted(arg); err == nil {
		if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
			return locust.ParseResult(bytes.NewReader(data))
		}
		res, err := locust.ParseStatsJSON(data)
		if err != nil {
			return nil, usageErr("Give Locust's --json output or a --csv prefix", "%s: %v", arg, err)
		}
		// The failures of the same run, when its CSV files are beside it.
		prefix := strings.TrimSuffix(arg, ".json")
		if fdata, ferr := readTrusted(prefix + "_failures.csv"); ferr == nil {
			if res.Errors, err = locust.ParseFailuresCSV(bytes.NewReader(fdata)); err != nil {
				return nil, usageErr("Give Locust's --json output or a --csv prefix", "%s_failures.csv: %v", prefix, err)
			}
		}
		return res, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	stats, err := readTrusted(arg + "_stats.csv")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, usageErr("Give Locust's --json output (stats.json) or the prefix of its --csv files (run for run_stats.csv)", "neither %s nor %s_stats.csv exists", arg, arg)
		}
		return nil, err
	}
	var res *locust.Result
	if fdata, ferr := readTrusted(arg + "_failures.csv"); ferr == nil {
		res, err = locust.ParseCSV(bytes.NewReader(stats), bytes.NewReader(fdata))
	} else {
		res, err = locust.ParseCSV(bytes.NewReader(stats), nil)
	}
	if err != nil {
		return nil, usageErr("Give the prefix of Locust's --csv files", "%s_stats.csv: %v", arg, err)
	}
	return res, nil
}
