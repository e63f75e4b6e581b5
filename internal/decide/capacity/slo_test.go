package capacity

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

func TestParseSLO(t *testing.T) {
	tests := []struct {
		in   string
		want string // canonical form; "" when it must be refused
		err  string // part of the refusal
	}{
		{"p99<500ms", "p99<500ms", ""},
		{"p95<1s", "p95<1s", ""},
		{"p99<500ms,errors<0.1%", "p99<500ms,errors<0.1%", ""},
		{" P99 < 500MS , Errors <= 0% ", "p99<500ms,errors<=0%", ""},
		{"p99.9<=2s,p50<100ms", "p50<100ms,p99.9<=2s", ""},
		{"p90<1.5s", "p90<1.5s", ""},
		{"p99<60s", "p99<1m0s", ""},
		{"errors<1%", "errors<1%", ""},
		{"", "", "empty"},
		{"p99", "", "write a percentile"},
		{"p99<", "", "no duration"},
		{"p99<500", "", "has no unit"},
		{"p99<0.5", "", "has no unit"},
		{"p98<1s", "", "choose p50, p90, p95, p99 or p99.9"},
		{"p100<1s", "", "choose p50"},
		{"pxx<1s", "", "choose p50"},
		{"p99>1s", "", "write a percentile"},
		{"p99<=-1s", "", "give 1ms to 60s"},
		{"p99<500us", "", "give 1ms to 60s"},
		{"p99<2m", "", "give 1ms to 60s"},
		{"p99<fast", "", "with its unit"},
		{"p99<1s,p99<2s", "", "bounded twice"},
		{"errors<0%", "", "errors<=0%"},
		{"errors<0.1", "", "as a percentage"},
		{"errors<101%", "", "from 0 to 100"},
		{"errors<1%,errors<2%", "", "given twice"},
		{"errors=1%", "", "errors<0.1%"},
		{"p99<1s,,errors<1%", "", "empty term"},
		{"latency<1s", "", "a term is"},
		{strings.Repeat("p99<1s,", 40), "", "longer than 256"},
	}
	for _, tt := range tests {
		s, err := ParseSLO(tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("ParseSLO(%q) = %q, want an error", tt.in, s)
				continue
			}
			if !errors.Is(err, ErrSLO) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSLO(%q): %v, want ErrSLO saying %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSLO(%q): %v", tt.in, err)
			continue
		}
		if got := s.String(); got != tt.want {
			t.Errorf("ParseSLO(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"p99<500ms", "p95<1s", "p99<500ms,errors<0.1%", "p99.9<=2s, p50<1ms", "errors<=0%", "p99<1e3ms", "p9<1s", ",", "p<"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSLO(in)
		if err != nil {
			if !errors.Is(err, ErrSLO) {
				t.Fatalf("ParseSLO(%q): error %v is not ErrSLO", in, err)
			}
			return
		}
		if len(s.Latency) == 0 && s.Errors == nil {
			t.Fatalf("ParseSLO(%q) accepted an SLO with no term", in)
		}
		for _, term := range s.Latency {
			if term.MaxMs < 1 || term.MaxMs > 60000 {
				t.Fatalf("ParseSLO(%q): bound %v ms outside 1 ms to 60 s", in, term.MaxMs)
			}
		}
		again, err := ParseSLO(s.String())
		if err != nil {
			t.Fatalf("ParseSLO(%q) = %q, which does not parse again: %v", in, s.String(), err)
		}
		if !reflect.DeepEqual(again, s) {
			t.Fatalf("ParseSLO(%q) = %+v, but its String %q parses as %+v", in, s, s.String(), again)
		}
	})
}

func TestCheck(t *testing.T) {
	slo, err := ParseSLO("p99<500ms")
	if err != nil {
		t.Fatal(err)
	}
	ok := func() *results.Bench {
		return &results.Bench{Requests: 10000, RateAskedRPS: 1000, RateAchievedRPS: 1000, Connections: 100,
			Latency: results.Latency{P50Ms: 10, P99Ms: 120}}
	}
	none := ErrorLimit{}
	tests := []struct {
		name   string
		mod    func(*results.Bench)
		errs   ErrorLimit
		slo    string
		reason string // "" passes
	}{
		{"passes", func(*results.Bench) {}, none, "", ""},
		{"p99 above", func(b *results.Bench) { b.Latency.P99Ms = 700 }, none, "", "p99 700.0 ms above the bound 500.0 ms"},
		{"p99 at the bound, strict", func(b *results.Bench) { b.Latency.P99Ms = 500 }, none, "", "p99 500.0 ms above"},
		{"p99 at the bound, inclusive", func(b *results.Bench) { b.Latency.P99Ms = 500 }, none, "p99<=500ms", ""},
		{"one error, none allowed", func(b *results.Bench) { b.Errors = 1; b.ErrorsByClass = map[string]int64{"status_5xx": 1} }, none, "", "errors 0.01% of 10000 requests (status_5xx 1)"},
		{"errors within 0.1%", func(b *results.Bench) { b.Errors = 5 }, ErrorLimit{Rate: 0.001}, "", ""},
		{"the SLO's errors term wins", func(b *results.Bench) { b.Errors = 5 }, ErrorLimit{Rate: 0.001}, "p99<500ms,errors<0.01%", "limit errors<0.01%"},
		{"unsent requests", func(b *results.Bench) { b.RequestsUnsent = 3 }, none, "", "3 requests were never sent"},
		{"unanswered beyond the tail", func(b *results.Bench) { b.RequestsUnanswered = 200 }, ErrorLimit{Rate: 0.5}, "", "late requests alone"},
		{"rate not achieved", func(b *results.Bench) { b.RateAchievedRPS = 800 }, none, "", "answered 800.0 of the 1000.0"},
		{"nothing completed", func(b *results.Bench) { b.Requests = 0 }, none, "", "no request completed"},
		{"p95 bounded", func(b *results.Bench) { b.Latency.P95Ms = 90 }, none, "p95<80ms", "p95 90.0 ms above the bound 80.0 ms"},
	}
	for _, tt := range tests {
		s := slo
		if tt.slo != "" {
			if s, err = ParseSLO(tt.slo); err != nil {
				t.Fatal(err)
			}
		}
		b := ok()
		tt.mod(b)
		why := s.Check(b, tt.errs)
		switch {
		case tt.reason == "" && len(why) > 0:
			t.Errorf("%s: failed: %q", tt.name, why)
		case tt.reason != "" && !strings.Contains(strings.Join(why, "; "), tt.reason):
			t.Errorf("%s: reasons %q, want one saying %q", tt.name, why, tt.reason)
		}
	}
}
