package labstack

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/traffic/load"
	"github.com/phptune/phptune/internal/traffic/pagecheck"
)

func TestPageWarnings(t *testing.T) {
	ok := pagecheck.Page{URL: "http://127.0.0.1:1/", Status: 200, Bytes: 30000, Title: "phptune lab"}
	tests := []struct {
		name       string
		first, now pagecheck.Page
		want       []string // substrings, one per warning
	}{
		{"first check, fine", pagecheck.Page{}, ok, nil},
		{"first check, setup page", pagecheck.Page{}, pagecheck.Page{URL: ok.URL, Status: 200, Bytes: 900, Title: "Setup error"},
			[]string{"reads like an error, setup or maintenance page"}},
		{"first check, 500", pagecheck.Page{}, pagecheck.Page{URL: ok.URL, Status: 500, Bytes: 10},
			[]string{"the page is an error"}},
		{"first check, redirect", pagecheck.Page{}, pagecheck.Page{URL: ok.URL, Status: 302},
			[]string{"a redirect"}},
		{"same later", ok, ok, nil},
		{"shrank later", ok, pagecheck.Page{URL: ok.URL, Status: 200, Bytes: 900, Title: "phptune lab"},
			[]string{"the page is now 900 bytes"}},
		{"maintenance later", ok, pagecheck.Page{URL: ok.URL, Status: 503, Bytes: 900, Title: "Briefly unavailable for scheduled maintenance"},
			[]string{"the page is an error", "reads like an error", "now answers 503"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PageWarnings(tc.first, tc.now)
			if len(got) != len(tc.want) {
				t.Fatalf("warnings %q, want %d", got, len(tc.want))
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Fatalf("warning %q lacks %q", got[i], tc.want[i])
				}
			}
		})
	}
}

func TestStartPageRefusal(t *testing.T) {
	front := workload.Workload{Requests: []load.Request{{Method: "GET", Path: "/"}}}
	redirecting := workload.Workload{Requests: []load.Request{{Method: "GET", Path: "/old", ExpectStatus: 301}}}
	mix := workload.Workload{Requests: []load.Request{{Weight: 8, Method: "GET", Path: "/"}, {Weight: 1, Method: "POST", Path: "/wp-comments-post.php", ExpectStatus: 302}}}
	tests := []struct {
		name   string
		page   pagecheck.Page
		w      workload.Workload
		refuse string // a word of the refusal, "" for none
	}{
		{"a page", pagecheck.Page{URL: "http://127.0.0.1:8080/", Status: 200}, front, ""},
		{"a 204", pagecheck.Page{URL: "http://127.0.0.1:8080/", Status: 204}, front, ""},
		{"the site's real URL", pagecheck.Page{URL: "http://127.0.0.1:8080/", Status: 301, Location: "http://site.test/"}, front, `answered 301 to "http://site.test/"`},
		{"a missing page", pagecheck.Page{URL: "http://127.0.0.1:8080/", Status: 404}, front, "an error page"},
		{"a broken app", pagecheck.Page{URL: "http://127.0.0.1:8080/", Status: 500}, mix, "an error page"},
		{"a redirect on purpose", pagecheck.Page{URL: "http://127.0.0.1:8080/old", Status: 301}, redirecting, ""},
		{"another redirect than declared", pagecheck.Page{URL: "http://127.0.0.1:8080/old", Status: 302}, redirecting, "a redirect"},
		{"a page where a redirect is declared", pagecheck.Page{URL: "http://127.0.0.1:8080/old", Status: 200}, redirecting, "answered 200"},
		{"a mix whose comment POST expects 302", pagecheck.Page{URL: "http://127.0.0.1:8080/", Status: 200}, mix, ""},
	}
	for _, tc := range tests {
		got := StartPageRefusal(tc.page, tc.w)
		if (tc.refuse == "") != (got == "") || !strings.Contains(got, tc.refuse) {
			t.Errorf("%s: %q, want one with %q", tc.name, got, tc.refuse)
		}
	}
}
