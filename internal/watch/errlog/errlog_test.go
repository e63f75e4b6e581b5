package errlog

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/phptune/phptune/internal/model/results"
)

// The fixtures are lines the servers wrote (Debian 12: nginx 1.22,
// php-fpm 8.2, Apache 2.4 with mod_proxy_fcgi and mod_php), provoked in
// labs and in a hand-started nginx + php-fpm pair (for the settings labs
// do not expose: request_terminate_timeout, fastcgi_read_timeout, an
// upstream block, a low open files limit):
//
//   - nginx_fpm_backlog_full: listen.backlog=8, nginx.listen_backlog=8,
//     pm=static, pm.max_children=1, hello at -c 200;
//   - nginx_fpm_refused, nginx_fpm_socket_missing: php-fpm killed, then
//     its socket removed;
//   - nginx_fpm_worker_gone: workers killed with SIGKILL/SIGTERM mid-request,
//     unix socket and TCP, and a script that kills its own worker;
//   - nginx_upstream_read_timeout: fastcgi_read_timeout 1s, a 3 s request;
//   - nginx_no_live_upstreams: an upstream of two dead sockets;
//   - nginx_worker_connections: worker_connections 64 at -c 200;
//   - nginx_open_files*: nginx under prlimit --nofile=40 at -c 200;
//   - php_*: a script exhausting memory_limit=8M, one looping past
//     set_time_limit(1);
//   - fpm_*: pm=dynamic, max_children=2, pm.max_requests=5 at -c 50;
//     a dynamic pool of 40 with 1 spare at -c 100; the kills above;
//     request_terminate_timeout=1s;
//   - apache_*: MaxRequestWorkers 4 (event) and 2 (prefork) at -c 50;
//     php-fpm killed behind event + mod_proxy_fcgi; workers killed
//     mid-request.
//
// testdata/SOURCE/CLASS.log holds lines that must each be of CLASS;
// testdata/ignored/SOURCE.log lines that must not be counted;
// testdata/sessions/ whole stretches of a log, to count requests.

func lines(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func classify(src Source, line string) (string, bool) {
	switch src {
	case Nginx:
		l, ok := ParseNginx(line)
		return ClassifyNginx(l), ok
	case FPM:
		l, ok := ParseFPM(line)
		return ClassifyFPM(l), ok
	case Apache:
		l, ok := ParseApache(line)
		return ClassifyApache(l), ok
	}
	return "", false
}

func TestFixtures(t *testing.T) {
	seen := map[string]bool{}
	for _, src := range Sources {
		files, err := filepath.Glob(filepath.Join("testdata", string(src), "*.log"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no fixtures (%v)", src, err)
		}
		for _, f := range files {
			want := strings.TrimSuffix(filepath.Base(f), ".log")
			cl, ok := Lookup(want)
			if !ok {
				t.Errorf("%s: no class %s", f, want)
				continue
			}
			if cl.Source != "" && cl.Source != src {
				t.Errorf("%s: class %s belongs to %s's log", f, want, cl.Source)
			}
			ls := lines(t, f)
			if len(ls) == 0 {
				t.Errorf("%s: empty", f)
			}
			for i, l := range ls {
				got, ok := classify(src, l)
				if !ok || got != want {
					t.Errorf("%s:%d: parsed %v, class %q, want %q\n%s", f, i+1, ok, got, want, l)
				}
			}
			// The same lines through the Scanner: each counted once.
			s := NewScanner()
			for _, l := range ls {
				s.Line(src, l)
			}
			c := s.Counts()
			if len(c) != 1 || c[0].Class != want || c[0].Lines != int64(len(ls)) || c[0].Source != src || c[0].Example != Example(ls[0]) {
				t.Errorf("%s: counts %+v", f, c)
			}
			if cl.Status != 0 && c[0].Requests != int64(len(ls)) {
				t.Errorf("%s: %d requests for %d lines of a failing class", f, c[0].Requests, len(ls))
			}
			seen[want] = true
		}
		ign := filepath.Join("testdata", "ignored", string(src)+".log")
		for i, l := range lines(t, ign) {
			if got, _ := classify(src, l); got != "" {
				t.Errorf("%s:%d: class %q, want none\n%s", ign, i+1, got, l)
			}
		}
	}
	// The classes no lab here produced, named so that adding a fixture
	// for one is noticed: the test fails until it leaves this list.
	notCaptured := map[string]string{
		"nginx_fpm_connect_failed":       "an errno other than 2, 11 and 111 (e.g. 13: permission denied on the socket)",
		"nginx_upstream_connect_timeout": "a TCP backlog that stays full for fastcgi_connect_timeout (60 s)",
		"nginx_other":                    "catch-all",
		"apache_fpm_backlog_full":        "Apache connects to a unix socket blocking: a full backlog queues it instead",
		"apache_fpm_connect_failed":      "an errno other than 11 and 111",
		"apache_other":                   "catch-all",
		"php_fatal":                      "any other fatal error",
		"php_message":                    "warnings and notices",
		"fpm_worker_exit_error":          "a worker exiting with a non-zero code",
		"fpm_other":                      "catch-all",
	}
	for _, c := range classes {
		_, excused := notCaptured[c.Name]
		if seen[c.Name] == excused {
			t.Errorf("class %s: fixture %v, listed as not captured %v", c.Name, seen[c.Name], excused)
		}
	}
}

func TestClassesComplete(t *testing.T) {
	names := map[string]bool{}
	s := Settings{Knobs: map[string]string{"listen.backlog": "8", "pm.max_children": "1"}, Somaxconn: 4096}
	for _, c := range classes {
		if names[c.Name] {
			t.Errorf("class %s twice", c.Name)
		}
		names[c.Name] = true
		if c.What == "" || c.Cause == nil || c.Fix == nil {
			t.Errorf("class %s: What, Cause or Fix missing", c.Name)
			continue
		}
		for _, txt := range []string{c.Cause(s), c.Fix(s), c.Cause(Settings{}), c.Fix(Settings{})} {
			if txt == "" || strings.Contains(txt, "%!") {
				t.Errorf("class %s: %q", c.Name, txt)
			}
		}
	}
}

func TestSessions(t *testing.T) {
	for _, tt := range []struct {
		file string
		src  Source
		want []Count
	}{
		// Two lines per request: AH02454 (with the errno) and AH01079.
		{"apache-fpm-refused.log", Apache, []Count{{Class: "apache_fpm_refused", Lines: 2, Requests: 1}}},
		// AH01067 + AH01075 three times, then PHP's two fatal errors.
		{"apache-fpm-died.log", Apache, []Count{
			{Class: "apache_fpm_worker_gone", Lines: 6, Requests: 3},
			{Class: "php_memory_limit", Lines: 1, Requests: 1},
			{Class: "php_max_execution_time", Lines: 1, Requests: 1},
		}},
		// *11 tried both servers of the upstream: one request; then
		// two requests found no live server.
		{"nginx-upstream-retry.log", Nginx, []Count{
			{Class: "nginx_fpm_socket_missing", Lines: 2, Requests: 1},
			{Class: "nginx_no_live_upstreams", Lines: 2, Requests: 2},
		}},
	} {
		s := NewScanner()
		f, err := os.Open(filepath.Join("testdata", "sessions", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		n, err := s.Read(tt.src, f)
		f.Close()
		if err != nil || n != s.Lines(tt.src) {
			t.Fatalf("%s: %d lines, %v", tt.file, n, err)
		}
		var got []Count
		for _, c := range s.Counts() {
			if c.Source != tt.src || c.Example == "" {
				t.Errorf("%s: %+v", tt.file, c)
			}
			got = append(got, Count{Class: c.Class, Lines: c.Lines, Requests: c.Requests})
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.file, got, tt.want)
		}
	}
}

func TestParseNginx(t *testing.T) {
	line := lines(t, "testdata/nginx/nginx_fpm_backlog_full.log")[0]
	l, ok := ParseNginx(line)
	want := NginxLine{Time: "2026/11/23 22:16:05", Level: "error", PID: 24608, Conn: 25,
		Message:  "connect() to unix:/var/tmp/phptune-errlog/labs/el1/fpm/php-fpm.sock failed (11: Resource temporarily unavailable) while connecting to upstream",
		Request:  "GET / HTTP/1.1",
		Upstream: "fastcgi://unix:/var/tmp/phptune-errlog/labs/el1/fpm/php-fpm.sock:"}
	if !ok || l != want {
		t.Errorf("ParseNginx:\n got %+v\nwant %+v", l, want)
	}
	for _, bad := range []string{"", "2026/11/23 22:16:02", "2026/11/23 22:16:02 [loud] 1#1: x", "2026-11-23 22:16:02 [error] 1#1: x", "2026/11/23 22:16:02 [error] x#1: y"} {
		if _, ok := ParseNginx(bad); ok {
			t.Errorf("ParseNginx(%q) accepted", bad)
		}
	}
}

func TestParseFPM(t *testing.T) {
	l, ok := ParseFPM(lines(t, "testdata/php-fpm/fpm_max_children_reached.log")[0])
	want := FPMLine{Time: "23-Nov-2026 22:16:29", Level: "WARNING", Pool: "www", Message: "server reached pm.max_children setting (2), consider raising it"}
	if !ok || l != want {
		t.Errorf("ParseFPM:\n got %+v\nwant %+v", l, want)
	}
	// A worker's output without decoration: a level, no time.
	l, ok = ParseFPM("NOTICE: PHP message: PHP Warning:  x")
	if !ok || l.Level != "NOTICE" || l.Time != "" || l.Message != "PHP message: PHP Warning:  x" {
		t.Errorf("undecorated: %+v %v", l, ok)
	}
	for _, bad := range []string{"", "hello", "[23-Nov-2026 22:16:29] LOUD: x", "[x] WARNING: y"} {
		if _, ok := ParseFPM(bad); ok {
			t.Errorf("ParseFPM(%q) accepted", bad)
		}
	}
}

func TestParseApache(t *testing.T) {
	ls := lines(t, "testdata/sessions/apache-fpm-died.log")
	l, ok := ParseApache(ls[1])
	want := ApacheLine{Time: "Mon Nov 23 22:19:38.206210 2026", Module: "proxy_fcgi", Level: "error", PID: 29980, TID: 29999,
		Errno: 104, Client: "127.0.0.1:44664", Code: "AH01075", Message: "Error dispatching request to :33847: "}
	if !ok || l != want {
		t.Errorf("ParseApache:\n got %+v\nwant %+v", l, want)
	}
	l, ok = ParseApache(lines(t, "testdata/apache/apache_fpm_refused.log")[0])
	if !ok || l.Errno != 111 || l.Code != "AH02454" || l.Client != "" || !strings.HasPrefix(l.Message, "FCGI: attempt to connect") {
		t.Errorf("AH02454: %+v", l)
	}
	for _, bad := range []string{"", "AH00558: apache2: Could not reliably determine", "[short] [x:error] y", "[Mon Nov 23 22:19:38.206210 2026] [noerror] y"} {
		if _, ok := ParseApache(bad); ok {
			t.Errorf("ParseApache(%q) accepted", bad)
		}
	}
}

func TestReadLongAndUnterminatedLines(t *testing.T) {
	eagain := lines(t, "testdata/nginx/nginx_fpm_backlog_full.log")[0]
	long := eagain + strings.Repeat("x", 3*MaxLine)
	in := long + "\n" + "garbage\r\n" + eagain // no final newline
	s := NewScanner()
	n, err := s.Read(Nginx, strings.NewReader(in))
	if err != nil || n != 3 {
		t.Fatalf("Read: %d lines, %v", n, err)
	}
	c := s.Counts()
	if len(c) != 1 || c[0].Class != "nginx_fpm_backlog_full" || c[0].Lines != 2 || c[0].Requests != 2 {
		t.Fatalf("counts %+v", c)
	}
	if len(c[0].Example) > exampleLimit+len("…") {
		t.Errorf("example of %d bytes", len(c[0].Example))
	}
}

func TestExample(t *testing.T) {
	got := Example("a\x1b]52;c;ZXZpbA==\x07b\u009b\xffc")
	if got != `a\x1b]52;c;ZXZpbA==\ab\u009b\xffc` {
		t.Errorf("Example = %q", got)
	}
	long := strings.Repeat("é", exampleLimit)
	got = Example(long)
	if !utf8.ValidString(got) || len(got) > exampleLimit+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("Example(long) = %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}

func TestExplain(t *testing.T) {
	s := NewScanner()
	for _, l := range lines(t, "testdata/nginx/nginx_fpm_backlog_full.log") {
		s.Line(Nginx, l)
	}
	s.Line(FPM, lines(t, "testdata/php-fpm/fpm_max_children_reached.log")[0])
	set := Settings{Knobs: map[string]string{"listen.backlog": "8", "pm.max_children": "1"}}
	got := Explain(s.Counts(), Generator{StatusCodes: map[string]int64{"200": 10, "502": 5}}, set, []Source{Nginx, FPM})
	want := []string{
		"3 of 5 502s were nginx's connect() to the fpm socket failing with EAGAIN: the fpm socket's backlog (listen.backlog=8) was full: every worker (pm.max_children=1) was busy and the queue of waiting connections had no room left, so nginx answered 502 at once; raise listen.backlog and net.core.somaxconn (the kernel caps the backlog at it), or add workers (pm.max_children) if the CPU and memory allow.",
		"2 of the 5 502s are in no log line phptune classifies.",
		"php-fpm reaching pm.max_children (logged once): the pool wanted more workers than pm.max_children=1, so requests queued in the socket's backlog (listen.backlog=8); php-fpm logs this once per spell at the limit, not per request; raise pm.max_children if the CPU and memory allow (phptune tune sizes it), or keep it and give the queue room (listen.backlog).",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Explain:\n got %q\nwant %q", got, want)
	}

	// More lines than the generator's count (the warm-up's tail): the
	// count attributed stops at the generator's, and the rest is said.
	got = Explain(s.Counts(), Generator{StatusCodes: map[string]int64{"502": 2}}, Settings{Knobs: map[string]string{"listen.backlog": "65535"}, Somaxconn: 4096}, []Source{Nginx})
	if len(got) < 2 || !strings.HasPrefix(got[0], "2 of 2 502s were") || !strings.Contains(got[0], "listen.backlog=65535, cut by the kernel to net.core.somaxconn=4096") ||
		!strings.HasPrefix(got[1], "(The logs hold 3 such failures for the 2 502s") {
		t.Errorf("Explain, more lines: %q", got)
	}

	// With a warm-up, a few more 502s than lines, no more than the
	// connections: the requests at the mark.
	got = Explain(s.Counts(), Generator{StatusCodes: map[string]int64{"502": 7}, Connections: 4, Warmup: true}, set, []Source{Nginx})
	if len(got) < 2 || got[1] != "4 of the 7 502s are in no log line of the measured part: likely requests failing as the warm-up ended (the logs are marked a moment after the generator starts counting)." {
		t.Errorf("Explain, warm-up boundary: %q", got)
	}

	// More than the connections and 1%: not put down to the warm-up.
	got = Explain(s.Counts(), Generator{StatusCodes: map[string]int64{"502": 300}, Connections: 4, Warmup: true}, set, []Source{Nginx})
	if len(got) < 2 || got[1] != "297 of the 300 502s are in no log line phptune classifies." {
		t.Errorf("Explain, many unexplained: %q", got)
	}

	// Nothing logged at all.
	got = Explain(nil, Generator{StatusCodes: map[string]int64{"504": 7, "404": 3}}, Settings{}, []Source{Nginx, FPM})
	if !reflect.DeepEqual(got, []string{"7 504s: no line of the servers' logs (nginx, php-fpm) explains them."}) {
		t.Errorf("Explain, nothing logged: %q", got)
	}

	// nginx out of worker_connections: the client sees resets.
	s = NewScanner()
	s.Line(Nginx, lines(t, "testdata/nginx/nginx_worker_connections.log")[0])
	got = Explain(s.Counts(), Generator{StatusCodes: map[string]int64{"200": 1}, ErrorsByClass: map[string]int64{"reset": 20, "closed_early": 2}},
		Settings{Knobs: map[string]string{"nginx.worker_connections": "64"}}, []Source{Nginx})
	if len(got) != 1 || !strings.HasPrefix(got[0], "22 reset/closed_early errors at the client came with 1 lines of nginx running out of worker_connections: ") ||
		!strings.Contains(got[0], "nginx.worker_connections=64") {
		t.Errorf("Explain, worker_connections: %q", got)
	}

	// The generator talking FastCGI: no server log, its own class.
	got = Explain(nil, Generator{ErrorsByClass: map[string]int64{"connect_backlog_full": 9}}, set, []Source{FPM})
	if len(got) != 1 || !strings.HasPrefix(got[0], "9 connect_backlog_full errors were the generator's own connect()") {
		t.Errorf("Explain, fcgi: %q", got)
	}
}

func TestResultAndCombine(t *testing.T) {
	s := NewScanner()
	for _, l := range lines(t, "testdata/nginx/nginx_fpm_backlog_full.log") {
		s.Line(Nginx, l)
	}
	s.Line(FPM, lines(t, "testdata/php-fpm/fpm_max_children_reached.log")[0])
	knobs := map[string]string{"listen.backlog": "8", "pm.max_children": "1"}
	b := &results.Bench{StatusCodes: map[string]int64{"200": 7, "502": 3}, ErrorsByClass: map[string]int64{"status_5xx": 3}}
	r := Result(s, []LogRead{{Source: Nginx, Bytes: 1071}, {Source: FPM, Note: "n"}}, b, Settings{Knobs: knobs, Somaxconn: 4096})
	if len(r.Logs) != 2 || r.Logs[0] != (results.ServerLog{Name: "nginx", BytesRead: 1071, Lines: 3}) || r.Logs[1] != (results.ServerLog{Name: "php-fpm", Lines: 1, Note: "n"}) {
		t.Errorf("logs %+v", r.Logs)
	}
	if len(r.Classes) != 2 || r.Classes[0].Class != "nginx_fpm_backlog_full" || r.Classes[0].Requests != 3 || r.Classes[0].ClientStatus != 502 ||
		!strings.Contains(r.Classes[0].Cause, "listen.backlog=8") || r.Classes[1].Class != "fpm_max_children_reached" || r.Classes[1].Requests != 0 {
		t.Errorf("classes %+v", r.Classes)
	}
	if len(r.Explanations) != 2 || !strings.HasPrefix(r.Explanations[0], "3 of 3 502s were nginx's connect()") || r.Somaxconn != 4096 {
		t.Errorf("explanations %q", r.Explanations)
	}
	b.ServerErrors = r
	// Two rounds of the same configuration and one stored before the
	// logs were read.
	c := Combine([]*results.Bench{b, b, {StatusCodes: map[string]int64{"502": 5}}}, knobs)
	if c.Runs != 2 || len(c.Classes) != 2 || c.Classes[0].Lines != 6 || c.Classes[0].Requests != 6 || c.Classes[1].Lines != 2 {
		t.Errorf("combined %+v", c)
	}
	if len(c.Explanations) != 2 || !strings.HasPrefix(c.Explanations[0], "6 of 6 502s were") || !strings.HasPrefix(c.Explanations[1], "php-fpm reaching pm.max_children (logged 2 times)") {
		t.Errorf("combined explanations %q", c.Explanations)
	}
	if c := Combine([]*results.Bench{{}}, knobs); c.Runs != 0 || c.Explanations != nil {
		t.Errorf("nothing read: %+v", c)
	}
	// A clean run: logs read, nothing to explain.
	clean := Result(NewScanner(), []LogRead{{Source: Nginx}}, &results.Bench{StatusCodes: map[string]int64{"200": 10}}, Settings{})
	if len(clean.Classes) != 0 || len(clean.Explanations) != 0 || len(clean.Logs) != 1 {
		t.Errorf("clean %+v", clean)
	}
}

func checkCounts(t *testing.T, s *Scanner) {
	for _, c := range s.Counts() {
		if c.Requests < 0 || c.Requests > c.Lines || c.Lines <= 0 {
			t.Fatalf("count %+v", c)
		}
		if !utf8.ValidString(c.Example) || len(c.Example) > exampleLimit+len("…") || strings.ContainsAny(c.Example, "\x1b\n\r\x00") {
			t.Fatalf("example %q", c.Example)
		}
		if _, ok := Lookup(c.Class); !ok {
			t.Fatalf("class %q", c.Class)
		}
	}
}

func seed(f *testing.F, src Source) {
	files, _ := filepath.Glob(filepath.Join("testdata", string(src), "*.log"))
	files = append(files, filepath.Join("testdata", "ignored", string(src)+".log"))
	for _, p := range files {
		for _, l := range lines(f, p) {
			f.Add(l)
		}
	}
}

func FuzzParseNginx(f *testing.F) {
	seed(f, Nginx)
	f.Fuzz(func(t *testing.T, line string) {
		l, ok := ParseNginx(line)
		if !ok {
			return
		}
		if !strings.HasPrefix(line, l.Time) || !strings.Contains(line, l.Message) || l.PID < 0 || l.Conn < 0 || !nginxLevels[l.Level] {
			t.Fatalf("ParseNginx(%q) = %+v", line, l)
		}
		_ = ClassifyNginx(l)
	})
}

func FuzzParseFPM(f *testing.F) {
	seed(f, FPM)
	f.Fuzz(func(t *testing.T, line string) {
		l, ok := ParseFPM(line)
		if !ok {
			return
		}
		if !strings.Contains(line, l.Message) || !strings.Contains(line, l.Level+": ") || !strings.Contains(line, l.Time) {
			t.Fatalf("ParseFPM(%q) = %+v", line, l)
		}
		_ = ClassifyFPM(l)
	})
}

func FuzzParseApache(f *testing.F) {
	seed(f, Apache)
	for _, l := range lines(f, "testdata/sessions/apache-fpm-died.log") {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		l, ok := ParseApache(line)
		if !ok {
			return
		}
		if !strings.Contains(line, l.Message) || !strings.Contains(line, l.Time) || l.PID < 0 || l.TID < 0 || (l.Code != "" && !strings.Contains(line, l.Code+":")) {
			t.Fatalf("ParseApache(%q) = %+v", line, l)
		}
		_ = ClassifyApache(l)
	})
}

// FuzzScanner feeds whole logs (several lines, any bytes) to the Scanner
// as each source: counts stay consistent and examples safe to print.
func FuzzScanner(f *testing.F) {
	for _, src := range Sources {
		files, _ := filepath.Glob(filepath.Join("testdata", string(src), "*.log"))
		for _, p := range files {
			b, _ := os.ReadFile(p)
			f.Add(b)
		}
	}
	for _, p := range []string{"apache-fpm-died.log", "apache-fpm-refused.log", "nginx-upstream-retry.log"} {
		b, _ := os.ReadFile(filepath.Join("testdata", "sessions", p))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, log []byte) {
		s := NewScanner()
		for _, src := range Sources {
			if _, err := s.Read(src, strings.NewReader(string(log))); err != nil {
				t.Fatal(err)
			}
		}
		checkCounts(t, s)
		checkPHPRecord(t, PHPRecord(s.PHP()))
		_ = Explain(s.Counts(), Generator{StatusCodes: map[string]int64{"502": 3, "503": 1, "500": 2, "504": 1}}, Settings{}, Sources)
	})
}

// BenchmarkReadNginx reads the backlog-full lines of a c=1000 overload:
// hundreds of thousands per trial.
func BenchmarkReadNginx(b *testing.B) {
	one, _ := os.ReadFile("testdata/nginx/nginx_fpm_backlog_full.log")
	log := strings.Repeat(string(one), 10000)
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		s := NewScanner()
		if _, err := s.Read(Nginx, strings.NewReader(log)); err != nil {
			b.Fatal(err)
		}
	}
}
