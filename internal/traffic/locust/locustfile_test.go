package locust

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/traffic/load"
)

func TestGenerate(t *testing.T) {
	tests := []struct {
		name       string
		w          Workload
		want       []string // in the source
		notWant    []string // never in the source
		secrets    int
		wantErrSub string
	}{
		{name: "one page closed", w: Workload{Requests: []load.Request{{Path: "/index.php"}}, TimeoutS: 10},
			want: []string{`(1, "GET", "/index.php", [], None, 0),`, "OPEN_INTERVAL = 0\n", "TIMEOUT = 10.0", "EXPECT = None"}},
		{name: "mix with comment POST and open model",
			w: Workload{Requests: []load.Request{
				{Weight: 8, Method: "GET", Path: "/"},
				{Weight: 1, Method: "POST", Path: "/wp-comments-post.php", Body: []byte("comment=Hi&author=b"),
					Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, ExpectStatus: 302},
			}, RatePerUser: 12.5, Expect: `<title>My "blog"`},
			want: []string{`(8, "GET", "/", [], None, 0),`, `(1, "POST", "/wp-comments-post.php", [("Content-Type", "application/x-www-form-urlencoded")], "comment=Hi\u0026author=b".encode(), 302),`,
				"OPEN_INTERVAL = 0.08\n", `EXPECT = re.compile("\u003ctitle\u003eMy \"blog\"")`}},
		{name: "secrets stay out",
			w: Workload{Requests: []load.Request{{Path: "/?token=abc123", Body: []byte("log=a&pwd=hunter2"),
				Header: http.Header{"Authorization": {"Bearer xyz789"}, "X-Custom": {"mine"}, "X-Site-Id": {"sid42"}}}}, Redact: []string{"X-Site-Id"}},
			want:    []string{`_secret("PHPTUNE_SECRET_1")`, `("X-Custom", "mine")`},
			notWant: []string{"abc123", "hunter2", "xyz789", "sid42"}, secrets: 4},
		{name: "binary body", w: Workload{Requests: []load.Request{{Method: "PUT", Path: "/x", Body: []byte{0xff, 0, 1}}}},
			want: []string{`base64.b64decode("/wAB")`}},
		{name: "no request", w: Workload{}, wantErrSub: "no request"},
		{name: "bad method", w: Workload{Requests: []load.Request{{Method: "G T", Path: "/"}}}, wantErrSub: "not an HTTP method"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lf, err := Generate(tc.w)
			if tc.wantErrSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrSub) {
					t.Fatalf("err %v, want %q", err, tc.wantErrSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			src := string(lf.Source)
			for _, w := range tc.want {
				if !strings.Contains(src, w) {
					t.Errorf("source lacks %s:\n%s", w, src)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(src, w) {
					t.Errorf("source holds %s", w)
				}
				for _, s := range lf.Secrets {
					if strings.Contains(s.What, w) {
						t.Errorf("secret description %q holds %s", s.What, w)
					}
				}
			}
			if len(lf.Secrets) != tc.secrets {
				t.Errorf("%d secrets, want %d: %+v", len(lf.Secrets), tc.secrets, lf.Secrets)
			}
		})
	}
}

// TestGeneratePython compiles the generated files with Debian's Python:
// every literal is Python's.
func TestGeneratePython(t *testing.T) {
	if _, err := os.Stat(Python); err != nil {
		t.Skip("no python3")
	}
	lf, err := Generate(Workload{Requests: []load.Request{
		{Weight: 2, Path: "/é?q=\"x\"\\", Header: http.Header{"X-Api-Key": {"k"}, "Accept": {"text/html"}}},
		{Method: "POST", Path: "/p", Body: []byte("a=\u2028b\n"), ExpectStatus: 302},
	}, Expect: `\d+ (a|b)$`, RatePerUser: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "locustfile.py")
	if err := os.WriteFile(p, lf.Source, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(Python, "-m", "py_compile", p).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s\n%s", err, out, lf.Source)
	}
}
