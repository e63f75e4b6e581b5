package errlog

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Generator is what the load generator counted in the same run: responses
// by status code and failures by its own classes (results.Bench's
// status_codes and errors_by_class).
type Generator struct {
	StatusCodes   map[string]int64
	ErrorsByClass map[string]int64
	// Connections and Warmup say how the run began: the logs are read
	// from the end of the warm-up, and a request in flight then (one per
	// connection at most) can have its line before that mark and its
	// answer after it.
	Connections int
	Warmup      bool
}

// Explain relates the classified counts to what the generator saw, in
// sentences a person reads:
//
//   - for each 5xx status the generator counted, how many of them each
//     class accounts for ("312 of 318 502s were nginx's connect() to the
//     fpm socket failing with EAGAIN: …; raise …"), and how many no line
//     explains;
//   - the generator's connection-level errors that go with a class
//     (nginx out of worker_connections: resets at the client), and
//     connect_backlog_full, which the generator sees itself when it talks
//     FastCGI to php-fpm and no server logs;
//   - the lines that are causes rather than failures (pm.max_children
//     reached, workers killed or recycled, MaxRequestWorkers reached).
//
// logs names the logs that were read, for the sentence that says none
// explains an error.
func Explain(counts []Count, g Generator, s Settings, logs []Source) []string {
	var out []string
	statuses := make([]int, 0, len(g.StatusCodes))
	for k, n := range g.StatusCodes {
		if st, err := strconv.Atoi(k); err == nil && st >= 500 && n > 0 {
			statuses = append(statuses, st)
		}
	}
	sort.Ints(statuses)
	read := make([]string, len(logs))
	for i, l := range logs {
		read[i] = string(l)
	}
	for _, st := range statuses {
		total := g.StatusCodes[strconv.Itoa(st)]
		var match []Count
		var logged int64
		for _, c := range counts {
			if cl, _ := Lookup(c.Class); cl.Status == st && c.Requests > 0 {
				match = append(match, c)
				logged += c.Requests
			}
		}
		sort.SliceStable(match, func(i, j int) bool { return match[i].Requests > match[j].Requests })
		left := total
		for _, c := range match {
			n := min(c.Requests, left)
			if n == 0 {
				break
			}
			left -= n
			cl, _ := Lookup(c.Class)
			out = append(out, fmt.Sprintf("%d of %d %ds were %s: %s; %s.", n, total, st, cl.What, cl.Cause(s), cl.Fix(s)))
		}
		switch {
		case len(match) == 0 && len(read) == 0:
			out = append(out, fmt.Sprintf("%d %ds: no server log was read to explain them.", total, st))
		case len(match) == 0:
			out = append(out, fmt.Sprintf("%d %ds: no line of the servers' logs (%s) explains them.", total, st, strings.Join(read, ", ")))
		case left > 0 && g.Warmup && (left <= int64(g.Connections) || 100*left <= total):
			out = append(out, fmt.Sprintf("%d of the %d %ds are in no log line of the measured part: likely requests failing as the warm-up ended (the logs are marked a moment after the generator starts counting).", left, total, st))
		case left > 0:
			out = append(out, fmt.Sprintf("%d of the %d %ds are in no log line phptune classifies.", left, total, st))
		}
		if logged > total {
			out = append(out, fmt.Sprintf("(The logs hold %d such failures for the %d %ds the generator counted: requests unanswered when the run ended are not counted, nor attempts nginx retried on another server of an upstream block.)", logged, total, st))
		}
	}

	// The generator's connection-level errors and the classes that go
	// with them.
	for _, c := range counts {
		cl, _ := Lookup(c.Class)
		if len(cl.ClientErrors) == 0 || c.Lines == 0 {
			continue
		}
		var n int64
		var names []string
		for _, e := range cl.ClientErrors {
			if g.ErrorsByClass[e] > 0 {
				n += g.ErrorsByClass[e]
				names = append(names, e)
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%d %s errors at the client came with %d lines of %s: %s; %s.", n, strings.Join(names, "/"), c.Lines, cl.What, cl.Cause(s), cl.Fix(s)))
		} else {
			out = append(out, fmt.Sprintf("%s (%s): %s; %s.", cl.What, times(c.Lines), cl.Cause(s), cl.Fix(s)))
		}
	}
	if n := g.ErrorsByClass["connect_backlog_full"]; n > 0 {
		cl, _ := Lookup("nginx_fpm_backlog_full")
		out = append(out, fmt.Sprintf("%d connect_backlog_full errors were the generator's own connect() to the fpm socket failing with EAGAIN (php-fpm logs nothing for them): %s; %s.", n, cl.Cause(s), cl.Fix(s)))
	}

	// Causes rather than failures.
	for _, c := range counts {
		cl, _ := Lookup(c.Class)
		if cl.Status != 0 || len(cl.ClientErrors) > 0 || c.Lines == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s): %s; %s.", cl.What, times(c.Lines), cl.Cause(s), cl.Fix(s)))
	}
	return out
}

func times(n int64) string {
	if n == 1 {
		return "logged once"
	}
	return fmt.Sprintf("logged %d times", n)
}
