package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

// findSecrets returns the secrets that occur in data.
func findSecrets(data []byte, secrets []string) []string {
	var found []string
	for _, s := range secrets {
		if bytes.Contains(data, []byte(s)) {
			found = append(found, s)
		}
	}
	return found
}

// TestBenchRedactsSecrets: credentials given to bench in headers, a form
// body, the URL's userinfo and query, and under a --redact name reach the
// server but not the results database, the JSON, the text or the HTML
// report, nor a report rendered again; the database is private.
func TestBenchRedactsSecrets(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("PHPTUNE_HOME", home)
	dir := t.TempDir()
	t.Chdir(dir)
	secrets := []string{"Zk1-api-key", "Zk2-bearer", "Zk3-form-pass", "Zk4-query-token", "Zk5-userinfo", "Zk6-tenant", "Zk7-cookie"}

	var mu sync.Mutex
	var got []string // what the server received
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		if len(got) == 0 {
			got = []string{r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"), string(body), r.URL.RawQuery, r.Header.Get("X-Tenant"), r.Header.Get("Cookie")}
		}
		mu.Unlock()
		fmt.Fprint(w, "ok\n")
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	target := "http://app:Zk5-userinfo@" + ln.Addr().String() + "/index.php?a=1&token=Zk4-query-token"

	stdout, errs, code := runCLI(t, "bench", "-c", "1", "-n", "20", "--json", "--report", "report.html",
		"-H", "X-Api-Key: Zk1-api-key", "--header=Authorization: Bearer Zk2-bearer", "-H", "X-Tenant: Zk6-tenant", "-HCookie: s=Zk7-cookie",
		"--body", "log=admin&pwd_pass=Zk3-form-pass", "--redact", "X-Tenant", target)
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s", code, errs)
	}
	mu.Lock()
	sent := strings.Join(got, " ")
	mu.Unlock()
	for _, s := range []string{"Zk1-api-key", "Bearer Zk2-bearer", "pwd_pass=Zk3-form-pass", "token=Zk4-query-token", "Zk6-tenant", "s=Zk7-cookie"} {
		if !strings.Contains(sent, s) {
			t.Errorf("the server did not receive %q (redaction must not change the requests): %q", s, sent)
		}
	}

	var b results.Bench
	if err := json.Unmarshal([]byte(stdout), &b); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	for _, want := range []string{"-H 'X-Api-Key: <redacted>'", "'--header=Authorization: <redacted>'", "-H 'X-Tenant: <redacted>'", "--body 'log=admin&pwd_pass=<redacted>'", "app:<redacted>@", "token=<redacted>"} {
		if !strings.Contains(b.Command, want) {
			t.Errorf("recorded command lacks %q: %s", want, b.Command)
		}
	}
	outputs := map[string][]byte{"stdout (--json)": []byte(stdout), "stderr": []byte(errs)}
	html, err := os.ReadFile("report.html")
	if err != nil {
		t.Fatal(err)
	}
	outputs["report.html"] = html
	for _, format := range []string{"text", "json", "html"} {
		out, rerrs, code := runCLI(t, "report", b.ID, "--format", format, "-o", "again."+format)
		if code != 0 {
			t.Fatalf("report --format %s: exit %d %s%s", format, code, out, rerrs)
		}
		data, _ := os.ReadFile("again." + format)
		outputs["report --format "+format] = data
	}
	text, _, _ := runCLI(t, "bench", "-c", "1", "-n", "5", "--no-save", "-H", "X-Api-Key: Zk1-api-key", target)
	outputs["text output"] = []byte(text)
	db := filepath.Join(home, "results.db")
	for _, p := range []string{db, db + "-wal"} {
		data, _ := os.ReadFile(p)
		outputs[filepath.Base(p)] = data
	}
	for name, data := range outputs {
		if found := findSecrets(data, secrets); len(found) > 0 {
			t.Errorf("%s holds %v", name, found)
		}
	}

	// Private: the home 0700, the database 0600.
	for p, want := range map[string]os.FileMode{home: 0o700, db: 0o600} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if os.Geteuid() == 0 && p == home {
			want = 0o710 // root's home: root:phptune
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s is %v, want %v", p, st.Mode().Perm(), want)
		}
	}
	if _, err := os.Stat(db + "-wal"); err == nil {
		if st, _ := os.Stat(db + "-wal"); st.Mode().Perm() != 0o600 {
			t.Errorf("results.db-wal is %v", st.Mode().Perm())
		}
	}
	_ = context.Background
}
