package workload

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/traffic/accesslog"
	"github.com/phptune/phptune/internal/traffic/load"
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

func TestFromLog(t *testing.T) {
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
	w, sum, err := FromLog(log, accesslog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w.Writes || len(w.Requests) != 1 || w.Requests[0].Weight != 2 || sum.Static != 1 || w.Name != "log:"+log {
		t.Fatalf("%+v %+v", w, sum)
	}
	w, _, err = FromLog(log, accesslog.Options{AllowPost: true})
	if err != nil || !w.Writes || len(w.Requests) != 2 {
		t.Fatalf("with posts: %+v %v", w, err)
	}
	if _, _, err := FromLog(filepath.Join(dir, "nope"), accesslog.Options{}); err == nil {
		t.Fatal("a missing log accepted")
	}
}

// TestIsPath: a spec starting with "/" is a page unless it is a regular
// file here, which is a scenario file given by its absolute path (a tune
// once loaded "/tmp/compat.scenario" as a page of the site).
func TestIsPath(t *testing.T) {
	file := filepath.Join(t.TempDir(), "shop.scenario")
	if err := os.WriteFile(file, []byte("1 GET /\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		spec string
		want bool
	}{
		{"/shop/", true}, {"/", true}, {"/tmp", true}, {file, false}, {"shop.scenario", false}, {"front", false},
		{"/root/mistyped.scenario", false},
	} {
		if got := IsPath(tc.spec); got != tc.want {
			t.Errorf("IsPath(%q) = %v, want %v", tc.spec, got, tc.want)
		}
	}
}
