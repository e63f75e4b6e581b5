package unit

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/testkit/goldentest"
)

func TestRenderGolden(t *testing.T) {
	site := Site{Listen: "127.0.0.1:8080", DocRoot: "/var/lib/phptune/labs/demo/www"}
	for _, c := range []struct {
		name  string
		set   []string
		front bool
		env   []string
	}{
		{"default", nil, false, nil},
		{"wordpress-dynamic", []string{"unit.pm=dynamic", "unit.processes=10", "unit.spare_processes=2", "unit.idle_timeout=30", "unit.max_requests=500", "unit.listen_backlog=1024"}, true,
			[]string{"PHPTUNE_DB_CONFIG=/var/lib/phptune/labs/demo/app/db.php"}},
		{"static-20", []string{"unit.processes=20"}, false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := knob.Defaults().Apply(append([]string{"server=unit"}, c.set...))
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			s := site
			s.FrontController, s.Env = c.front, c.env
			if c.front {
				s.StatusScript = "/var/lib/phptune/labs/demo/status/phptune-status.php"
			}
			got := Render(cfg, s)
			var any map[string]any
			if err := json.Unmarshal([]byte(got), &any); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			path := filepath.Join("testdata", c.name+".json")
			goldentest.CheckString(t, path, got)
		})
	}
}

func TestProcessesFollowPM(t *testing.T) {
	cfg, _ := knob.Defaults().Apply([]string{"server=unit", "unit.processes=7", "unit.spare_processes=3"})
	if p := Build(cfg, Site{DocRoot: "/x"}).Applications[AppName].Processes; p != int64(7) {
		t.Errorf("static: processes %#v, want 7", p)
	}
	cfg["unit.pm"] = "dynamic"
	if p, ok := Build(cfg, Site{DocRoot: "/x"}).Applications[AppName].Processes.(Processes); !ok || p.Max != 7 || p.Spare != 3 || p.IdleTimeout != 15 {
		t.Errorf("dynamic: processes %#v", p)
	}
}

const sampleStatus = `{
	"modules": {"php": {"version": "8.2.36", "lib": "/x/php.unit.so"}},
	"connections": {"accepted": 12, "active": 2, "idle": 1, "closed": 9},
	"requests": {"total": 40},
	"applications": {"app": {"processes": {"running": 4, "starting": 1, "idle": 2}, "requests": {"active": 2}}}
}`

func TestParseStatus(t *testing.T) {
	for _, c := range []struct {
		name, in, err string
	}{
		{"unit 1.35", sampleStatus, ""},
		{"no applications", `{"connections": {"accepted": 0, "active": 0, "idle": 0, "closed": 0}, "requests": {"total": 0}}`, ""},
		{"not json", "Active connections: 1", "not a Unit /status"},
		{"config, not status", `{"listeners": {}, "routes": []}`, "no connections or requests"},
		{"negative", `{"connections": {"accepted": -1}, "requests": {"total": 0}}`, "negative"},
		{"idle above running", `{"connections": {}, "requests": {"total": 1}, "applications": {"app": {"processes": {"running": 1, "idle": 2}}}}`, "idle of 1 running"},
		{"wrong type", `{"connections": {"accepted": "many"}, "requests": {"total": 0}}`, "not a Unit /status"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseStatus([]byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrNotStatus) {
					t.Fatalf("want an ErrNotStatus containing %q, got %v", c.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.name == "unit 1.35" {
				a := s.Applications["app"]
				if s.Connections.Accepted != 12 || s.Requests.Total != 40 || a.Processes.Running != 4 || a.Processes.Idle != 2 || a.Requests.Active != 2 {
					t.Errorf("parsed %+v", s)
				}
			}
		})
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte(sampleStatus))
	f.Add([]byte(`{"connections":{},"requests":{}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseStatus(b)
		if err != nil {
			if !errors.Is(err, ErrNotStatus) {
				t.Fatalf("error not wrapping ErrNotStatus: %v", err)
			}
			return
		}
		for _, a := range s.Applications {
			if a.Processes.Idle > a.Processes.Running || a.Processes.Running < 0 || a.Requests.Active < 0 {
				t.Fatalf("accepted an impossible status %+v", a)
			}
		}
		if s.Requests.Total < 0 || s.Connections.Accepted < 0 {
			t.Fatalf("accepted negative counters")
		}
	})
}

func TestArgs(t *testing.T) {
	got := strings.Join(Args(&Binary{Unitd: "/u", ModulesDir: "/m"}, "/l/run/unit.sock", "/l/run/unit.pid", "/l/log/unit.log", "/l/unit", "/l/tmp", "phptune", "phptune"), " ")
	want := "--no-daemon --control unix:/l/run/unit.sock --control-mode 0600 --pid /l/run/unit.pid --log /l/log/unit.log --statedir /l/unit --tmpdir /l/tmp --user phptune --group phptune --modulesdir /m"
	if got != want {
		t.Errorf("Args:\n got %s\nwant %s", got, want)
	}
}
