// Package liveapply changes a live host's configuration as one transaction:
// drop-in files written atomically, the previous state of every file saved
// first, the whole configuration validated by the servers' own checks,
// graceful reloads, a health check, and an automatic rollback to the saved
// state on any failure. A journal records each step before it is taken, so
// that a transaction cut short (Ctrl-C, SIGKILL, a crash) is finished or
// undone by the next `phptune apply` or `phptune rollback`.
//
// The package knows files, commands and signals, not servers: callers
// (package cli) describe each server's checks, reloads and probes as Steps.
package liveapply

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"
)

// States of a transaction, in the order they are reached. A journal whose
// state is Prepared, Written or Reloaded was cut short: Recover undoes it.
const (
	Prepared   = "prepared"    // previous state saved, nothing changed yet
	Written    = "written"     // new files in place, not yet reloaded
	Reloaded   = "reloaded"    // servers reloaded, health not yet confirmed
	Done       = "done"        // applied and healthy
	RolledBack = "rolled-back" // undone: the previous files are back
)

// Journal is one transaction's record, kept in its directory under the
// apply home (journal.json, and saved/N for each file's previous content).
type Journal struct {
	ID      string      `json:"id"`
	Created time.Time   `json:"created"`
	State   string      `json:"state"`
	Root    string      `json:"root"`
	Files   []SavedFile `json:"files"`
	// Steps names the steps to reload again after a rollback.
	Steps []string `json:"steps"`
	// Reason says why a transaction was rolled back.
	Reason string `json:"reason,omitempty"`
	// PID is the phptune that ran it (for messages only).
	PID int `json:"pid"`
}

// SavedFile is a file the transaction writes or removes, and what it was.
type SavedFile struct {
	Path    string      `json:"path"`
	Existed bool        `json:"existed"`
	Mode    os.FileMode `json:"mode,omitempty"`
	UID     int         `json:"uid,omitempty"`
	GID     int         `json:"gid,omitempty"`
	// Saved is the previous content's file in the journal's directory.
	Saved string `json:"saved,omitempty"`
}

// Pending reports whether the transaction was cut short.
func (j *Journal) Pending() bool {
	return j.State == Prepared || j.State == Written || j.State == Reloaded
}

// store is the apply home: one directory per transaction, named by its id
// (a sortable time stamp), and the lock file.
type store struct{ dir string }

func (s store) journalDir(id string) string { return filepath.Join(s.dir, id) }

// makeStore creates the apply home, private to its owner.
func makeStore(dir string) (store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return store{}, fmt.Errorf("apply home %s: %v", dir, err)
	}
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() {
		return store{}, fmt.Errorf("apply home %s is not a directory", dir)
	}
	// The journals tell undo what to write where, as root: no other
	// account may be able to plant or change one, so the home is checked
	// as a directory apply writes into (its own and every one above).
	h, err := walkParent(filepath.Join(dir, "journal.json"))
	if err != nil {
		return store{}, fmt.Errorf("apply home %s: %w", dir, err)
	}
	h.Close()
	if err := os.Chmod(dir, 0o700); err != nil {
		return store{}, err
	}
	return store{dir}, nil
}

// write saves j (atomically: temporary file, fsync, rename, fsync of the
// directory), so a crash leaves the previous or the new record, never half.
func (s store) write(j *Journal) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(s.journalDir(j.ID), "journal.json"), b, 0o600, -1, -1)
}

// read loads the journal of id.
func (s store) read(id string) (*Journal, error) {
	b, err := readOwn(filepath.Join(s.journalDir(id), "journal.json"), 1<<20)
	if err != nil {
		return nil, err
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("journal %s: %v", id, err)
	}
	if j.ID != id {
		return nil, fmt.Errorf("journal %s names itself %q", id, j.ID)
	}
	return &j, nil
}

// list returns the journals, newest first; unreadable ones are skipped.
func (s store) list() ([]*Journal, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	var out []*Journal
	for _, id := range ids {
		if j, err := s.read(id); err == nil {
			out = append(out, j)
		}
	}
	return out, nil
}

// newID is a sortable id: the time to the microsecond and this process.
func newID(now time.Time) string {
	return now.UTC().Format("20060102-150405.000000") + "-" + strconv.Itoa(os.Getpid())
}

// lock takes the apply lock (flock on a file in the apply home): one
// transaction at a time. It dies with its holder, so a killed phptune
// leaves no lock behind, only a pending journal.
func (s store) lock() (unlock func(), err error) {
	path := filepath.Join(s.dir, "lock")
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CREAT|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("apply lock %s: %v", path, err)
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		syscall.Close(fd)
		if err == syscall.EWOULDBLOCK {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("apply lock %s: %v", path, err)
	}
	return func() { syscall.Close(fd) }, nil
}

// ErrBusy says another phptune is applying or rolling back on this host.
var ErrBusy = errors.New("another phptune apply or rollback is running on this host (its lock is held); wait for it, then run phptune apply again")
