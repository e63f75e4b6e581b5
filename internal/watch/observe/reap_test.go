package observe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/phptune/phptune/internal/watch/proc"
)

// fakeProc is a /proc tree written by a test: the machine's busy ticks and
// a set of processes with their CPU counters.
type fakeProc struct {
	t     *testing.T
	dir   string
	busy  uint64 // machine user ticks so far
	procs map[int]fakeProcess
}

type fakeProcess struct {
	ppid                   int
	utime, cutime, started uint64
}

func newFakeProc(t *testing.T) *fakeProc {
	f := &fakeProc{t: t, dir: t.TempDir(), procs: map[int]fakeProcess{}}
	mi, err := os.ReadFile("../proc/testdata/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "meminfo"), mi, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// write puts the current state on disk; processes not in f.procs are gone.
func (f *fakeProc) write() {
	f.t.Helper()
	ents, _ := os.ReadDir(f.dir)
	for _, e := range ents {
		if e.IsDir() {
			os.RemoveAll(filepath.Join(f.dir, e.Name()))
		}
	}
	idle := 1000000 - f.busy
	stat := fmt.Sprintf("cpu  %d 0 0 %d 0 0 0 0 0 0\ncpu0 %d 0 0 %d 0 0 0 0 0 0\nctxt 1\nbtime 1\nprocesses 1\nprocs_running 1\nprocs_blocked 0\n", f.busy, idle, f.busy, idle)
	must := func(err error) {
		if err != nil {
			f.t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(f.dir, "stat"), []byte(stat), 0o644))
	for pid, p := range f.procs {
		d := filepath.Join(f.dir, fmt.Sprint(pid))
		must(os.MkdirAll(d, 0o755))
		line := fmt.Sprintf("%d (app) S %d 1 1 0 -1 0 0 0 0 0 %d 0 %d 0 20 0 1 0 %d 1000 10 0\n", pid, p.ppid, p.utime, p.cutime, p.started)
		must(os.WriteFile(filepath.Join(d, "stat"), []byte(line), 0o644))
		must(os.WriteFile(filepath.Join(d, "cmdline"), []byte("app\x00"), 0o644))
	}
}

// groupTicks is the CPU of group name in a sample, in ticks.
func groupTicks(o *Observer, name string) float64 {
	s := o.Samples()
	last := s[len(s)-1]
	for _, g := range last.Groups {
		if g.Name == name {
			return (g.UserPct + g.SystemPct) / 100 * last.DTS * proc.UserHZ
		}
	}
	return 0
}

func (f *fakeProc) observer() *Observer {
	o, err := New(Config{ProcRoot: f.dir, SysRoot: f.t.TempDir(), Roots: []Root{{Component: "app", PID: 100}}})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := o.Baseline(); err != nil {
		f.t.Fatal(err)
	}
	return o
}

func (f *fakeProc) sample(o *Observer) {
	s := o.Sample(context.Background())
	o.mu.Lock()
	o.samples = append(o.samples, s)
	o.mu.Unlock()
}

// TestReapReadBeforeGrowth: the scan read the parent, then the parent
// reaped its child, then the scan found the child gone. The child's CPU
// shows in the parent's cutime one interval late and must not be counted
// again then.
func TestReapReadBeforeGrowth(t *testing.T) {
	f := newFakeProc(t)
	f.procs[100] = fakeProcess{ppid: 1, started: 10}
	f.procs[101] = fakeProcess{ppid: 100, utime: 5000, started: 20}
	f.write()
	o := f.observer()

	// The child used 5 more ticks, exited and was reaped after the
	// parent was read: gone, and the parent's cutime unchanged.
	delete(f.procs, 101)
	f.busy += 10
	f.write()
	f.sample(o)
	if got := groupTicks(o, "app"); got > 6 {
		t.Errorf("interval of the reap: %.0f ticks, want at most the 5 unseen", got)
	}

	// Now the parent's cutime shows the child's 5005 ticks.
	p := f.procs[100]
	p.cutime += 5005
	f.procs[100] = p
	f.busy += 10000 // a busy machine: the ceiling does not hide a double count
	f.write()
	f.sample(o)
	if got := groupTicks(o, "app"); got > 6 {
		t.Errorf("interval after the reap: %.0f ticks, want the 5 unseen at most (the child's 5000 were counted while it ran)", got)
	}

	// Owed time is carried one interval only: a later unseen child is
	// credited in full.
	p.cutime += 30
	f.procs[100] = p
	f.busy += 40
	f.write()
	f.sample(o)
	if got := groupTicks(o, "app"); got < 29 || got > 31 {
		t.Errorf("later unseen child: %.0f ticks, want 30", got)
	}
}

// TestReapReadAfterGrowth: the scan read the child alive, then the parent
// reaped it, then the scan read the parent with the child's whole life in
// its cutime. The machine's busy time caps what is credited.
func TestReapReadAfterGrowth(t *testing.T) {
	f := newFakeProc(t)
	f.procs[100] = fakeProcess{ppid: 1, started: 10}
	f.procs[101] = fakeProcess{ppid: 100, utime: 5000, started: 20}
	f.write()
	o := f.observer()

	c := f.procs[101]
	c.utime += 10
	f.procs[101] = c
	p := f.procs[100]
	p.cutime += 5010
	f.procs[100] = p
	f.busy += 20
	f.write()
	f.sample(o)
	if got := groupTicks(o, "app"); got > 1.1*20+2+0.5 {
		t.Errorf("%.0f ticks credited in an interval the machine was busy 20", got)
	}
}
