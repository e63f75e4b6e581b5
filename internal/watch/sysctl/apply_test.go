package sysctl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeHost is a /proc tree in a temporary directory whose settings can be
// written, with the runs alive in it, and a home directory for the record.
type fakeHost struct {
	t    *testing.T
	fs   FS
	home string
}

func newFakeHost(t *testing.T, v Values) *fakeHost {
	t.Helper()
	root, home := t.TempDir(), t.TempDir()
	h := &fakeHost{t: t, fs: NewFS(root), home: home}
	for name, val := range v {
		p := h.fs.path(name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(val, " ", "\t")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// run makes a live process pid with start time start and its applier.
func (h *fakeHost) run(pid int) *Applier {
	h.t.Helper()
	dir := filepath.Join(h.fs.root, fmt.Sprint(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (phptune) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0", pid, 1000+pid)
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return &Applier{FS: h.fs, Dir: h.home, Self: Holder{PID: pid, StartTime: uint64(1000 + pid)}}
}

// die ends the process pid (a crash: its record stays).
func (h *fakeHost) die(pid int) {
	if err := os.RemoveAll(filepath.Join(h.fs.root, fmt.Sprint(pid))); err != nil {
		h.t.Fatal(err)
	}
}

func (h *fakeHost) get(name string) string {
	h.t.Helper()
	v, err := h.fs.Value(name)
	if err != nil {
		h.t.Fatal(err)
	}
	return v
}

func (h *fakeHost) recorded() bool {
	_, err := os.Lstat(filepath.Join(h.home, RecordFile))
	return err == nil
}

var hostValues = Values{Somaxconn: "4096", TCPMaxSynBacklog: "2048", TCPSyncookies: "1", PortRange: "32768 60999", TCPTWReuse: "2", FileMax: "2466170", NrOpen: "1048576"}

func TestApplyRestore(t *testing.T) {
	h := newFakeHost(t, hostValues)
	a := h.run(100)
	run, notes, err := a.Apply(Need{Backlog: 8192, TCPBacklog: 1024, Connections: 50})
	if err != nil || len(notes) != 0 {
		t.Fatal(err, notes)
	}
	if len(run.Changes) != 1 || run.Changes[0].Name != Somaxconn || run.Changes[0].From != "4096" || run.Changes[0].To != "8192" {
		t.Fatalf("changes %+v", run.Changes)
	}
	if h.get(Somaxconn) != "8192" || h.get(TCPMaxSynBacklog) != "2048" {
		t.Fatalf("after apply: somaxconn %s, syn %s", h.get(Somaxconn), h.get(TCPMaxSynBacklog))
	}
	data, err := os.ReadFile(filepath.Join(h.home, RecordFile))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := parseRecord(data)
	if err != nil || rec.Original[Somaxconn] != "4096" || rec.Set[Somaxconn] != "8192" || len(rec.Holders) != 1 || rec.Holders[0].PID != 100 {
		t.Fatalf("record %s: %v", data, err)
	}
	if fi, _ := os.Stat(filepath.Join(h.home, RecordFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("record mode %v", fi.Mode())
	}
	notes, err = run.Restore()
	if err != nil || h.get(Somaxconn) != "4096" || h.recorded() {
		t.Fatalf("after restore: %s, record kept %v, %v", h.get(Somaxconn), h.recorded(), err)
	}
	if len(notes) != 1 || notes[0] != "restored net.core.somaxconn to 4096 (from 8192)" {
		t.Errorf("notes %q", notes)
	}
	if n, err := run.Restore(); err != nil || n != nil {
		t.Errorf("a second restore: %v %v", n, err)
	}
}

func TestApplyNothingNeeded(t *testing.T) {
	h := newFakeHost(t, hostValues)
	run, _, err := h.run(100).Apply(Need{Backlog: 511, TCPBacklog: 511, Connections: 50})
	if err != nil || len(run.Changes) != 0 || h.recorded() {
		t.Fatalf("changes %v, record %v, %v", run.Changes, h.recorded(), err)
	}
	if n, err := run.Restore(); err != nil || n != nil {
		t.Errorf("restore %v %v", n, err)
	}
}

// TestApplyShared: two runs at once; the values go back when the last
// ends, to what they were before the first.
func TestApplyShared(t *testing.T) {
	h := newFakeHost(t, hostValues)
	a, b, c := h.run(100), h.run(200), h.run(300)
	ra, _, err := a.Apply(Need{Backlog: 8192})
	if err != nil {
		t.Fatal(err)
	}
	rb, _, err := b.Apply(Need{Backlog: 16384})
	if err != nil || len(rb.Changes) != 1 || rb.Changes[0].From != "8192" {
		t.Fatalf("b: %+v %v", rb, err)
	}
	rc, _, err := c.Apply(Need{Backlog: 511}) // needs nothing, relies on the others
	if err != nil || len(rc.Changes) != 0 {
		t.Fatal(err)
	}
	notes, err := ra.Restore()
	if err != nil || h.get(Somaxconn) != "16384" || !strings.Contains(strings.Join(notes, ""), "pid 200, 300") {
		t.Fatalf("a ended: %s %q %v", h.get(Somaxconn), notes, err)
	}
	if _, err := rb.Restore(); err != nil || h.get(Somaxconn) != "16384" {
		t.Fatalf("b ended: %s %v", h.get(Somaxconn), err)
	}
	if _, err := rc.Restore(); err != nil || h.get(Somaxconn) != "4096" || h.recorded() {
		t.Fatalf("c ended: %s, record %v, %v", h.get(Somaxconn), h.recorded(), err)
	}
}

// TestLeftoversRestored: a run killed outright leaves its record; the next
// run (or any later phptune) restores it, but never a live run's.
func TestLeftoversRestored(t *testing.T) {
	h := newFakeHost(t, hostValues)
	a := h.run(100)
	if _, _, err := a.Apply(Need{Backlog: 8192, TCPBacklog: 8192}); err != nil {
		t.Fatal(err)
	}
	later := h.run(200)
	if notes, err := later.RestoreLeftovers(); err != nil || notes != nil || h.get(Somaxconn) != "8192" {
		t.Fatalf("a live run's settings touched: %q %v %s", notes, err, h.get(Somaxconn))
	}
	h.die(100)
	// A pid reused by another process is not the run.
	h.run(100)
	h.die(100)
	notes, err := later.RestoreLeftovers()
	if err != nil || h.get(Somaxconn) != "4096" || h.get(TCPMaxSynBacklog) != "2048" || h.recorded() {
		t.Fatalf("leftovers: %q %v somaxconn %s syn %s record %v", notes, err, h.get(Somaxconn), h.get(TCPMaxSynBacklog), h.recorded())
	}
	want := "restored net.core.somaxconn to 4096 (from 8192) (left raised by a phptune run that ended without restoring it)"
	if len(notes) != 2 || notes[0] != want {
		t.Errorf("notes %q", notes)
	}
	if notes, err := later.RestoreLeftovers(); notes != nil || err != nil {
		t.Errorf("nothing left: %q %v", notes, err)
	}

	// Apply itself restores a dead run's leftovers before it records.
	if _, _, err := h.run(300).Apply(Need{Backlog: 8192}); err != nil {
		t.Fatal(err)
	}
	h.die(300)
	run, notes, err := h.run(400).Apply(Need{Backlog: 5000})
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "left raised") || len(run.Changes) != 1 || run.Changes[0].From != "4096" {
		t.Fatalf("apply over leftovers: %q %+v %v", notes, run, err)
	}
	if _, err := run.Restore(); err != nil || h.get(Somaxconn) != "4096" {
		t.Fatalf("%s %v", h.get(Somaxconn), err)
	}
}

// TestChangedMeanwhile: a value someone else changed while phptune held it
// is left alone.
func TestChangedMeanwhile(t *testing.T) {
	h := newFakeHost(t, hostValues)
	run, _, err := h.run(100).Apply(Need{Backlog: 8192})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.fs.write(Somaxconn, "9000"); err != nil {
		t.Fatal(err)
	}
	notes, err := run.Restore()
	if err != nil || h.get(Somaxconn) != "9000" || h.recorded() || len(notes) != 1 || !strings.Contains(notes[0], "left net.core.somaxconn at 9000") {
		t.Fatalf("%q %v %s", notes, err, h.get(Somaxconn))
	}
}

// TestWriteFailureRollsBack: when one setting cannot be written, those
// already written go back and nothing stays recorded; a restore that
// cannot write keeps the record for the next run.
func TestWriteFailureRollsBack(t *testing.T) {
	h := newFakeHost(t, hostValues)
	a := h.run(100)
	a.failWrite = func(name string) error {
		if name == TCPMaxSynBacklog {
			return errors.New("read-only")
		}
		return nil
	}
	if _, _, err := a.Apply(Need{Backlog: 8192, TCPBacklog: 8192}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("apply: %v", err)
	}
	if h.get(Somaxconn) != "4096" || h.recorded() {
		t.Fatalf("after a failed apply: somaxconn %s, record %v", h.get(Somaxconn), h.recorded())
	}

	a.failWrite = nil
	run, _, err := a.Apply(Need{Backlog: 8192})
	if err != nil {
		t.Fatal(err)
	}
	a.failWrite = func(string) error { return errors.New("read-only") }
	if _, err := run.Restore(); err == nil || !h.recorded() {
		t.Fatalf("a restore that could not write: %v, record %v", err, h.recorded())
	}
	a.failWrite = nil
	if notes, err := h.run(200).RestoreLeftovers(); err != nil || len(notes) != 1 || h.get(Somaxconn) != "4096" || h.recorded() {
		t.Fatalf("the next run: %q %v %s", notes, err, h.get(Somaxconn))
	}
}

// TestRecordRefused: a record or home that is a symlink, someone else's,
// writable by others or malformed is refused, and nothing is written.
func TestRecordRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files away")
	}
	cases := map[string]func(h *fakeHost){
		"symlinked record": func(h *fakeHost) {
			target := filepath.Join(t.TempDir(), "elsewhere")
			os.WriteFile(target, []byte(`{"original":{},"set":{},"holders":[]}`), 0o600)
			os.Symlink(target, filepath.Join(h.home, RecordFile))
		},
		"foreign record": func(h *fakeHost) {
			p := filepath.Join(h.home, RecordFile)
			os.WriteFile(p, []byte(`{"original":{},"set":{},"holders":[]}`), 0o600)
			os.Chown(p, 65534, 65534)
		},
		"group-writable record": func(h *fakeHost) {
			p := filepath.Join(h.home, RecordFile)
			os.WriteFile(p, []byte(`{"original":{},"set":{},"holders":[]}`), 0o600)
			os.Chmod(p, 0o620)
		},
		"foreign lock": func(h *fakeHost) {
			p := filepath.Join(h.home, lockFile)
			os.WriteFile(p, nil, 0o600)
			os.Chown(p, 65534, 65534)
		},
		"record naming another setting": func(h *fakeHost) {
			os.WriteFile(filepath.Join(h.home, RecordFile), []byte(`{"original":{"kernel.core_pattern":"|/tmp/x"},"set":{"kernel.core_pattern":"core"},"holders":[]}`), 0o600)
		},
		"record with a malformed value": func(h *fakeHost) {
			os.WriteFile(filepath.Join(h.home, RecordFile), []byte(`{"original":{"net.core.somaxconn":"1; reboot"},"set":{"net.core.somaxconn":"8192"},"holders":[]}`), 0o600)
		},
		"foreign home": func(h *fakeHost) { os.Chown(h.home, 65534, 65534) },
		"symlinked home": func(h *fakeHost) {
			real := t.TempDir()
			os.Remove(h.home)
			os.Symlink(real, h.home)
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			h := newFakeHost(t, hostValues)
			setup(h)
			a := h.run(100)
			if _, _, err := a.Apply(Need{Backlog: 8192}); err == nil {
				t.Error("Apply accepted it")
			}
			if _, err := a.RestoreLeftovers(); err == nil && name != "foreign lock" && name != "foreign home" && name != "symlinked home" {
				t.Error("RestoreLeftovers accepted it")
			}
			if h.get(Somaxconn) != "4096" {
				t.Errorf("somaxconn written: %s", h.get(Somaxconn))
			}
		})
	}
}

func FuzzParseRecord(f *testing.F) {
	f.Add(`{"original":{"net.core.somaxconn":"4096"},"set":{"net.core.somaxconn":"8192"},"holders":[{"pid":12,"start_time":5}]}`)
	f.Add(`{"original":{"net.ipv4.ip_local_port_range":"32768 60999"},"set":{"net.ipv4.ip_local_port_range":"1024 60999"},"holders":[]}`)
	f.Add(`{"original":{"fs.file-max":"1"}}`)
	f.Fuzz(func(t *testing.T, in string) {
		r, err := parseRecord([]byte(in))
		if err != nil {
			return
		}
		for _, m := range []map[string]string{r.Original, r.Set} {
			for n, v := range m {
				if !known(n) {
					t.Fatalf("unknown setting %q accepted", n)
				}
				if norm, err := ParseValue(n, []byte(v)); err != nil || norm != v {
					t.Fatalf("%s = %q accepted", n, v)
				}
			}
		}
		for n := range r.Original {
			if _, ok := r.Set[n]; !ok {
				t.Fatalf("%s recorded without the value set", n)
			}
		}
	})
}
