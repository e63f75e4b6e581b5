package lab

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Down stops every process of the lab called name and removes its
// directory. The directory comes from the name; a directory without
// phptune's marker or with untrusted state (an older phptune's lab) is
// removed too, since it was named, but only processes of the lab account
// whose command line names it are stopped.
func Down(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	labs, err := openLabs()
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w %q (looked in %s); list labs with: phptune lab status", ErrNoLab, name, Root())
	}
	if err != nil {
		return err
	}
	defer labs.Close()
	dir := labs.dir(name)
	if err := labs.check(name); err != nil {
		return err
	}
	unlock, err := lockLab(dir, true)
	if err != nil {
		return err
	}
	defer unlock()
	l, err := readState(name)
	if err != nil {
		o, oerr := untrustedOwner(dir)
		if oerr != nil {
			return oerr
		}
		return teardown(labs, o, nil)
	}
	l.State = "stopping"
	l.OwnerPID, l.OwnerStart = os.Getpid(), startTime(os.Getpid())
	_ = l.writeState()
	return teardown(labs, l.owner(), l.Processes)
}

// untrustedOwner is the owner of a lab whose state cannot be trusted: its
// directory and the stack account, with no boot, so no recorded pid is
// used and only processes naming the directory are found.
func untrustedOwner(dir string) (owner, error) {
	acct, err := stackAccount()
	if err != nil {
		return owner{}, err
	}
	// The pool may have run as another account (--user): the marker, root's
	// own file, names every account the lab's processes run as.
	return owner{dir: dir, uids: append([]int{int(acct.UID)}, markerUIDs(dir)...)}, nil
}

// teardown kills every process of the lab and removes its directory
// through the held labs directory (no link on the way is followed).
func teardown(labs *labsDir, o owner, procs []Process) error {
	if left := killAll(o, procs, 10*time.Second); len(left) > 0 {
		return fmt.Errorf("lab processes %v would not stop; the lab directory %s is kept", left, o.dir)
	}
	if o.limits != nil {
		if left := o.limits.stopCgroup(); len(left) > 0 {
			return fmt.Errorf("processes %v of the lab's cgroup would not stop; the lab directory %s is kept", left, o.dir)
		}
	}
	// A site lab's seal: whatever is left in its namespaces, its mounts
	// (the docroot's overlay) and its namespace files, before the
	// directory that holds them goes.
	if err := destroySeal(o.dir); err != nil {
		return fmt.Errorf("%v; the lab directory %s is kept, try again: phptune lab down %s", err, o.dir, filepath.Base(o.dir))
	}
	return labs.remove(filepath.Base(o.dir))
}

// Health describes a lab found under Root.
type Health struct {
	Lab    *Lab
	Status string // "up", "starting", "restarting", "busy: ...", "broken: ...", "cleaned: ...", "unmarked: ..."
}

// List returns every lab under Root with its health. Labs that are dead (all
// processes gone, left "starting" by a phptune that died, or made by a tune
// that is gone) are cleaned as they are found, as `lab status` promises. A
// lab another phptune is changing is shown as busy and never reaped; a
// directory without phptune's marker is listed and left alone.
func List() ([]Health, error) {
	labs, err := openLabs()
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer labs.Close()
	entries, err := fs.ReadDir(labs.root.FS(), ".")
	if err != nil {
		return nil, err
	}
	var out []Health
	for _, e := range entries {
		if !e.IsDir() || CheckName(e.Name()) != nil {
			continue
		}
		out = append(out, inspect(labs, e.Name()))
	}
	return out, nil
}

// inspect reports on the lab called name and cleans it when it is dead.
func inspect(labs *labsDir, name string) Health {
	dir := labs.dir(name)
	if !hasMarker(dir) {
		return Health{Lab: &Lab{Name: name, Dir: dir}, Status: "unmarked: no phptune marker (an older phptune's lab, or not a lab); left alone, remove it with: phptune lab down " + name}
	}
	unlock, err := lockLab(dir, false)
	if err != nil {
		l, rerr := readState(name)
		if rerr != nil {
			l = &Lab{Name: name, Dir: dir}
		}
		st := l.State
		if st == "" {
			st = "starting"
		}
		if errors.Is(err, errBusy) {
			return Health{Lab: l, Status: fmt.Sprintf("%s (by phptune pid %d)", st, l.OwnerPID)}
		}
		return Health{Lab: l, Status: "unknown: " + err.Error()}
	}
	defer unlock()
	l, err := readState(name)
	if err != nil {
		// Marked, unlocked and without a readable state: an `up` killed
		// before it wrote one.
		o, oerr := untrustedOwner(dir)
		if oerr != nil {
			return Health{Lab: &Lab{Name: name, Dir: dir}, Status: "unknown: " + oerr.Error()}
		}
		h := Health{Lab: &Lab{Name: name, Dir: dir}}
		if terr := teardown(labs, o, nil); terr != nil {
			h.Status = "dead, cleaning failed: " + terr.Error()
		} else {
			h.Status = "cleaned: no state recorded (an interrupted lab up)"
		}
		return h
	}
	h := Health{Lab: l, Status: healthOf(l)}
	if reason := deadReason(l); reason != "" {
		if terr := teardown(labs, l.owner(), l.Processes); terr != nil {
			h.Status = "dead, cleaning failed: " + terr.Error()
		} else {
			h.Status = "cleaned: " + reason
		}
	}
	return h
}

// cleanDead takes down a dead lab called name before `up` reuses the name.
func cleanDead(labs *labsDir, name string, say func(string)) {
	if _, err := labs.root.Lstat(name); err != nil {
		return
	}
	if h := inspect(labs, name); strings.HasPrefix(h.Status, "cleaned") {
		say("cleaning dead lab " + name + ": " + strings.TrimPrefix(h.Status, "cleaned: "))
	}
}

func healthOf(l *Lab) string {
	switch l.State {
	case "starting", "restarting", "stopping":
		if !ownerAlive(l) {
			return fmt.Sprintf("broken: phptune (pid %d) died while %s the lab; take it down with: phptune lab down %s", l.OwnerPID, strings.TrimSuffix(l.State, "ing")+"ing", l.Name)
		}
		return l.State
	}
	var dead []string
	o := l.owner()
	for _, p := range l.Processes {
		if !o.verified(p) {
			dead = append(dead, p.Component)
		}
	}
	if len(dead) > 0 {
		return "broken: " + strings.Join(dead, ", ") + " exited; see phptune lab logs " + l.Name + ", then phptune lab down " + l.Name
	}
	return l.State
}

// ownerAlive reports whether the process recorded as the lab's owner still
// runs (same pid and start time).
func ownerAlive(l *Lab) bool {
	st, ok := readStat(l.OwnerPID)
	return ok && st.state != "Z" && (l.OwnerStart == 0 || st.start == l.OwnerStart)
}

// deadReason says why a lab should be cleaned, or "" when it is alive, still
// being changed by a live phptune, or broken in a way its user should see
// (a restart of a user's lab that its phptune did not finish).
func deadReason(l *Lab) string {
	switch {
	case l.State == "":
		return "no state recorded (an interrupted lab up)"
	case (l.State == "starting" || l.State == "stopping") && !ownerAlive(l):
		return fmt.Sprintf("phptune (pid %d) died while it was %s the lab", l.OwnerPID, l.State)
	case l.OwnedBy != "" && !ownerAlive(l):
		return fmt.Sprintf("it was made by phptune %s (pid %d), which is gone", l.OwnedBy, l.OwnerPID)
	case l.State == "up":
		o := l.owner()
		for _, p := range l.Processes {
			if o.verified(p) {
				return ""
			}
		}
		return "all its processes have exited"
	}
	return ""
}

// ReapOrphans takes down every lab made by a tune or compare (OwnedBy)
// whose owner is gone — killed, or dead with the machine's OOM killer —
// and returns what it did, for the next phptune command to say. Labs made
// by `lab up`, busy labs and unmarked directories are left alone.
func ReapOrphans() []Health {
	labs, err := openLabs()
	if err != nil {
		return nil
	}
	defer labs.Close()
	entries, err := fs.ReadDir(labs.root.FS(), ".")
	if err != nil {
		return nil
	}
	var out []Health
	for _, e := range entries {
		if !e.IsDir() || CheckName(e.Name()) != nil {
			continue
		}
		l, err := readState(e.Name())
		if err != nil || l.OwnedBy == "" || ownerAlive(l) {
			continue
		}
		if h := inspect(labs, e.Name()); strings.HasPrefix(h.Status, "cleaned") || strings.HasPrefix(h.Status, "dead") {
			out = append(out, h)
		}
	}
	return out
}
