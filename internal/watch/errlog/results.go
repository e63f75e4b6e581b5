package errlog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/model/results"
)

// LogRead is what was read of one log for a run.
type LogRead struct {
	Source Source
	Bytes  int64
	// Note says when the log was not read as appended (capped, replaced,
	// not read and why).
	Note string
}

// Result is the record of one run's server errors: the logs read, the
// counts with their causes and fixes in the run's settings, and the
// explanations against the generator's counts in b.
func Result(s *Scanner, logs []LogRead, b *results.Bench, set Settings) *results.ServerErrors {
	out := &results.ServerErrors{Logs: []results.ServerLog{}, Somaxconn: set.Somaxconn}
	var read []Source
	for _, l := range logs {
		out.Logs = append(out.Logs, results.ServerLog{Name: string(l.Source), BytesRead: l.Bytes, Lines: s.Lines(l.Source), Note: l.Note})
		read = append(read, l.Source)
	}
	counts := s.Counts()
	for _, c := range counts {
		out.Classes = append(out.Classes, classResult(c, set))
	}
	out.Explanations = Explain(counts, Generator{StatusCodes: b.StatusCodes, ErrorsByClass: b.ErrorsByClass, Connections: b.Connections, Warmup: b.WarmupS > 0}, set, read)
	out.PHP = PHPRecord(s.PHP())
	return out
}

func classResult(c Count, set Settings) results.ServerErrorClass {
	cl, _ := Lookup(c.Class)
	return results.ServerErrorClass{Class: c.Class, Log: string(c.Source), Lines: c.Lines, Requests: c.Requests,
		ClientStatus: cl.Status, What: cl.What, Cause: cl.Cause(set), Fix: cl.Fix(set), Example: c.Example}
}

// Combined is several runs' server errors taken together.
type Combined struct {
	// Runs is how many of the runs had their logs read (results stored
	// before phptune read them have none).
	Runs int
	// Classes sums the runs' classes (the first run's example kept).
	Classes []results.ServerErrorClass
	// Explanations explain the sums against the runs' summed status codes
	// and error classes.
	Explanations []string
	// PHP sums PHP's own messages of the runs (nil: none).
	PHP *results.PHPErrors
}

// Combine sums the server errors of runs of one configuration (a tune's
// holdout rounds) with knobs as its settings, and explains them as one
// run. Runs without ServerErrors are left out.
func Combine(runs []*results.Bench, knobs map[string]string) Combined {
	var out Combined
	type key struct{ class, log string }
	sum := map[key]*Count{}
	var order []key
	gen := Generator{StatusCodes: map[string]int64{}, ErrorsByClass: map[string]int64{}}
	logs := map[Source]bool{}
	set := Settings{Knobs: knobs}
	for _, b := range runs {
		if b == nil || b.ServerErrors == nil {
			continue
		}
		out.Runs++
		se := b.ServerErrors
		if se.Somaxconn > 0 {
			set.Somaxconn = se.Somaxconn
		}
		for _, l := range se.Logs {
			logs[Source(l.Name)] = true
		}
		for _, c := range se.Classes {
			if _, ok := Lookup(c.Class); !ok {
				continue // a class a later phptune knows
			}
			k := key{c.Class, c.Log}
			if sum[k] == nil {
				sum[k] = &Count{Class: c.Class, Source: Source(c.Log), Example: c.Example}
				order = append(order, k)
			}
			sum[k].Lines += c.Lines
			sum[k].Requests += c.Requests
		}
		for k, v := range b.StatusCodes {
			gen.StatusCodes[k] += v
		}
		for k, v := range b.ErrorsByClass {
			gen.ErrorsByClass[k] += v
		}
		gen.Connections += b.Connections
		gen.Warmup = gen.Warmup || b.WarmupS > 0
	}
	if out.Runs == 0 {
		return out
	}
	var php []*results.PHPErrors
	for _, b := range runs {
		if b != nil && b.ServerErrors != nil {
			php = append(php, b.ServerErrors.PHP)
		}
	}
	out.PHP = MergePHP(php...)
	sort.SliceStable(order, func(i, j int) bool {
		a, b := classIndex(order[i].class), classIndex(order[j].class)
		if a != b {
			return a < b
		}
		return order[i].log < order[j].log
	})
	counts := make([]Count, len(order))
	for i, k := range order {
		counts[i] = *sum[k]
		out.Classes = append(out.Classes, classResult(counts[i], set))
	}
	var read []Source
	for _, s := range Sources {
		if logs[s] {
			read = append(read, s)
		}
	}
	out.Explanations = Explain(counts, gen, set, read)
	return out
}

// Headline names a run's failed requests by class in a few words for a
// progress line: "nginx_fpm_backlog_full 312×502"; "" when the logs
// explain no failure.
func Headline(se *results.ServerErrors) string {
	if se == nil {
		return ""
	}
	var parts []string
	for _, c := range se.Classes {
		if c.Requests > 0 && c.ClientStatus != 0 {
			parts = append(parts, fmt.Sprintf("%s %d×%d", c.Class, c.Requests, c.ClientStatus))
		}
	}
	return strings.Join(parts, ", ")
}
