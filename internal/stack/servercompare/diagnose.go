package servercompare

import (
	"fmt"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// Thresholds of the diagnosis.
const (
	// IdleShortfall: a stack that used less than this share of the best's
	// cores left CPU idle that the best used.
	IdleShortfall = 0.85
	// ImbalanceFactor: the busiest worker's share is "uneven" at this many
	// times an even share (1/workers) and this many times the best's
	// (ImbalanceVsBest).
	ImbalanceFactor = 2.0
	ImbalanceVsBest = 1.5
	// CPUExcess: CPU per request this much above the best's is a cost of
	// its own.
	CPUExcess = 1.10
)

// Causes of a loss.
const (
	CauseImbalance    = "imbalance"
	CauseQueueing     = "queueing"
	CauseCPU          = "cpu per request"
	CauseUndetermined = "undetermined"
)

// Diagnose explains, for every configuration significantly slower than
// the best (its throughput interval against the best below 1), what the
// figures show:
//
//   - imbalance: its stack used clearly less CPU than the best's while its
//     busiest PHP worker did far more than an even share of the pool's CPU
//     (Unit with one of its processes busy at a time);
//   - queueing: its stack used clearly less CPU than the best's while
//     requests waited for a worker (a queue in front of PHP in most
//     rounds, or every worker busy in most samples): too few workers for
//     the connections, or workers held by kept-alive connections;
//   - cpu per request: both used the CPU, but each of its requests cost
//     more (the part that differs most is named);
//   - undetermined: none of these; the figures are given, no cause is
//     invented.
func Diagnose(cs []results.ServerConfig, best string) []results.Diagnosis {
	var b *results.ServerConfig
	for i := range cs {
		if cs[i].Label == best {
			b = &cs[i]
		}
	}
	if b == nil {
		return nil
	}
	var out []results.Diagnosis
	for _, c := range cs {
		switch {
		case c.Label == best:
		case c.Rounds > 0 && c.Throughput.Value == 0 && b.Throughput.Value > 0:
			out = append(out, servedNothing(c, *b))
		case Slower(c.VsBest):
			out = append(out, diagnose(c, *b))
		}
	}
	return out
}

// servedNothing explains a configuration without one successful
// response in any round (it has no ratio: nothing to divide).
func servedNothing(c, b results.ServerConfig) results.Diagnosis {
	text := fmt.Sprintf("%s served no successful response in its %d rounds, where %s served %.1f rps", c.Label, c.Rounds, b.Label, b.Throughput.Value)
	if c.QueuedRounds > 0 {
		return results.Diagnosis{Label: c.Label, Cause: CauseQueueing, Text: fmt.Sprintf("%s: requests waited in front of PHP in %d of %d rounds (up to %d at once) and %s not take them within the run (too few, or held by other connections between requests: keep-alive).",
			text, c.QueuedRounds, c.Rounds, c.MaxQueued, workersNoun(c.Workers)+" did")}
	}
	return results.Diagnosis{Label: c.Label, Cause: CauseUndetermined, Text: text + "; see its warnings and errors."}
}

func diagnose(c, b results.ServerConfig) results.Diagnosis {
	lost := fmt.Sprintf("%s lost against %s (throughput %.2f× [%.2f, %.2f])", c.Label, b.Label, c.VsBest.Ratio, c.VsBest.Low, c.VsBest.High)
	cores := fmt.Sprintf("its stack used %.2f cores against %.2f", c.StackCores, b.StackCores)
	idle := c.StackCores > 0 && b.StackCores > 0 && c.StackCores < IdleShortfall*b.StackCores
	even := 0.0
	if c.Workers > 0 {
		even = 1 / float64(c.Workers)
	}
	uneven := c.Workers >= 2 && c.Imbalance >= ImbalanceFactor*even && (b.Imbalance == 0 || c.Imbalance >= ImbalanceVsBest*b.Imbalance)
	queued := c.Rounds > 0 && (2*c.QueuedRounds > c.Rounds || c.AllBusyShare >= 0.5)
	waits := fmt.Sprintf("requests waited for a PHP worker in %d of %d rounds (up to %d at once)", c.QueuedRounds, c.Rounds, c.MaxQueued)
	if c.AllBusyShare > 0 {
		// Zero also when no status page could be read (a saturated
		// 1-slot Apache cannot answer its own): then it is not said.
		waits += fmt.Sprintf(" and every worker was busy in %.0f%% of the samples", 100*c.AllBusyShare)
	}
	switch {
	case idle && uneven:
		text := fmt.Sprintf("%s because its PHP workers shared the work unevenly: the busiest of its %d workers did %.0f%% of the pool's CPU where an even share is %.0f%% (%s: %.0f%%), and %s: requests were served by few workers while CPU stood idle",
			lost, c.Workers, 100*c.Imbalance, 100*even, b.Label, 100*b.Imbalance, cores)
		if queued {
			text += "; " + waits
		}
		return results.Diagnosis{Label: c.Label, Cause: CauseImbalance, Text: text + "."}
	case idle && queued:
		return results.Diagnosis{Label: c.Label, Cause: CauseQueueing, Text: fmt.Sprintf("%s because requests queued while CPU stood idle: %s, and %s; %s too few for the connections, or held by connections between requests (keep-alive).",
			lost, waits, cores, workersAre(c.Workers))}
	case c.CPUStackMs > 0 && b.CPUStackMs > 0 && c.CPUStackMs > CPUExcess*b.CPUStackMs:
		return results.Diagnosis{Label: c.Label, Cause: CauseCPU, Text: fmt.Sprintf("%s because each request cost more CPU: %.2f ms (%s) against %.2f ms (%s), mostly in %s; %s",
			lost, c.CPUStackMs, split(c), b.CPUStackMs, split(b), costliest(c, b), cores)}
	}
	return results.Diagnosis{Label: c.Label, Cause: CauseUndetermined, Text: fmt.Sprintf("%s; the figures show no single cause: %s, CPU per request %.2f ms against %.2f ms, the busiest worker's share %.0f%% against %.0f%%, requests queued in %d of %d rounds",
		lost, cores, c.CPUStackMs, b.CPUStackMs, 100*c.Imbalance, 100*b.Imbalance, c.QueuedRounds, c.Rounds)}
}

// workersAre is "its 3 PHP workers are", "its 1 PHP worker is".
func workersAre(n int) string {
	if n == 1 {
		return workersNoun(n) + " is"
	}
	return workersNoun(n) + " are"
}

func workersNoun(n int) string {
	if n == 1 {
		return "its 1 PHP worker"
	}
	return fmt.Sprintf("its %d PHP workers", n)
}

// split is CPU per request by role in words.
func split(c results.ServerConfig) string {
	return fmt.Sprintf("web %.2f, PHP %.2f, DB %.2f", c.CPUWebMs, c.CPUPHPMs, c.CPUDBMs)
}

// costliest names the role whose CPU per request grew most against b's.
func costliest(c, b results.ServerConfig) string {
	parts := []struct {
		name string
		d    float64
	}{{"the web server", c.CPUWebMs - b.CPUWebMs}, {"PHP", c.CPUPHPMs - b.CPUPHPMs}, {"the database", c.CPUDBMs - b.CPUDBMs}}
	top := parts[0]
	for _, p := range parts[1:] {
		if p.d > top.d {
			top = p
		}
	}
	if c.Server == knob.ApachePreforkModPHP && top.name == "PHP" {
		return "PHP (with mod_php Apache's own request handling counts there)"
	}
	return top.name
}
