package cli

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/model/outdir"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/testkit/goldentest"
)

// verdictFixtures are a throughput-decided tune (the report's canned one)
// and the same run decided on stack CPU per request at the machine's speed.
func verdictFixtures(t *testing.T) map[string]*results.Tune {
	b, err := os.ReadFile("../report/testdata/tune.json")
	if err != nil {
		t.Fatal(err)
	}
	var thr, cpu results.Tune
	if err := json.Unmarshal(b, &thr); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cpu); err != nil {
		t.Fatal(err)
	}
	h := *cpu.Holdout
	h.Statistic = results.StatCPUSpeed
	h.CPURatio, h.CPUCILow, h.CPUCIHigh = 1.19, 1.05, 1.35
	h.RawCPURatio, h.RawCPUCILow, h.RawCPUCIHigh = 1.17, 1.02, 1.34
	h.StartCPUMs, h.RecommendedCPUMs = 53.7, 45.1
	cpu.Holdout = &h
	for _, r := range []*results.Tune{&thr, &cpu} {
		v := results.HoldoutVerdict(r.Holdout)
		r.Verdict = &v
	}
	return map[string]*results.Tune{"throughput": &thr, "cpu": &cpu}
}

var (
	verdictLine    = regexp.MustCompile(`(?m)^verdict: (.*)$`)
	verdictHeading = regexp.MustCompile(`id="verdict">Verdict: (.*?)\.(<div|</div>)`)
	quotedVerdict  = regexp.MustCompile(`whose verdict was: (.*)`)
)

// TestVerdictAgreesEverywhere renders a CPU-decided and a
// throughput-decided tune through every place that states a tune's
// verdict — the terminal (what printTune prints), summary.txt,
// result.json, report.html, the report re-rendered from the stored JSON,
// compare's quote of the tune and advise's — and checks that they say the
// same sentence, word for word; the sentences are golden.
func TestVerdictAgreesEverywhere(t *testing.T) {
	var golden strings.Builder
	fixtures := verdictFixtures(t)
	for _, name := range []string{"cpu", "throughput"} {
		res := fixtures[name]
		want := res.Verdict.Sentence
		places := map[string]string{}

		var term bytes.Buffer
		report.TuneText(&term, res)
		report.VerdictLine(&term, res)
		lines := verdictLine.FindAllStringSubmatch(term.String(), -1)
		if len(lines) != 2 {
			t.Fatalf("%s: the terminal has %d verdict lines, want 2 (the table's and the closing one):\n%s", name, len(lines), term.String())
		}
		places["terminal"], places["terminal, last line"] = lines[0][1], lines[1][1]

		dir, err := outdir.Create(filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := writeTuneReport(dir, res, nil); err != nil {
			t.Fatal(err)
		}
		dir.Close()
		read := func(f string) string {
			b, err := os.ReadFile(filepath.Join(dir.Path(), f))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		if m := verdictLine.FindStringSubmatch(read("summary.txt")); m != nil {
			places["summary.txt"] = m[1]
		}
		var stored results.Tune
		if err := json.Unmarshal([]byte(read("result.json")), &stored); err != nil || stored.Verdict == nil {
			t.Fatalf("%s: result.json holds no verdict (%v)", name, err)
		}
		places["result.json"] = stored.Verdict.Sentence
		if m := verdictHeading.FindStringSubmatch(read("report.html")); m != nil {
			places["report.html"] = html.UnescapeString(m[1])
		}
		var again bytes.Buffer
		if err := report.Render(&again, "html", report.Run{Tune: &stored}); err != nil {
			t.Fatal(err)
		}
		if m := verdictHeading.FindStringSubmatch(again.String()); m != nil {
			places["report re-rendered"] = html.UnescapeString(m[1])
		}
		q, err := results.QuoteTune([]byte(read("result.json")))
		if err != nil {
			t.Fatal(err)
		}
		var cmp bytes.Buffer
		report.CompareText(&cmp, &results.Compare{Summary: []results.CompareRow{{Label: "default"}}, Configs: []results.CompareConfig{{Label: "tuned", FromTune: q}}}, 0)
		if m := quotedVerdict.FindStringSubmatch(cmp.String()); m != nil {
			places["compare"] = m[1]
		}
		if c := advise.CompareTune(advise.Advice{}, &stored, res.ID, "--tune"); c != nil {
			places["advise"] = c.Verdict.Sentence
		}
		for _, p := range []string{"terminal", "terminal, last line", "summary.txt", "result.json", "report.html", "report re-rendered", "compare", "advise"} {
			if got, ok := places[p]; !ok {
				t.Errorf("%s: %s states no verdict", name, p)
			} else if got != want {
				t.Errorf("%s: %s says %q, want %q", name, p, got, want)
			}
		}
		golden.WriteString(name + ": " + want + "\n")
		if res.Verdict.Why != "" {
			golden.WriteString("  why: " + res.Verdict.Why + "\n")
		}
	}
	goldentest.CheckString(t, "testdata/verdicts.golden", golden.String())
}
