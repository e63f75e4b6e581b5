package report

import (
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/errlog"
)

// ServerErrorsText writes what a run's servers logged as errors: the logs
// read, the classes counted and the sentences that explain the errors,
// each line starting with indent and a label padded to width, capitalised
// when title is set (the layout of the text it goes into).
func ServerErrorsText(w io.Writer, se *results.ServerErrors, indent string, width int, title bool) {
	safeText(w, func(w io.Writer) error { serverErrorsText(w, se, indent, width, title); return nil })
}

func serverErrorsText(w io.Writer, se *results.ServerErrors, indent string, width int, title bool) {
	if se == nil {
		return
	}
	label := func(l string) string {
		if title && l != "" {
			l = strings.ToUpper(l[:1]) + l[1:]
		}
		return indent + fmt.Sprintf("%-*s", width, l)
	}
	var logs []string
	for _, l := range se.Logs {
		s := fmt.Sprintf("%s %d lines (%s)", l.Name, l.Lines, bytesText(l.BytesRead))
		if l.Note != "" {
			s += " [" + l.Note + "]"
		}
		logs = append(logs, s)
	}
	if len(logs) == 0 {
		fmt.Fprintf(w, "%sno error log phptune reads (nginx's, Apache's, php-fpm's) was written\n", label("server logs"))
		return
	}
	fmt.Fprintf(w, "%s%s, appended in the measured part\n", label("server logs"), strings.Join(logs, ", "))
	if len(se.Classes) == 0 {
		fmt.Fprintf(w, "%snone\n", label("log errors"))
	} else {
		fmt.Fprintf(w, "%s%s\n", label("log errors"), classList(se.Classes))
	}
	for i, e := range se.Explanations {
		l := ""
		if i == 0 {
			l = "explained"
		}
		fmt.Fprintf(w, "%s%s\n", label(l), e)
	}
	if p := errlog.PHPLine(se.PHP); p != "" {
		fmt.Fprintf(w, "%s%s\n", label(""), p)
	}
}

// classList is "nginx_fpm_backlog_full 312 (502), fpm_max_children_reached 1".
func classList(cs []results.ServerErrorClass) string {
	var parts []string
	for _, c := range cs {
		s := fmt.Sprintf("%s %d", c.Class, c.Lines)
		switch {
		case c.ClientStatus != 0 && c.Requests != c.Lines:
			s = fmt.Sprintf("%s %d lines, %d requests (%d)", c.Class, c.Lines, c.Requests, c.ClientStatus)
		case c.ClientStatus != 0:
			s += " (" + strconv.Itoa(c.ClientStatus) + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func bytesText(b int64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", b)
}

// configErrors is what the servers logged over a tune's holdout rounds of
// one configuration, summed and explained.
type configErrors struct {
	Label  string // "start", "recommended"
	Trials []int
	errlog.Combined
}

// holdoutErrors sums the server errors of the start's and the
// recommendation's holdout rounds (the recommendation alone when it is
// the start); none when no holdout trial had its logs read.
func holdoutErrors(t *results.Tune) []configErrors {
	var out []configErrors
	for _, which := range startAndRecommended(t) {
		var runs []*results.Bench
		var trials []int
		for _, tr := range t.Trials {
			if tr.Phase == "holdout" && tr.Bench != nil && maps.Equal(tr.Config, which.cfg) {
				runs = append(runs, tr.Bench)
				trials = append(trials, tr.N)
			}
		}
		c := errlog.Combine(runs, which.cfg)
		if c.Runs > 0 {
			out = append(out, configErrors{Label: which.label, Trials: trials, Combined: c})
		}
	}
	return out
}

// trialsWithServerErrors lists the trials whose servers logged failed
// requests (classes with a client status), outside the holdout.
func trialsWithServerErrors(t *results.Tune) []int {
	var out []int
	for _, tr := range t.Trials {
		if tr.Phase == "holdout" || tr.Bench == nil || tr.Bench.ServerErrors == nil {
			continue
		}
		for _, c := range tr.Bench.ServerErrors.Classes {
			if c.Requests > 0 {
				out = append(out, tr.N)
				break
			}
		}
	}
	return out
}

// serverErrorsTuneText writes the tune summary's section on the servers'
// error logs: the holdout's start and recommendation, and which other
// trials had failures the logs explain.
func serverErrorsTuneText(w io.Writer, t *results.Tune) {
	hold := holdoutErrors(t)
	others := trialsWithServerErrors(t)
	if len(hold) == 0 && len(others) == 0 {
		return
	}
	fmt.Fprintln(w, "\nserver error logs (lines the servers wrote in the measured part):")
	for _, h := range hold {
		fmt.Fprintf(w, "  %s (holdout trials %s): ", h.Label, intList(h.Trials))
		if len(h.Classes) == 0 {
			fmt.Fprintln(w, "no errors logged")
		} else {
			fmt.Fprintln(w, classList(h.Classes))
			for _, e := range h.Explanations {
				fmt.Fprintf(w, "    %s\n", e)
			}
		}
		if p := errlog.PHPLine(h.PHP); p != "" {
			fmt.Fprintf(w, "    %s\n", p)
		}
	}
	if len(others) > 0 {
		fmt.Fprintf(w, "  other trials with failed requests the logs explain: %s (evidence.txt and the report say what)\n", intList(others))
	}
}

func intList(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
