package readmecmd

import "strings"

// Rule is how a README test shortens a command's time: the one change it
// makes to a command besides filling placeholders (Fill), so that the
// README's commands run as written within a test suite's minutes.
type Rule struct {
	// TimeBudget replaces every --time-budget (and is given to demo,
	// whose default is 15 minutes).
	TimeBudget string
	// TrialDuration and TrialWarmup are given to tune and demo when the
	// command sets none.
	TrialDuration, TrialWarmup string
	// Duration and Warmup are given to bench and compare (each run's
	// measured time and warm-up) when the command sets none.
	Duration, Warmup string
}

// TestRule is the rule the README tests run under (docs/development.md
// states it).
var TestRule = Rule{TimeBudget: "75s", TrialDuration: "2s", TrialWarmup: "1s", Duration: "2s", Warmup: "1s"}

// Shorten returns a copy of a command's words with its durations cut by
// r. A phptune command (program bin/phptune or phptune) has its
// --time-budget replaced by r.TimeBudget (given to demo, tune, capacity,
// servers when absent) and its subcommand's durations added when not set;
// make demo gets them as DEMO_FLAGS. Anything else is returned unchanged.
func Shorten(args []string, r Rule) []string {
	out := append([]string(nil), args...)
	if len(out) == 2 && out[0] == "make" && out[1] == "demo" {
		return append(out, "DEMO_FLAGS=--time-budget "+r.TimeBudget+" --trial-duration "+r.TrialDuration+" --trial-warmup "+r.TrialWarmup)
	}
	if len(out) < 2 || !IsPhptune(out[0]) {
		return out
	}
	sub := out[1]
	if sub == "lab" || sub == "report" {
		return out
	}
	budget := false
	for i := 0; i < len(out); i++ {
		switch {
		case out[i] == "--time-budget" && i+1 < len(out):
			out[i+1] = r.TimeBudget
			budget = true
		case strings.HasPrefix(out[i], "--time-budget="):
			out[i] = "--time-budget=" + r.TimeBudget
			budget = true
		}
	}
	add := func(flag, value string, aliases ...string) {
		if has(out, append(aliases, flag)...) {
			return
		}
		out = append(out, flag, value)
	}
	switch sub {
	case "demo", "tune":
		if !budget {
			out = append(out, "--time-budget", r.TimeBudget)
		}
		add("--trial-duration", r.TrialDuration)
		add("--trial-warmup", r.TrialWarmup)
	case "capacity", "servers":
		if !budget {
			out = append(out, "--time-budget", r.TimeBudget)
		}
	case "bench", "compare":
		add("--duration", r.Duration, "-d")
		add("--warmup", r.Warmup)
	}
	return out
}

// has reports whether args hold one of the flags (as a word or as
// --flag=value).
func has(args []string, flags ...string) bool {
	for _, a := range args {
		for _, f := range flags {
			if a == f || strings.HasPrefix(a, f+"=") {
				return true
			}
		}
	}
	return false
}

// IsPhptune reports whether a command's program is phptune as the README
// writes it: bin/phptune or phptune.
func IsPhptune(prog string) bool { return prog == "bin/phptune" || prog == "phptune" }

// Fill replaces the README's placeholders in each word: each pair is a
// placeholder (a whole word, or within a word such as
// phptune-tune-RUN/recommended.knobs) and its value, applied in order.
func Fill(args []string, pairs ...[2]string) []string {
	out := append([]string(nil), args...)
	for i := range out {
		for _, p := range pairs {
			if p[0] != "" {
				out[i] = strings.ReplaceAll(out[i], p[0], p[1])
			}
		}
	}
	return out
}
