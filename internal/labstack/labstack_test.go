package labstack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/accesslog"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/pagecheck"
)

func TestPostAndCategoryPaths(t *testing.T) {
	date := time.Date(2022, 1, 5, 9, 7, 3, 0, time.UTC)
	posts := []struct{ structure, want string }{
		{"", "/?p=12"},
		{"/%year%/%monthnum%/%postname%/", "/2022/01/season-river/"},
		{"/%year%/%monthnum%/%day%/%hour%%minute%%second%/%postname%", "/2022/01/05/090703/season-river"},
		{"/archives/%post_id%", "/archives/12"},
		{"%postname%/", "/season-river/"},
		{"/%category%/%postname%/", "/?p=12"},
	}
	for _, tc := range posts {
		if got := PostPath(tc.structure, 12, "season-river", date); got != tc.want {
			t.Errorf("PostPath(%q) = %q, want %q", tc.structure, got, tc.want)
		}
	}
	cats := []struct{ structure, base, want string }{
		{"", "", "/?cat=3"},
		{"/%year%/%monthnum%/%postname%/", "", "/category/news/"},
		{"/%year%/%monthnum%/%postname%", "/topics/", "/topics/news"},
	}
	for _, tc := range cats {
		if got := CategoryPath(tc.structure, tc.base, 3, "news"); got != tc.want {
			t.Errorf("CategoryPath(%q, %q) = %q, want %q", tc.structure, tc.base, got, tc.want)
		}
	}
}

func TestMixShares(t *testing.T) {
	sum := 0
	for _, w := range mixPostWeights {
		sum += w
	}
	if sum != MixShares.Posts {
		t.Fatalf("post weights sum to %d, want %d", sum, MixShares.Posts)
	}
	if s := MixShares; s.Front+s.Posts+s.Archive+s.Search+s.Comment != 100 {
		t.Fatalf("shares %+v do not sum to 100", s)
	}
}

func TestBuiltinAndPagePath(t *testing.T) {
	for name, want := range map[string]string{"": "", "front": "", "comment": "wordpress", "mix": "wordpress"} {
		if app, ok := Builtin(name); !ok || app != want {
			t.Errorf("Builtin(%q) = %q, %v", name, app, ok)
		}
	}
	if _, ok := Builtin("/x"); ok {
		t.Error("a path is not built in")
	}
	tests := []struct {
		reqs []load.Request
		want string
	}{
		{[]load.Request{{Method: "POST", Path: "/wp-comments-post.php"}}, "/"},
		{[]load.Request{{Path: "/a"}}, "/a"},
		{[]load.Request{{Weight: 1, Method: "GET", Path: "/a"}, {Weight: 5, Method: "POST", Path: "/p"}, {Weight: 3, Method: "GET", Path: "/b"}}, "/b"},
	}
	for _, tc := range tests {
		if got := (Workload{Requests: tc.reqs}).PagePath(); got != tc.want {
			t.Errorf("PagePath(%+v) = %q, want %q", tc.reqs, got, tc.want)
		}
	}
}

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

func TestWorkloadFromLog(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	lines := `1.2.3.4 - - [12/Mar/2024:08:15:02 +0000] "GET / HTTP/1.1" 200 100 "-" "-"
1.2.3.4 - - [12/Mar/2024:08:15:02 +0000] "GET / HTTP/1.1" 200 100 "-" "-"
1.2.3.4 - - [12/Mar/2024:08:15:02 +0000] "GET /style.css HTTP/1.1" 200 100 "-" "-"
1.2.3.4 - - [12/Mar/2024:08:15:02 +0000] "POST /wp-comments-post.php HTTP/1.1" 302 0 "-" "-"
`
	if err := os.WriteFile(log, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	w, sum, err := WorkloadFromLog(log, accesslog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w.Writes || len(w.Requests) != 1 || w.Requests[0].Weight != 2 || sum.Static != 1 || w.Name != "log:"+log {
		t.Fatalf("%+v %+v", w, sum)
	}
	w, _, err = WorkloadFromLog(log, accesslog.Options{AllowPost: true})
	if err != nil || !w.Writes || len(w.Requests) != 2 {
		t.Fatalf("with posts: %+v %v", w, err)
	}
	if _, _, err := WorkloadFromLog(filepath.Join(dir, "nope"), accesslog.Options{}); err == nil {
		t.Fatal("a missing log accepted")
	}
}

func TestStartPageRefusal(t *testing.T) {
	front := Workload{Requests: []load.Request{{Method: "GET", Path: "/"}}}
	redirecting := Workload{Requests: []load.Request{{Method: "GET", Path: "/old", ExpectStatus: 301}}}
	mix := Workload{Requests: []load.Request{{Weight: 8, Method: "GET", Path: "/"}, {Weight: 1, Method: "POST", Path: "/wp-comments-post.php", ExpectStatus: 302}}}
	tests := []struct {
		name   string
		page   pagecheck.Page
		w      Workload
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
