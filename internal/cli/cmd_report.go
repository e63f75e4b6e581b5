package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/model/outdir"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/model/store"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/stack/lab"
)

func init() { register(newReportCmd) }

func newReportCmd(env *Env) *cobra.Command {
	var format, out string
	var list bool
	cmd := &cobra.Command{
		Use:   "report [RUN|latest]",
		Short: "Render a stored bench, tune, capacity or servers run as HTML, JSON or text",
		Long: `phptune report renders any run stored in the results database again, from
its raw results: an HTML file that works offline (charts embedded, no network
request), the JSON result (schema: docs/results-schema.md), or a text summary.

Without -o, html goes to ./phptune-report-RUN.html and json and text to the
terminal. --list shows the stored runs.`,
		Example: `  phptune report --list
  phptune report latest
  phptune report 20261123-071502 --format text
  phptune report 20261123-071502 --format json -o run.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if format != "html" && format != "json" && format != "text" {
				return usageErr("Try: --format html", "--format %q: choose html, json or text", format)
			}
			if !list && len(args) == 0 {
				return usageErr("Try: phptune report --list, then phptune report RUN", "name the run to render (or latest)")
			}
			if !store.Exists(resultsDBPath()) {
				return fmt.Errorf("no results database at %s yet: run phptune bench or phptune tune first", resultsDBPath())
			}
			db, err := store.Open(env.Ctx, resultsDBPath())
			if err != nil {
				return err
			}
			defer db.Close()
			if list {
				return listRuns(env, db)
			}
			run, err := findRun(env.Ctx, db, args[0])
			if err != nil {
				return err
			}
			r := report.Run{Tune: run.Result, Bench: run.Bench, Capacity: run.Capacity, Servers: run.Servers, Secrets: lab.Passwords(), RedactNames: run.Redact}
			if r.Tune == nil && r.Bench == nil && r.Capacity == nil && r.Servers == nil {
				return fmt.Errorf("run %s has no result yet (status %s); continue it with: phptune tune --resume %s", run.ID, run.Status, run.ID)
			}
			if out == "" && format == "html" {
				out = "phptune-report-" + run.ID + ".html"
			}
			if out == "" {
				return report.Render(env.Stdout, format, r)
			}
			if err := writeReport(out, format, r); err != nil {
				return err
			}
			abs, _ := filepath.Abs(out)
			fmt.Fprintln(env.Stdout, abs)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "html", "html, json or text")
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (default: ./phptune-report-RUN.html for html, the terminal otherwise)")
	cmd.Flags().BoolVar(&list, "list", false, "list the stored runs")
	return cmd
}

// findRun returns a run by ID, or for "latest" the newest run that has a
// result.
func findRun(ctx context.Context, db *store.DB, id string) (*store.Run, error) {
	if id == "latest" {
		runs, err := db.Runs(ctx)
		if err != nil {
			return nil, err
		}
		for i := range runs { // newest first; skip runs still going or interrupted
			if runs[i].Result != nil || runs[i].Bench != nil || runs[i].Capacity != nil || runs[i].Servers != nil {
				return &runs[i], nil
			}
		}
		if len(runs) > 0 {
			return nil, fmt.Errorf("no stored run has a result yet (%s is %s): see phptune report --list", runs[0].ID, runs[0].Status)
		}
		return nil, errors.New("no runs stored yet: run phptune bench or phptune tune first")
	}
	r, err := db.Run(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, usageErr("See the stored runs with: phptune report --list", "no stored run %q", id)
	}
	return r, err
}

func listRuns(env *Env, db *store.DB) error {
	runs, err := db.Runs(env.Ctx)
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		fmt.Fprintln(env.Stdout, "no runs stored yet")
		return nil
	}
	fmt.Fprintf(env.Stdout, "%-28s %-8s %-12s %-10s %-14s %s\n", "RUN", "KIND", "STATUS", "APP", "WORKLOAD", "RESULT")
	for _, r := range runs {
		res := ""
		switch {
		case r.Result != nil && r.Result.Holdout != nil:
			v := r.Result.TheVerdict()
			res = fmt.Sprintf("%s: %.2f× [%.2f, %.2f] on %s", v.Outcome, v.Ratio, v.CILow, v.CIHigh, v.Statistic)
		case r.Bench != nil:
			res = fmt.Sprintf("%.1f rps, p99 %.1f ms", r.Bench.ThroughputRPS, r.Bench.Latency.P99Ms)
		case r.Capacity != nil:
			res = fmt.Sprintf("capacity %g rps at %s (%s)", r.Capacity.CapacityRPS, r.Capacity.SLO, r.Capacity.Outcome)
		case r.Servers != nil && r.Servers.Best != "":
			res = fmt.Sprintf("best %s of %d configurations", r.Servers.Best, len(r.Servers.Configs))
		}
		fmt.Fprintf(env.Stdout, "%-28s %-8s %-12s %-10s %-14s %s\n", r.ID, r.Kind, r.Status, r.App, trim(r.Workload, 14), res)
	}
	return nil
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// saveBenchRun stores a bench result in the results database and writes
// its report next to the working directory; it returns the report's path.
// names are the --redact names (the store and the report redact with them).
func saveBenchRun(ctx context.Context, b *results.Bench, app, path, out string, names []string) (string, error) {
	save := func(db *store.DB) error { return db.SaveBench(ctx, b, app, path) }
	return saveRun(ctx, names, save, out, b.ID, report.Run{Bench: b})
}

// saveRun stores a run in the results database with save, then writes r,
// its HTML report, to out (phptune-report-ID.html when ""), redacted with
// names and the labs' passwords; it returns the report's path.
func saveRun(ctx context.Context, names []string, save func(*store.DB) error, out, id string, r report.Run) (string, error) {
	db, err := openResults(ctx, names)
	if err != nil {
		return "", err
	}
	defer db.Close()
	if err := save(db); err != nil {
		return "", err
	}
	if out == "" {
		out = "phptune-report-" + strings.ReplaceAll(id, "/", "-") + ".html"
	}
	r.Secrets, r.RedactNames = lab.Passwords(), names
	if err := writeReport(out, "html", r); err != nil {
		return "", err
	}
	return filepath.Abs(out)
}

// writeReport renders r in format to the file out (outdir.WriteFile: a
// link planted under the name is replaced, never followed; a file of
// another account's is refused).
func writeReport(out, format string, r report.Run) error {
	var b bytes.Buffer
	if err := report.Render(&b, format, r); err != nil {
		return err
	}
	err := outdir.WriteFile(out, b.Bytes())
	var re *outdir.RefusedError
	if errors.As(err, &re) {
		return usageErr("Try: -o FILE naming a new file in a directory you can write", "-o %v", err)
	}
	return err
}
