package fpmstatus

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

// The fixtures were captured from php-fpm 8.2.36 (Debian 12), a static pool
// of 4, idle and then under 16 concurrent requests to a 50 ms script.

func read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFixturesAgree(t *testing.T) {
	// The same instant can't be captured in both formats, but the busy
	// captures agree on the pool's shape and both list 4 workers.
	for _, tt := range []struct {
		file            string
		workers         int
		active, maxAct  int64
		runningOrReader bool
	}{
		{"idle_full.json", 4, 1, 1, true},
		{"idle_full.txt", 4, 1, 1, true},
		{"busy_full.json", 4, 4, 4, true},
		{"busy_full.txt", 4, 4, 4, true},
		{"plain.txt", 0, 1, 1, false},
		{"plain.json", 0, 1, 1, false},
	} {
		st, err := Parse(read(t, tt.file))
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if st.Pool != "www" || st.ProcessManager != "static" || st.TotalProcesses != 4 {
			t.Errorf("%s: pool %+v", tt.file, st)
		}
		if st.ActiveProcesses != tt.active || st.MaxActiveProcesses < tt.maxAct || st.IdleProcesses+st.ActiveProcesses != st.TotalProcesses {
			t.Errorf("%s: active %d max %d idle %d", tt.file, st.ActiveProcesses, st.MaxActiveProcesses, st.IdleProcesses)
		}
		if len(st.Workers) != tt.workers {
			t.Errorf("%s: %d workers, want %d", tt.file, len(st.Workers), tt.workers)
		}
		if _, ok := st.Extra["start since"]; !ok {
			t.Errorf("%s: start since not kept: %v", tt.file, st.Extra)
		}
	}
}

func TestIdleJSONExact(t *testing.T) {
	st, err := ParseJSON(read(t, "idle_full.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := results.FPMWorker{PID: 12887, State: "Idle", Requests: 1, LastRequestMemB: 2097152,
		RequestDurationUs: 51769, RequestURI: "/slow.php", Script: "/tmp/cap/www/slow.php"}
	if !reflect.DeepEqual(st.Workers[0], want) {
		t.Errorf("worker 0: %+v\nwant %+v", st.Workers[0], want)
	}
	if st.AcceptedConn != 4 {
		t.Errorf("accepted conn %d", st.AcceptedConn)
	}
}

func TestIdleTextExact(t *testing.T) {
	st, err := ParseText(read(t, "idle_full.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The worker serving the page itself is the one Running.
	w := st.Workers[0]
	if w.PID != 12887 || w.State != "Running" || w.RequestURI != "/status?full" || w.Script != "" || w.RequestDurationUs != 181 {
		t.Errorf("worker 2: %+v", w)
	}
	if st.AcceptedConn != 5 {
		t.Errorf("accepted conn %d", st.AcceptedConn)
	}
}

func TestNotStatus(t *testing.T) {
	for _, b := range []string{"File not found.\n", "", "{}", `{"pool":"www","accepted conn":"x"}`, "pool: www\nlisten queue: many\n"} {
		if _, err := Parse([]byte(b)); !errors.Is(err, ErrNotStatus) {
			t.Errorf("Parse(%q) = %v, want ErrNotStatus", b, err)
		}
	}
}

func fuzzCheck(t *testing.T, st *results.FPMStatus, err error) {
	if err != nil {
		if !errors.Is(err, ErrNotStatus) {
			t.Errorf("error without ErrNotStatus: %v", err)
		}
		return
	}
	if st == nil {
		t.Error("nil status without an error")
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, n := range []string{"idle_full.json", "busy_full.json", "plain.json"} {
		f.Add(read(f, n))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := ParseJSON(b)
		fuzzCheck(t, st, err)
	})
}

func FuzzParseText(f *testing.F) {
	for _, n := range []string{"idle_full.txt", "busy_full.txt", "plain.txt"} {
		f.Add(read(f, n))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := ParseText(b)
		fuzzCheck(t, st, err)
		if err == nil && st.Pool == "" && len(b) == 0 {
			t.Error("empty input accepted")
		}
	})
}

// TestRecountFromWorkers: with kept FastCGI connections php-fpm's pool
// counters drift (a page captured from a 2-worker pool behind nginx's
// fastcgi_keep_conn said 119 active); the worker list is what counts.
func TestRecountFromWorkers(t *testing.T) {
	page := `{"pool":"www2","process manager":"static","start time":1795488268,"start since":5,"accepted conn":1623,"listen queue":0,"max listen queue":0,"listen queue len":0,"idle processes":0,"active processes":119,"total processes":119,"max active processes":119,"max children reached":0,"slow requests":0,` +
		`"processes":[{"pid":4296,"state":"Reading headers","start time":1795488268,"start since":5,"requests":800,"request duration":12,"request method":"-","request uri":"-","content length":0,"user":"-","script":"-","last request cpu":0.00,"last request memory":0},` +
		`{"pid":4297,"state":"Idle","start time":1795488268,"start since":5,"requests":823,"request duration":900,"request method":"GET","request uri":"/index.php","content length":0,"user":"-","script":"/lab/www/index.php","last request cpu":0.00,"last request memory":2097152}]}`
	st, err := Parse([]byte(page))
	if err != nil {
		t.Fatal(err)
	}
	if st.TotalProcesses != 2 || st.ActiveProcesses != 1 || st.IdleProcesses != 1 {
		t.Errorf("total %d active %d idle %d, want 2 1 1", st.TotalProcesses, st.ActiveProcesses, st.IdleProcesses)
	}
	if st.Extra["page_active_processes"] != int64(119) {
		t.Errorf("the page's own count is not kept: %v", st.Extra)
	}
	// A page whose counts agree with its workers is left as it is.
	ok := strings.Replace(strings.Replace(strings.Replace(page, `"active processes":119`, `"active processes":1`, 1), `"total processes":119`, `"total processes":2`, 1), `"idle processes":0`, `"idle processes":1`, 1)
	if st, _ := Parse([]byte(ok)); st.Extra["page_active_processes"] != nil {
		t.Errorf("extra %v on a page that agrees with its workers", st.Extra)
	}
}
