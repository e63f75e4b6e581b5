package pagecheck

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTitle(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"<html><head><title>My Blog &amp; more</title>", "My Blog & more"},
		{"<TITLE lang=en>\n  Spaced\n  out </TITLE >", "Spaced out"},
		{"<title></title>", ""},
		{"no title here", ""},
		{"<title>" + strings.Repeat("x", 300) + "</title>", strings.Repeat("x", 200) + "…"},
		{"<title>\xff\xfebad</title>", `\xff\xfebad`},
		{"<title>a\x1b]0;pwned\x07b &#27;[2J</title>", `a\x1b]0;pwned\ab \x1b[2J`},
		{"<title>\u202egnp.exe</title>", `\u202egnp.exe`},
	} {
		if got := Title([]byte(c.body)); got != c.want {
			t.Errorf("Title(%.40q) = %q, want %q", c.body, got, c.want)
		}
	}
}

// TestMessagesShowTitleEscapes feeds a title with an OSC, a CSI and a BEL
// through the page check's messages: none reaches them raw, each is shown.
func TestMessagesShowTitleEscapes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<title>Blog\x1b]2;PWNED\x07\x1b[8m</title>")
	}))
	defer srv.Close()
	p, err := Fetch(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	first := p
	first.Title = "Blog"
	for _, msg := range []string{p.String(), Drift(first, p)} {
		if strings.ContainsAny(msg, "\x1b\x07") {
			t.Errorf("message passes a raw escape: %q", msg)
		}
		if !strings.Contains(msg, `Blog\x1b]2;PWNED\a\x1b[8m`) {
			t.Errorf("message does not show the escapes: %q", msg)
		}
	}
}

func TestLooksLikeError(t *testing.T) {
	for _, c := range []struct {
		title string
		want  bool
	}{
		{"WordPress › Error", true},
		{"Nextcloud - Error", true},
		{"Database Error", true},
		{"Maintenance mode", true},
		{"WordPress › Setup Configuration File", true},
		{"phpMyAdmin setup", true},
		{"Whoops! There was an error.", true},
		{"503 Service Unavailable", true},
		{"My Blog – Just another WordPress site", false},
		{"Terrorist attacks explained", false}, // whole words only
		{"", false},
	} {
		if got, _ := LooksLikeError(c.title); got != c.want {
			t.Errorf("LooksLikeError(%q) = %v, want %v", c.title, got, c.want)
		}
	}
}

func TestDrift(t *testing.T) {
	first := Page{Status: 200, Bytes: 1000, Title: "Blog"}
	for _, c := range []struct {
		now  Page
		want string
	}{
		{Page{Status: 200, Bytes: 1100, Title: "Blog"}, ""},
		{Page{Status: 500, Bytes: 1000, Title: "Blog"}, "answers 500"},
		{Page{Status: 200, Bytes: 1000, Title: "Error"}, "title is now"},
		{Page{Status: 200, Bytes: 300, Title: "Blog"}, "300 bytes"},
	} {
		got := Drift(first, c.now)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("Drift(%+v) = %q, want %q", c.now, got, c.want)
		}
	}
}

func TestFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !r.Close {
			http.Error(w, "the check must not keep its connection", http.StatusBadRequest)
			return
		}
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/", http.StatusFound)
			return
		}
		fmt.Fprint(w, "<html><title>Setup error</title>data dir not readable</html>")
	}))
	defer srv.Close()
	p, err := Fetch(context.Background(), srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != 200 || p.Title != "Setup error" || p.Bytes != 60 {
		t.Fatalf("page = %+v", p)
	}
	if bad, _ := LooksLikeError(p.Title); !bad {
		t.Fatal("setup error page not flagged")
	}
	if p, _ := Fetch(context.Background(), srv.URL+"/moved"); p.Status != 302 {
		t.Fatalf("redirect followed: %+v", p)
	}
}

func FuzzTitle(f *testing.F) {
	f.Add([]byte("<title>x</title>"))
	f.Add([]byte("<title><title></title>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := Title(b)
		if len([]rune(got)) > 201 || !utf8.ValidString(got) || strings.ContainsFunc(got, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) }) {
			t.Fatalf("Title = %q", got)
		}
	})
}

// TestFetchHost: the page check asks with the site's Host when given one,
// and with the URL's host otherwise.
func TestFetchHost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "site.test" {
			http.Redirect(w, r, "http://site.test/", http.StatusMovedPermanently)
			return
		}
		fmt.Fprint(w, "<title>Site</title>")
	}))
	defer srv.Close()
	p, err := FetchHost(context.Background(), srv.URL+"/", "site.test")
	if err != nil || p.Status != 200 || p.Title != "Site" {
		t.Errorf("with the host: %+v, %v", p, err)
	}
	p, err = Fetch(context.Background(), srv.URL+"/")
	if err != nil || p.Status != 301 || p.Location != "http://site.test/" {
		t.Errorf("without: %+v, %v", p, err)
	}
}
