package proc

import (
	"errors"
	"os"
	"slices"
	"testing"
)

func fixtureFS(t *testing.T, sys string) *FS {
	t.Helper()
	fs, err := NewFS("testdata/proc", sys)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestReadStatFixture(t *testing.T) {
	fs := fixtureFS(t, "testdata/sys_v1")
	s, err := fs.ReadStat(12887)
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{PID: 12887, Comm: "php-fpm8.2", State: 'S', PPID: 12881, UTime: 15, STime: 0, StartTime: 956398, RSSPages: 4355}
	if s != want {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
	if _, err := fs.ReadStat(4242); !errors.Is(err, ErrGone) {
		t.Errorf("missing pid: got %v, want ErrGone", err)
	}
}

func TestParseStat(t *testing.T) {
	// A comm with spaces and parentheses must not shift the fields.
	line := "77 (a (weird) name) R 1 77 77 0 -1 4194560 100 0 0 0 250 30 7 3 20 0 1 0 5000 1000 321 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
	s, err := ParseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if s.Comm != "a (weird) name" || s.State != 'R' || s.PPID != 1 || s.UTime != 250 || s.STime != 30 ||
		s.CUTime != 7 || s.CSTime != 3 || s.StartTime != 5000 || s.RSSPages != 321 {
		t.Errorf("got %+v", s)
	}
	for _, bad := range []string{"", "12", "12 (x) R", "x (y) R 1", "12 (x) R 1 2 3 4 5 6 7 8 9 10 11 zz 13 14 15 16 17 18 19 20 21 22"} {
		if _, err := ParseStat([]byte(bad)); !errors.Is(err, ErrParse) {
			t.Errorf("ParseStat(%q) = %v, want ErrParse", bad, err)
		}
	}
}

func TestReadMemoryFixture(t *testing.T) {
	fs := fixtureFS(t, "testdata/sys_v1")
	m, err := fs.ReadMemory(12887)
	if err != nil {
		t.Fatal(err)
	}
	want := Memory{RSS: 17648 << 10, PSS: 3778 << 10, USS: 520 << 10}
	if m != want {
		t.Errorf("got %+v, want %+v", m, want)
	}
	// The point of PSS: a worker's share is far below its RSS because the
	// opcache segment and the binary are shared with the other workers.
	if m.PSS >= m.RSS {
		t.Errorf("PSS %d >= RSS %d", m.PSS, m.RSS)
	}
	if m, err := ParseSmapsRollup(nil); err != nil || m != (Memory{}) {
		t.Errorf("empty smaps_rollup (kernel thread): %+v %v", m, err)
	}
	if _, err := ParseSmapsRollup([]byte("Rss: x kB\n")); !errors.Is(err, ErrParse) {
		t.Errorf("bad value: %v", err)
	}
}

func TestReadMachineFixture(t *testing.T) {
	fs := fixtureFS(t, "testdata/sys_v1")
	m, err := fs.ReadMachine()
	if err != nil {
		t.Fatal(err)
	}
	if m.Cores != 2 || m.CPU.User != 859.44 || m.CPU.Steal != 3.55 || m.CPU.SoftIRQ != 58.32 {
		t.Errorf("cpu: %+v cores %d", m.CPU, m.Cores)
	}
	if m.MemTotal <= 0 || m.MemAvailable <= 0 || m.MemAvailable > m.MemTotal || m.ContextSwitches == 0 || m.ProcsRunning == 0 {
		t.Errorf("machine: %+v", m)
	}
}

func TestReadMeminfoFixture(t *testing.T) {
	fs := fixtureFS(t, "testdata/sys_v1")
	m, err := fs.ReadMeminfo()
	if err != nil {
		t.Fatal(err)
	}
	if want := (Meminfo{Total: 24683656 << 10, Available: 24299284 << 10}); m != want {
		t.Errorf("meminfo %+v, want %+v", m, want)
	}
	empty, err := NewFS(t.TempDir(), "testdata/sys_v1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := empty.ReadMeminfo(); err == nil {
		t.Error("no meminfo file: no error")
	}
}

func TestPIDsAndCmdline(t *testing.T) {
	fs := fixtureFS(t, "testdata/sys_v1")
	pids, err := fs.PIDs()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(pids)
	if want := []int{99, 12881, 12883, 12885, 12886, 12887, 12888, 12889, 12890}; !slices.Equal(pids, want) {
		t.Errorf("pids %v, want %v", pids, want)
	}
	c, err := fs.ReadCmdline(12887)
	if err != nil || c != "php-fpm: pool www" {
		t.Errorf("cmdline %q %v", c, err)
	}
}

func TestMemoryLimit(t *testing.T) {
	// v1 (hybrid host): the parent's 2 GiB limit applies although the
	// process's own cgroup is unlimited.
	l, err := fixtureFS(t, "testdata/sys_v1").ReadMemoryLimit(12881)
	if err != nil {
		t.Fatal(err)
	}
	if l.Bytes != 2<<30 || l.Version != 1 {
		t.Errorf("v1: %+v", l)
	}
	l, err = fixtureFS(t, "testdata/sys_v2").ReadMemoryLimit(99)
	if err != nil {
		t.Fatal(err)
	}
	if l.Bytes != 1<<30 || l.Version != 2 {
		t.Errorf("v2: %+v", l)
	}
	if _, err := fixtureFS(t, "testdata/sys_v2").ReadMemoryLimit(4242); !errors.Is(err, ErrGone) {
		t.Errorf("missing pid: %v", err)
	}
}

// TestLive reads this machine's own /proc: the test process must show up with
// its parent, some CPU time and PSS <= RSS.
func TestLive(t *testing.T) {
	fs, err := Default()
	if err != nil {
		t.Skip(err)
	}
	pid := os.Getpid()
	s, err := fs.ReadStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	if s.PPID != os.Getppid() {
		t.Errorf("ppid %d, want %d", s.PPID, os.Getppid())
	}
	m, err := fs.ReadMemory(pid)
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS == 0 || m.PSS > m.RSS || m.USS > m.PSS {
		t.Errorf("memory %+v: want 0 < USS <= PSS <= RSS", m)
	}
	if _, err := fs.ReadMachine(); err != nil {
		t.Fatal(err)
	}
	if mi, err := SystemMeminfo(); err != nil || mi.Total <= 0 {
		t.Fatalf("SystemMeminfo: %+v, %v", mi, err)
	}
	if _, err := fs.ReadMemoryLimit(pid); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseStat(f *testing.F) {
	for _, p := range []string{"12887", "12881", "12883"} {
		b, err := os.ReadFile("testdata/proc/" + p + "/stat")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("1 (a) b) c) S 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseStat(b)
		if err == nil && (s.PID < 0 || s.PPID < 0) {
			t.Errorf("negative ids accepted: %+v", s)
		}
	})
}

func FuzzParseSmapsRollup(f *testing.F) {
	for _, p := range []string{"12887", "12881"} {
		b, err := os.ReadFile("testdata/proc/" + p + "/smaps_rollup")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("Rss: 9223372036854775807 kB\nPss: -1 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseSmapsRollup(b)
		if err != nil {
			return
		}
		if m.RSS < 0 || m.PSS < 0 || m.USS < 0 || m.Swap < 0 || m.SwapPSS < 0 {
			t.Errorf("negative memory: %+v", m)
		}
	})
}
