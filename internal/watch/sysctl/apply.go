package sysctl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/phptune/phptune/internal/model/results"
)

// --apply-sysctl raises settings for the length of one run and puts them
// back at its end, however it ends:
//
//   - Before anything is written to /proc/sys, the previous values are
//     recorded in RecordFile in phptune's home (root's, owned by root and
//     not a symlink), together with the run (its pid and start time).
//   - At the end — normal, an error, Ctrl-C — the run restores them.
//   - A run killed outright (SIGKILL, the OOM killer, a power cut) cannot;
//     the next phptune started as root finds the record of a run that is
//     gone and restores them (cli says so on stderr).
//
// Runs at the same time share the record: the first records the values
// it found, a later one adds only what it changes on top, and the values
// go back when the last of them ends. A setting someone else changed
// while phptune held it (its value is no longer the one phptune wrote) is
// left as it is, and said.
//
// The record is read back as root and its values written to the kernel,
// so it is treated as hostile input: opened without following links,
// refused unless it is a regular file owned by the running user, size
// bounded, and only the settings of Names with well-formed values are
// ever written.

// RecordFile is the record of raised settings, in phptune's home.
const RecordFile = "sysctl-restore.json"

const (
	lockFile   = "sysctl-restore.lock"
	maxRecord  = 64 << 10
	maxHolders = 256
)

// Holder is a run that relies on raised settings.
type Holder struct {
	PID int `json:"pid"`
	// StartTime (clock ticks since boot) tells the run from a later
	// process that reused its pid.
	StartTime uint64 `json:"start_time"`
	Command   string `json:"command,omitempty"`
}

// record is RecordFile's content.
type record struct {
	// Original is each setting's value before phptune first raised it.
	Original map[string]string `json:"original"`
	// Set is the value phptune last wrote to each.
	Set     map[string]string `json:"set"`
	Holders []Holder          `json:"holders"`
}

// parseRecord reads a record file, checking every name and value: a
// record that names a setting phptune does not manage, or a malformed
// value, is refused whole.
func parseRecord(data []byte) (*record, error) {
	if len(data) > maxRecord {
		return nil, fmt.Errorf("%w: record of %d bytes", ErrParse, len(data))
	}
	var r record
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: record: %v", ErrParse, err)
	}
	if len(r.Holders) > maxHolders {
		return nil, fmt.Errorf("%w: record with %d runs", ErrParse, len(r.Holders))
	}
	for _, m := range []map[string]string{r.Original, r.Set} {
		for name, v := range m {
			if !known(name) {
				return nil, fmt.Errorf("%w: record names %q, not a setting phptune changes", ErrParse, name)
			}
			norm, err := ParseValue(name, []byte(v))
			if err != nil || norm != v {
				return nil, fmt.Errorf("%w: record: %s = %q", ErrParse, name, v)
			}
		}
	}
	for name := range r.Original {
		if _, ok := r.Set[name]; !ok {
			return nil, fmt.Errorf("%w: record: %s has no value set", ErrParse, name)
		}
	}
	for _, h := range r.Holders {
		if h.PID <= 0 {
			return nil, fmt.Errorf("%w: record: pid %d", ErrParse, h.PID)
		}
	}
	if r.Original == nil {
		r.Original = map[string]string{}
	}
	if r.Set == nil {
		r.Set = map[string]string{}
	}
	return &r, nil
}

// Applier changes the settings of a /proc tree for runs and keeps the
// record in Dir.
type Applier struct {
	FS FS
	// Dir is phptune's home: a real directory (not a symlink) owned by
	// the running user (lab.EnsureHome makes it so).
	Dir string
	// Self is this run; Self.StartTime is read from FS when zero.
	Self Holder
	// failWrite, in tests, fails writing a setting.
	failWrite func(name string) error
}

// set writes one setting.
func (a *Applier) set(name, value string) error {
	if a.failWrite != nil {
		if err := a.failWrite(name); err != nil {
			return err
		}
	}
	return a.FS.write(name, value)
}

// Run is one run's hold on raised settings; Restore ends it.
type Run struct {
	a *Applier
	// Changes are what this run wrote (each From is the value it found).
	Changes []results.SysctlChange
	held    bool
}

// Apply raises the settings that fall short of need (Plan), recording the
// previous values first. Notes say what else was done: settings restored
// for a run that ended without doing it. The returned Run must be
// Restored, also when it changed nothing (another run's raised settings
// may be what this one relies on).
func (a *Applier) Apply(need Need) (*Run, []string, error) {
	if a.Self.PID == 0 {
		a.Self.PID = os.Getpid()
	}
	if a.Self.StartTime == 0 {
		st, err := a.FS.StartTime(a.Self.PID)
		if err != nil {
			return nil, nil, fmt.Errorf("--apply-sysctl: reading this process's start time: %v", err)
		}
		a.Self.StartTime = st
	}
	s, err := a.open()
	if err != nil {
		return nil, nil, err
	}
	defer s.close()
	rec, err := s.load()
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	if rec != nil {
		a.prune(rec)
		if len(rec.Holders) == 0 {
			n, err := s.restore(rec, "left raised by a phptune run that ended without restoring it")
			notes = append(notes, n...)
			if err != nil {
				return nil, notes, err
			}
			rec = nil
		}
	}
	cur, errs := a.FS.Read()
	for _, e := range errs {
		if strings.Contains(e.Error(), Somaxconn) {
			return nil, notes, fmt.Errorf("--apply-sysctl: %v", e)
		}
	}
	changes := Plan(cur, need)
	run := &Run{a: a, Changes: changes}
	if len(changes) == 0 && rec == nil {
		return run, notes, nil
	}
	if rec == nil {
		rec = &record{Original: map[string]string{}, Set: map[string]string{}}
	}
	before, beforeSet := maps.Clone(rec.Original), maps.Clone(rec.Set)
	for _, c := range changes {
		if _, ok := rec.Original[c.Name]; !ok {
			rec.Original[c.Name] = c.From
		}
		rec.Set[c.Name] = c.To
	}
	rec.Holders = append(rec.Holders, a.Self)
	// The record first: a crash from here on leaves what to restore.
	if err := s.save(rec); err != nil {
		return nil, notes, err
	}
	run.held = true
	for i, c := range changes {
		if err := a.set(c.Name, c.To); err != nil {
			// Put back what this run wrote, then let go.
			for _, done := range changes[:i] {
				_ = a.set(done.Name, done.From)
			}
			rec.Original, rec.Set = before, beforeSet
			run.Changes = nil
			n, rerr := run.release(s, rec)
			notes = append(notes, n...)
			return nil, notes, errors.Join(fmt.Errorf("--apply-sysctl: %w", err), rerr)
		}
	}
	return run, notes, nil
}

// Restore ends the run's hold: when no other live run holds raised
// settings, every setting phptune raised goes back to the value recorded
// before, and the record is removed. Notes say what was done.
func (r *Run) Restore() ([]string, error) {
	if r == nil || !r.held {
		return nil, nil
	}
	s, err := r.a.open()
	if err != nil {
		return nil, err
	}
	defer s.close()
	rec, err := s.load()
	if err != nil {
		return nil, err
	}
	if rec == nil {
		r.held = false
		return []string{fmt.Sprintf("the record of raised settings (%s) was gone: nothing to restore", RecordFile)}, nil
	}
	return r.release(s, rec)
}

// release drops the run from rec and restores when it was the last.
func (r *Run) release(s *store, rec *record) ([]string, error) {
	r.held = false
	out := rec.Holders[:0]
	for _, h := range rec.Holders {
		if h != r.a.Self {
			out = append(out, h)
		}
	}
	rec.Holders = out
	r.a.prune(rec)
	if len(rec.Holders) > 0 {
		pids := make([]string, len(rec.Holders))
		for i, h := range rec.Holders {
			pids[i] = fmt.Sprint(h.PID)
		}
		return []string{fmt.Sprintf("kernel settings stay raised while other phptune runs use them (pid %s); the last restores them", strings.Join(pids, ", "))}, s.save(rec)
	}
	return s.restore(rec, "")
}

// RestoreLeftovers restores the settings recorded by runs that ended
// without restoring them (killed outright). It is cheap when there is no
// record, and leaves the record of live runs alone.
func (a *Applier) RestoreLeftovers() ([]string, error) {
	if _, err := os.Lstat(a.Dir + "/" + RecordFile); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	s, err := a.open()
	if err != nil {
		return nil, err
	}
	defer s.close()
	rec, err := s.load()
	if err != nil || rec == nil {
		return nil, err
	}
	a.prune(rec)
	if len(rec.Holders) > 0 {
		return nil, nil
	}
	return s.restore(rec, "left raised by a phptune run that ended without restoring it")
}

// prune drops the runs that are gone.
func (a *Applier) prune(rec *record) {
	out := rec.Holders[:0]
	for _, h := range rec.Holders {
		if st, err := a.FS.StartTime(h.PID); err == nil && st == h.StartTime {
			out = append(out, h)
		}
	}
	rec.Holders = out
}

// store is the locked record directory.
type store struct {
	a    *Applier
	dir  int // the home directory, opened without following links
	lock int
}

// open opens the home directory and takes the record's lock; both must
// be owned by the running user and neither may be a symlink.
func (a *Applier) open() (*store, error) {
	dir, err := unix.Open(a.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("phptune's home %s: %v (it must be a real directory, not a symlink)", a.Dir, err)
	}
	if err := ownedFile(dir, a.Dir, true); err != nil {
		unix.Close(dir)
		return nil, err
	}
	lock, err := unix.Openat(dir, lockFile, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		unix.Close(dir)
		return nil, fmt.Errorf("%s/%s: %v (it must be a regular file, not a symlink)", a.Dir, lockFile, err)
	}
	if err := ownedFile(lock, a.Dir+"/"+lockFile, false); err != nil {
		unix.Close(lock)
		unix.Close(dir)
		return nil, err
	}
	if err := unix.Flock(lock, unix.LOCK_EX); err != nil {
		unix.Close(lock)
		unix.Close(dir)
		return nil, fmt.Errorf("locking %s/%s: %v", a.Dir, lockFile, err)
	}
	return &store{a: a, dir: dir, lock: lock}, nil
}

func (s *store) close() {
	_ = unix.Flock(s.lock, unix.LOCK_UN)
	unix.Close(s.lock)
	unix.Close(s.dir)
}

// ownedFile refuses what the running user does not own, and a record or
// lock that is not a regular file or that others may write.
func ownedFile(fd int, name string, isDir bool) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	if int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("refusing %s: it belongs to uid %d, not to the user running phptune (uid %d)", name, st.Uid, os.Geteuid())
	}
	if isDir {
		if st.Mode&unix.S_IWOTH != 0 {
			return fmt.Errorf("refusing %s: anyone may write in it", name)
		}
		return nil
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&(unix.S_IWGRP|unix.S_IWOTH) != 0 {
		return fmt.Errorf("refusing %s: not a regular file only its owner may write", name)
	}
	return nil
}

// load reads the record; nil when there is none.
func (s *store) load() (*record, error) {
	fd, err := unix.Openat(s.dir, RecordFile, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	name := s.a.Dir + "/" + RecordFile
	if err != nil {
		return nil, fmt.Errorf("%s: %v (it must be a regular file, not a symlink)", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if err := ownedFile(fd, name, false); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	if err != nil {
		return nil, err
	}
	rec, err := parseRecord(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v; check the settings it names by hand and remove it", name, err)
	}
	return rec, nil
}

// save writes the record whole (a temporary file renamed over it, both
// synced), or removes it when it holds nothing.
func (s *store) save(rec *record) error {
	if len(rec.Original) == 0 && len(rec.Holders) == 0 {
		return s.remove()
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	tmp := RecordFile + ".tmp"
	_ = unix.Unlinkat(s.dir, tmp, 0)
	fd, err := unix.Openat(s.dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("writing %s/%s: %v", s.a.Dir, tmp, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, werr := f.Write(append(data, '\n'))
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(s.dir, tmp, s.dir, RecordFile)
	}
	if werr == nil {
		werr = unix.Fsync(s.dir)
	}
	if werr != nil {
		_ = unix.Unlinkat(s.dir, tmp, 0)
		return fmt.Errorf("writing the record of kernel settings %s/%s: %v", s.a.Dir, RecordFile, werr)
	}
	return nil
}

func (s *store) remove() error {
	if err := unix.Unlinkat(s.dir, RecordFile, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("removing %s/%s: %v", s.a.Dir, RecordFile, err)
	}
	return unix.Fsync(s.dir)
}

// restore puts back every recorded setting that still holds the value
// phptune wrote, then removes the record; why, when set, is said in each
// note. A setting that cannot be written keeps the record, to be tried
// again by the next run.
func (s *store) restore(rec *record, why string) ([]string, error) {
	var notes []string
	var errs []error
	names := make([]string, 0, len(rec.Original))
	for n := range rec.Original {
		names = append(names, n)
	}
	sort.Strings(names)
	suffix := ""
	if why != "" {
		suffix = " (" + why + ")"
	}
	failed := map[string]bool{}
	for _, n := range names {
		cur, err := s.a.FS.Value(n)
		switch {
		case err != nil:
			errs = append(errs, err)
			failed[n] = true
		case cur != rec.Set[n]:
			notes = append(notes, fmt.Sprintf("left %s at %s: it was changed by someone else since phptune set %s (the value before phptune was %s)", n, cur, rec.Set[n], rec.Original[n]))
		default:
			if err := s.a.set(n, rec.Original[n]); err != nil {
				errs = append(errs, err)
				failed[n] = true
				continue
			}
			notes = append(notes, fmt.Sprintf("restored %s to %s (from %s)%s", n, rec.Original[n], cur, suffix))
		}
	}
	if len(failed) > 0 {
		for n := range rec.Original {
			if !failed[n] {
				delete(rec.Original, n)
				delete(rec.Set, n)
			}
		}
		rec.Holders = nil
		errs = append(errs, s.save(rec))
		return notes, fmt.Errorf("restoring kernel settings (kept in %s/%s for the next run): %w", s.a.Dir, RecordFile, errors.Join(errs...))
	}
	return notes, s.remove()
}
