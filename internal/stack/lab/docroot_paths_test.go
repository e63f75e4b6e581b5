package lab_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
)

// TestDocRootPaths brings up labs on docroots whose names hold the
// characters nginx's syntax treats specially (the path once went into
// nginx.conf unquoted: "--docroot '/x;add_header X-Injected yes'" made nginx
// send that header), behind nginx, lighttpd, Caddy and h2o, each with its
// own quoting. Each docroot is either served (GET / returns its index.php's
// output and no injected header) or refused by lab.Up, with the character
// and the fix, before the lab's directory exists.
func TestDocRootPaths(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("brings up labs as the stack account; run as root")
	}
	home := labtest.Home(t)
	// The stack account must traverse the docroot's parents, and
	// t.TempDir's parents are private to root.
	base, err := os.MkdirTemp("", "phptune-docroots-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, dir string
		refused   string // part of lab.Up's error; "" when served
		// refusedBy are the servers that refuse it; every server when
		// empty and refused is set.
		refusedBy []string
	}{
		{"semicolon injection", ";add_header X-Injected yes", "", nil},
		{"open brace", "{", `'{'`, []string{knob.CaddyFPM}},
		{"close brace", "a}b", `'}'`, []string{knob.CaddyFPM}},
		{"double quote", `say "hi"`, "", nil},
		{"single quote", "it's", "", nil},
		{"space", "my app", "", nil},
		{"hash", "#app", "", nil},
		{"backslash", `back\slash`, `'\\'`, []string{knob.CaddyFPM}},
		{"trailing backslash", `slash\`, `'\\'`, []string{knob.LighttpdFPM, knob.CaddyFPM}},
		{"YAML and lighttpd syntax", `a: b" => ( "x" ) #`, "", nil},
		{"non-ASCII", "café", "", nil},
		{"newline", "a\nadd_header X-Injected yes;", `a newline ('\n')`, nil},
		{"dollar", "$uri", `'$'`, nil},
	}
	servers := []string{knob.NginxFPM}
	if _, err := os.Stat("/usr/sbin/lighttpd"); err == nil {
		servers = append(servers, knob.LighttpdFPM)
	}
	if _, err := os.Stat("/usr/bin/caddy"); err == nil {
		servers = append(servers, knob.CaddyFPM)
	}
	if _, err := os.Stat("/usr/bin/h2o"); err == nil {
		servers = append(servers, knob.H2OFPM)
	}
	ctx := context.Background()
	for i, c := range cases {
		dir := filepath.Join(base, c.dir)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		marker := fmt.Sprintf("docroot %d served", i)
		if err := os.WriteFile(filepath.Join(dir, "index.php"), []byte("<?php echo '"+marker+"';"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, server := range servers {
			refused := c.refused
			if len(c.refusedBy) > 0 && !slices.Contains(c.refusedBy, server) {
				refused = ""
			}
			t.Run(c.name+"/"+server, func(t *testing.T) {
				testDocRoot(t, ctx, home, fmt.Sprintf("docroot%d", i), dir, marker, server, refused)
			})
		}
	}
}

// testDocRoot brings up a lab on dir behind server and checks that it
// serves marker, or that it is refused before it starts saying refused.
func testDocRoot(t *testing.T, ctx context.Context, home, name, dir, marker, server, refused string) {
	l, err := lab.Up(ctx, lab.Options{Name: name, DocRoot: dir, Set: []string{"server=" + server}})
	if refused != "" {
		if err == nil {
			lab.Down(name)
			t.Fatalf("lab.Up served docroot %q, want it refused", dir)
		}
		for _, want := range []string{"--docroot", refused, "rename the directory"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("lab.Up error %q lacks %q", err, want)
			}
		}
		if _, serr := os.Stat(filepath.Join(home, "labs", name)); !os.IsNotExist(serr) {
			t.Errorf("the refused lab's directory exists (%v): it was refused after it started", serr)
		}
		return
	}
	if err != nil {
		t.Fatalf("lab.Up on docroot %q: %v", dir, err)
	}
	defer func() {
		if err := lab.Down(name); err != nil {
			t.Error(err)
		}
	}()
	for _, path := range []string{"/", "/index.php", "/some/pretty/path"} {
		code, header, body := fetch(t, l.URL+path)
		if code != 200 || body != marker {
			t.Errorf("GET %s = %d %q, want 200 %q", path, code, body, marker)
		}
		if v := header.Get("X-Injected"); v != "" {
			t.Errorf("GET %s carries an injected header X-Injected: %q", path, v)
		}
	}
}

func fetch(t *testing.T, u string) (int, http.Header, string) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}
