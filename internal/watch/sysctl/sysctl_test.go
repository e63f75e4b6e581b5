package sysctl

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// TestReadFixtures reads the two fixture trees: a host like this one
// (Debian 12's kernel) and a small, older-style one without fs.nr_open.
func TestReadFixtures(t *testing.T) {
	v, errs := NewFS("testdata/proc").Read()
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	want := Values{Somaxconn: "4096", TCPMaxSynBacklog: "2048", TCPSyncookies: "1", PortRange: "32768 60999",
		TCPTWReuse: "2", FileMax: "9223372036854775807", NrOpen: "1048576"}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("got %v\nwant %v", v, want)
	}
	if n, ok := v.Int(FileMax); !ok || n != math.MaxInt64 {
		t.Errorf("file-max %d %v", n, ok)
	}
	if lo, hi, ok := v.Ports(); !ok || lo != 32768 || hi != 60999 {
		t.Errorf("ports %d-%d %v", lo, hi, ok)
	}
	if _, ok := v.Int(PortRange); ok {
		t.Error("the port range read as one integer")
	}

	small, errs := NewFS("testdata/small").Read()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), NrOpen) {
		t.Errorf("small tree errors: %v", errs)
	}
	if _, ok := small[NrOpen]; ok {
		t.Error("an unreadable setting is in the values")
	}
	if n, _ := small.Int(Somaxconn); n != 128 {
		t.Errorf("small somaxconn %d", n)
	}
}

func TestCollect(t *testing.T) {
	k := NewFS("testdata/proc").Collect([]Process{{Name: "php-fpm", PID: 4242}, {Name: "nginx", PID: 99}})
	want := []results.NoFileLimit{{Process: "phptune", Soft: 20000, Hard: 20000}, {Process: "php-fpm", PID: 4242, Soft: 1024, Hard: 524288}}
	if !reflect.DeepEqual(k.NoFile, want) {
		t.Errorf("nofile %+v", k.NoFile)
	}
	if len(k.Errors) != 1 || !strings.Contains(k.Errors[0], "open-file limit of nginx") {
		t.Errorf("errors %v", k.Errors)
	}
	if k.Sysctl[Somaxconn] != "4096" {
		t.Errorf("sysctl %v", k.Sysctl)
	}
	lines := strings.Join(Lines(k), "\n")
	for _, w := range []string{"sysctl: somaxconn 4096, tcp_max_syn_backlog 2048, tcp_syncookies 1, ip_local_port_range 32768-60999 (28232 ports), tcp_tw_reuse 2, fs.file-max 9223372036854775807, fs.nr_open 1048576",
		"open files (RLIMIT_NOFILE soft/hard): phptune 20000/20000, php-fpm 1024/524288", "not read: open-file limit of nginx"} {
		if !strings.Contains(lines, w) {
			t.Errorf("lines lack %q:\n%s", w, lines)
		}
	}
}

func TestParseValue(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{Somaxconn, "4096\n", "4096", true},
		{Somaxconn, " 128 ", "128", true},
		{Somaxconn, "-1\n", "", false},
		{Somaxconn, "4096 1\n", "", false},
		{Somaxconn, "", "", false},
		{Somaxconn, "0x10", "", false},
		{FileMax, "18446744073709551615\n", "18446744073709551615", true},
		{PortRange, "32768\t60999\n", "32768 60999", true},
		{PortRange, "1024 1024", "1024 1024", true},
		{PortRange, "60999 32768", "", false},
		{PortRange, "0 100", "", false},
		{PortRange, "1 70000", "", false},
		{PortRange, "32768", "", false},
	}
	for _, tt := range tests {
		got, err := ParseValue(tt.name, []byte(tt.in))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseValue(%s, %q) = %q, %v", tt.name, tt.in, got, err)
		}
		if err != nil && !errors.Is(err, ErrParse) {
			t.Errorf("error %v does not wrap ErrParse", err)
		}
	}
}

func TestParseNoFile(t *testing.T) {
	tests := []struct {
		in         string
		soft, hard int64
		ok         bool
	}{
		{"Limit  Soft Limit Hard Limit Units\nMax open files            1024                 524288               files     \n", 1024, 524288, true},
		{"Max open files            unlimited            unlimited            files\n", -1, -1, true},
		{"Max open files            1024                 unlimited            files\n", 1024, -1, true},
		{"Max open files            2048                 1024                 files\n", 0, 0, false},
		{"Max open files            unlimited            1024                 files\n", 0, 0, false},
		{"Max open files            x                    1024                 files\n", 0, 0, false},
		{"Max processes 10 10 processes\n", 0, 0, false},
		{"Max open files\n", 0, 0, false},
	}
	for _, tt := range tests {
		s, h, err := ParseNoFile([]byte(tt.in))
		if (err == nil) != tt.ok || s != tt.soft || h != tt.hard {
			t.Errorf("ParseNoFile(%q) = %d, %d, %v", tt.in, s, h, err)
		}
	}
}

func TestParseStartTime(t *testing.T) {
	st, err := NewFS("testdata/proc").StartTime(4242)
	if err != nil || st != 2338240 {
		t.Errorf("start time of 4242 (a command name with spaces and parentheses): %d %v", st, err)
	}
	for _, bad := range []string{"", "1 (x) R 1 2", "1 (x" + strings.Repeat(" 1", 30), "1 (x) " + strings.Repeat("1 ", 19) + "y 1"} {
		if _, err := ParseStartTime([]byte(bad)); err == nil {
			t.Errorf("ParseStartTime(%q) accepted", bad)
		}
	}
}

// TestEffective: listen(2)'s backlog is capped at somaxconn, never raised.
func TestEffective(t *testing.T) {
	tests := []struct {
		asked, somaxconn, want int64
		text                   string
	}{
		{4096, 4096, 4096, "asked 4096, effective 4096 (somaxconn 4096)"},
		{511, 4096, 511, "asked 511, effective 511 (somaxconn 4096)"},
		{4096, 128, 128, "asked 4096, capped at 128 by somaxconn"},
		{129, 128, 128, "asked 129, capped at 128 by somaxconn"},
		{1024, -1, 1024, "asked 1024 (somaxconn unknown: the kernel may cap it)"},
		{1, 0, 0, "asked 1, capped at 0 by somaxconn"},
	}
	for _, tt := range tests {
		if got := Effective(tt.asked, tt.somaxconn); got != tt.want {
			t.Errorf("Effective(%d, %d) = %d, want %d", tt.asked, tt.somaxconn, got, tt.want)
		}
		if got := BacklogText(tt.asked, tt.somaxconn); got != tt.text {
			t.Errorf("BacklogText(%d, %d) = %q, want %q", tt.asked, tt.somaxconn, got, tt.text)
		}
	}
	if n := CappedNote("listen.backlog", "1024", 128); n != "128, capped by net.core.somaxconn" {
		t.Errorf("CappedNote %q", n)
	}
	if n := CappedNote("listen.backlog", "1024", 4096); n != "" {
		t.Errorf("CappedNote uncapped %q", n)
	}
}

func config(t *testing.T, set ...string) knob.Config {
	t.Helper()
	c, err := knob.Defaults().Apply(set)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBacklogsAndNeed: each server's backlogs, which are TCP, and what a
// set of configurations needs.
func TestBacklogsAndNeed(t *testing.T) {
	c := config(t, "listen.backlog=8192", "nginx.listen_backlog=1024")
	got := Backlogs(c, 4096)
	want := []results.Backlog{{Knob: "listen.backlog", Asked: 8192, Effective: 4096, Somaxconn: 4096}, {Knob: "nginx.listen_backlog", Asked: 1024, Effective: 1024, Somaxconn: 4096}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("backlogs %+v", got)
	}
	n := NeedOf([]knob.Config{c, config(t, "listen=tcp", "listen.backlog=2048")}, 300)
	if n != (Need{Backlog: 8192, TCPBacklog: 2048, Connections: 300}) {
		t.Errorf("need %+v", n)
	}
	unit := config(t, "server=unit", "unit.listen_backlog=3000")
	if n := NeedOf([]knob.Config{unit}, 1); n.Backlog != 3000 || n.TCPBacklog != 3000 {
		t.Errorf("unit need %+v", n)
	}
	prefork := config(t, "server=apache-prefork-modphp")
	if b := prefork.Backlogs(); len(b) != 0 {
		t.Errorf("mod_php has no backlog knob: %+v", b)
	}
}

func TestPlan(t *testing.T) {
	host := Values{Somaxconn: "4096", TCPMaxSynBacklog: "2048", TCPSyncookies: "1", PortRange: "32768 60999", TCPTWReuse: "2", FileMax: "2466170", NrOpen: "1048576"}
	small := Values{Somaxconn: "128", TCPMaxSynBacklog: "256", PortRange: "61000 61999", FileMax: "8192"}
	tests := []struct {
		name string
		cur  Values
		need Need
		want []results.SysctlChange
	}{
		{"defaults fit", host, Need{Backlog: 511, TCPBacklog: 511, Connections: 50}, nil},
		{"seed 003 at c=1000 fits here", host, Need{Backlog: 2048, TCPBacklog: 1024, Connections: 1000}, nil},
		{"a backlog above somaxconn", host, Need{Backlog: 8192, TCPBacklog: 8192, Connections: 5000},
			[]results.SysctlChange{{Name: Somaxconn, From: "4096", To: "8192"}, {Name: TCPMaxSynBacklog, From: "2048", To: "8192"}}},
		{"a small host", small, Need{Backlog: 1024, TCPBacklog: 1024, Connections: 1000}, []results.SysctlChange{
			{Name: Somaxconn, From: "128", To: "1024"}, {Name: TCPMaxSynBacklog, From: "256", To: "1024"},
			{Name: PortRange, From: "61000 61999", To: "58976 61999"}}},
		{"nothing unread is planned", Values{}, Need{Backlog: 1 << 16, TCPBacklog: 1 << 16, Connections: 100000}, nil},
		{"the port range widens up when it cannot go down", Values{PortRange: "1024 2047"}, Need{Connections: 1000},
			[]results.SysctlChange{{Name: PortRange, From: "1024 2047", To: "1024 4047"}}},
		{"more files", Values{FileMax: "8000", NrOpen: "1024"}, Need{Connections: 1000},
			[]results.SysctlChange{{Name: FileMax, From: "8000", To: "8096"}, {Name: NrOpen, From: "1024", To: "2064"}}},
		{"enough files", Values{FileMax: "8192", NrOpen: "2064"}, Need{Connections: 1000}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Plan(tt.cur, tt.need)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Plan = %+v\nwant %+v", got, tt.want)
			}
			for _, c := range got {
				if _, err := ParseValue(c.Name, []byte(c.To)); err != nil {
					t.Errorf("planned value %s = %q: %v", c.Name, c.To, err)
				}
			}
		})
	}
}

func TestFragment(t *testing.T) {
	host := Values{Somaxconn: "4096", TCPMaxSynBacklog: "2048", TCPSyncookies: "1", PortRange: "32768 60999", FileMax: "2466170", NrOpen: "1048576"}
	none := Fragment(host, Need{Backlog: 1024, TCPBacklog: 1024, Connections: 1000})
	for _, w := range []string{"# Nothing to change", "#   net.core.somaxconn 4096 >= the largest listen backlog (1024)", "#   net.ipv4.ip_local_port_range 32768-60999: 28232 ports >= 3024"} {
		if !strings.Contains(none, w) {
			t.Errorf("lacks %q:\n%s", w, none)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(none), "\n") {
		if !strings.HasPrefix(line, "#") {
			t.Errorf("a fragment that changes nothing sets %q", line)
		}
	}
	some := Fragment(host, Need{Backlog: 8192, TCPBacklog: 8192, Connections: 5000})
	for _, w := range []string{"/etc/sysctl.d/60-phptune.conf", "sysctl -p /etc/sysctl.d/60-phptune.conf", "# phptune: was 4096\nnet.core.somaxconn = 8192\n",
		"# phptune: was 2048\nnet.ipv4.tcp_max_syn_backlog = 8192\n", "tcp_syncookies is 1 here", "restart the web server and php-fpm"} {
		if !strings.Contains(some, w) {
			t.Errorf("lacks %q:\n%s", w, some)
		}
	}
	// procps' own parser reads it as meant (--dry-run writes nothing).
	bin, err := exec.LookPath("sysctl")
	if err != nil {
		bin = "/usr/sbin/sysctl"
		if _, err := os.Stat(bin); err != nil {
			t.Skip("sysctl (procps) is not installed")
		}
	}
	file := filepath.Join(t.TempDir(), "60-phptune.conf")
	if err := os.WriteFile(file, []byte(some), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--dry-run", "-p", file).CombinedOutput()
	if err != nil {
		t.Fatalf("sysctl --dry-run -p: %v\n%s", err, out)
	}
	var want []string
	for _, c := range Plan(host, Need{Backlog: 8192, TCPBacklog: 8192, Connections: 5000}) {
		want = append(want, c.Name+" = "+c.To)
	}
	if got := strings.TrimSpace(string(out)); got != strings.Join(want, "\n") {
		t.Errorf("sysctl reads:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"4096\n", "32768\t60999\n", "18446744073709551615", "-1", "1 2 3", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, name := range Names {
			v, err := ParseValue(name, []byte(in))
			if err != nil {
				continue
			}
			// A normalised value reads back the same, and is what would
			// be written.
			again, err := ParseValue(name, []byte(v))
			if err != nil || again != v {
				t.Fatalf("%s: %q normalised to %q, which reads back as %q, %v", name, in, v, again, err)
			}
			if name == PortRange {
				if _, _, ok := (Values{name: v}).Ports(); !ok {
					t.Fatalf("port range %q accepted but unreadable", v)
				}
			} else if _, ok := (Values{name: v}).Int(name); !ok {
				t.Fatalf("%s %q accepted but unreadable", name, v)
			}
		}
	})
}

func FuzzParseNoFile(f *testing.F) {
	f.Add("Max open files            1024                 524288               files\n")
	f.Add("Max open files            unlimited            unlimited            files\n")
	f.Add("Max open files 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		s, h, err := ParseNoFile([]byte(in))
		if err == nil && (s < -1 || h < -1 || (h >= 0 && (s < 0 || s > h))) {
			t.Fatalf("%q: soft %d hard %d", in, s, h)
		}
	})
}

func FuzzParseStartTime(f *testing.F) {
	f.Add("4242 (php-fpm: pool (www)) R 13284 13284 14890 0 -1 4194304 126 0 0 0 0 0 0 0 20 0 1 0 2338240 3133440 418")
	f.Add("1 ())")
	f.Fuzz(func(t *testing.T, in string) {
		_, _ = ParseStartTime([]byte(in))
	})
}
