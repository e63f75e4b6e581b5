package pagecheck

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTitle(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"<html><head><title>My Blog &amp; more</title>", "My Blog & more"},
		{"<TITLE lang=en>\n  Spaced\n  out </TITLE >", "Spaced out"},
		{"<title></title>", ""},
		{"no title here", ""},
		{"<title>" + strings.Repeat("x", 300) + "</title>", strings.Repeat("x", 200) + "…"},
		{"<title>\xff\xfebad</title>", "?bad"},
		{"<title>a\x1b]0;pwned\x07b &#27;[2J</title>", "a ]0;pwned b [2J"},
	} {
		if got := Title([]byte(c.body)); got != c.want {
			t.Errorf("Title(%.40q) = %q, want %q", c.body, got, c.want)
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
		if len([]rune(got)) > 201 || strings.ContainsAny(got, "\n\t\x1b\x07") {
			t.Fatalf("Title = %q", got)
		}
	})
}
