package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/traffic/locust"
)

func newExportLocustCmd(env *Env) *cobra.Command {
	var f benchFlags
	var replicas int
	cmd := &cobra.Command{
		Use:     "locust DIR [TARGET]",
		Short:   "Write a Locust locustfile, README, Kubernetes manifest and compose file for a workload",
		Long:    exportLocustLong(),
		Example: exportLocustExample,
		Args:    cobra.RangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			f.durationSet = c.Flags().Changed("duration")
			f.methodSet = c.Flags().Changed("method")
			f.noObserve = true
			if err := checkRedactNames(f.redact); err != nil {
				return err
			}
			opt, err := f.options(env.Ctx, args[1:], c.Flags().Changed("app-path"), lab.Open)
			if err != nil {
				return err
			}
			if err := locust.Check(opt); err != nil {
				return usageErr("Try: phptune export locust --help", "%v", err)
			}
			if replicas < 1 {
				return usageErr("Try: --replicas 2", "--replicas %d: need at least one worker", replicas)
			}
			w := locust.WorkloadOf(opt, f.redact)
			lf, err := locust.Generate(w)
			if err != nil {
				return err
			}
			source := "a page of " + opt.Target.Display
			switch {
			case f.stack.workload != "":
				source = "the " + f.stack.workload + " workload of lab " + f.stack.lab
			case f.scenario != "":
				source = "a scenario file"
			case f.stack.fromLog != "":
				source = "the top paths of an access log"
			}
			files := locust.Export(lf, locust.ExportOptions{Host: "http://" + opt.Target.Address, Users: opt.Connections,
				Duration: opt.Duration, Replicas: replicas, Source: source})
			if err := writeNewDir(args[0], files); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "Wrote locustfile.py, README.md, kubernetes.yaml and compose.yaml to %s (%d requests, %d credentials kept out). Try: locust -f %s/locustfile.py --headless -u %d -t 30s --host http://%s --json > stats.json\n",
				args[0], len(opt.Requests), len(lf.Secrets), args[0], opt.Connections, opt.Target.Address)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.stack.lab, "lab", "", "the lab whose URL and workload the files load")
	fl.StringVar(&f.appPath, "app-path", "/", "with --lab: the path loaded")
	fl.StringVar(&f.stack.workload, "workload", "", "with --lab: front, comment, mix (WordPress), a path, or a scenario file")
	fl.StringVar(&f.scenario, "scenario", "", "file of weighted requests (see phptune bench --help)")
	fl.StringVar(&f.stack.fromLog, "workload-from-log", "", "replay the top paths of this nginx/Apache access log")
	fl.BoolVar(&f.stack.allowPost, "allow-post", false, "with --workload-from-log: replay POSTs too")
	fl.StringVarP(&f.method, "method", "m", "GET", "HTTP method")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, `request header "Name: value" (repeatable; credentials go to the environment)`)
	fl.StringVar(&f.body, "body", "", "request body (implies POST)")
	fl.StringVar(&f.bodyFile, "body-file", "", "read the request body from a file (implies POST)")
	fl.StringVar(&f.stack.expect, "expect", "", "fail 2xx responses whose body does not match this regular expression (unexpected_body)")
	fl.IntVarP(&f.conns, "connections", "c", 10, "Locust users")
	fl.StringVar(&f.rate, "rate", "", "open model: total requests/second, kept by each user as its share (constant throughput)")
	fl.DurationVarP(&f.duration, "duration", "d", time.Minute, "run time")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "connect and response timeout per request")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "allow a target that is not on loopback")
	fl.StringArrayVar(&f.redact, "redact", nil, "also keep this header, form field or query parameter out of the files (repeatable)")
	fl.IntVar(&replicas, "replicas", 2, "workers in the Kubernetes manifest and the README's commands")
	return cmd
}
