package tune

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

func TestServerErrorsEvidence(t *testing.T) {
	backlog := &results.ServerErrors{
		Logs:         []results.ServerLog{{Name: "nginx", Lines: 312}, {Name: "php-fpm"}},
		Classes:      []results.ServerErrorClass{{Class: "nginx_fpm_backlog_full", Log: "nginx", Lines: 312, Requests: 312, ClientStatus: 502}},
		Explanations: []string{"312 of 318 502s were nginx's connect() to the fpm socket failing with EAGAIN: …"},
	}
	causes := &results.ServerErrors{Logs: []results.ServerLog{{Name: "php-fpm", Lines: 1}},
		Classes:      []results.ServerErrorClass{{Class: "fpm_max_children_reached", Log: "php-fpm", Lines: 1}},
		Explanations: []string{"php-fpm reaching pm.max_children (logged once): …"},
		PHP: &results.PHPErrors{Classes: []results.PHPErrorClass{
			{Class: "deprecation", Count: 9, Files: []results.PHPErrorFile{{File: "wp-includes/class-wp.php", Count: 9, Example: "d"}}}}}}
	tn := &results.Tune{Trials: []results.Trial{
		{N: 1, Phase: "knee", Connections: 200, Bench: &results.Bench{Requests: 1000, Errors: 318, ServerErrors: backlog}},
		{N: 2, Phase: "knee", Connections: 10, Bench: &results.Bench{Requests: 900, ServerErrors: causes}},
		{N: 3, Phase: "knee", Connections: 10, Bench: &results.Bench{Requests: 900, ServerErrors: &results.ServerErrors{}}},
		{N: 4, Phase: "knee", Connections: 10, Bench: &results.Bench{Requests: 900}}, // stored before logs were read
		{N: 5, Phase: "workers", Status: "failed"},
	}}
	var b strings.Builder
	serverErrorsEvidence(&b, tn)
	want := `
server error logs (what nginx, Apache and php-fpm wrote in each trial's measured part; 3 trials read):
  trial 1 (knee, 200 conns, 318 errors of 1000 requests): nginx_fpm_backlog_full 312×502
    312 of 318 502s were nginx's connect() to the fpm socket failing with EAGAIN: …
  trials whose logs held only causes, no failed request (pm.max_children reached, workers recycled...): 2
  trial 2 (knee): PHP logged 9 deprecations (top: wp-includes/class-wp.php 9) during the run
`
	if b.String() != want {
		t.Errorf("evidence:\n%s\nwant:\n%s", b.String(), want)
	}
	// No trial read: no section.
	b.Reset()
	serverErrorsEvidence(&b, &results.Tune{Trials: tn.Trials[3:]})
	if b.Len() != 0 {
		t.Errorf("evidence without logs: %q", b.String())
	}
}
