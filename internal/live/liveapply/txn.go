package liveapply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Change is one file the transaction writes (Content) or removes.
type Change struct {
	Path    string // absolute
	Content []byte
	Remove  bool
	// Mode of a new file (0644 when zero); a file that exists keeps its
	// mode and owner.
	Mode os.FileMode
}

// Step is one server's part of a transaction. Every func may be nil.
type Step struct {
	Name string // "php-fpm", "nginx": recorded, and given to Recover
	// Check validates the server's whole configuration as it now is on
	// disk, with the server's own checker (php-fpm -t, nginx -t).
	Check func(ctx context.Context) error
	// Reload makes the running server read it, gracefully.
	Reload func(ctx context.Context) error
	// Healthy says whether the server serves as it should after a reload.
	Healthy func(ctx context.Context) error
	// ReloadWithoutFiles says Reload does not make the server read the
	// files Check validates (MariaDB's SET GLOBAL of recorded values):
	// undoing runs it even when Check refuses the restored files.
	ReloadWithoutFiles bool
}

// Plan is what a transaction changes and how the servers take it.
type Plan struct {
	Changes []Change
	Steps   []Step
	// Settle is the wait between the reloads and the health checks.
	Settle time.Duration
	// Prepare, when set, runs under the transaction's lock after the
	// transactions cut short before it are undone, and before anything
	// is saved or written: what a change records of the live state
	// (MariaDB's values before it) is read there, not before another
	// apply's undo changed it.
	Prepare func(ctx context.Context, p *Plan) error
}

// Options say where transactions are recorded and let callers watch.
type Options struct {
	// Home is the apply home: journals and saved files, private (0700).
	Home string
	// Root is recorded in the journal (the host's root, "/" or --root).
	Root string
	// Log, when set, gets one line per step.
	Log func(format string, args ...any)
	// AfterState, when set, is called each time the journal reaches a
	// state (tests stop or kill a transaction there).
	AfterState func(state string)
	// StepsFor gives the steps to reload after undoing a transaction cut
	// short, by the names its journal recorded (nil: files only).
	StepsFor func(names []string) []Step
}

// maxSaved bounds the previous content saved of one file.
const maxSaved = 16 << 20

// Failure is a transaction that was rolled back: why, and whether the
// rollback itself went through (files restored, servers reloaded and
// healthy again).
type Failure struct {
	Journal  *Journal
	Cause    error
	Rollback error // nil: the host is back to its previous state
}

func (f *Failure) Error() string {
	msg := fmt.Sprintf("%v; rolled back to the previous configuration (transaction %s)", f.Cause, f.Journal.ID)
	if f.Rollback != nil {
		msg = fmt.Sprintf("%v; the rollback (transaction %s) did not complete: %v — run phptune rollback", f.Cause, f.Journal.ID, f.Rollback)
	}
	return msg
}

func (f *Failure) Unwrap() error { return f.Cause }

// Apply runs plan as one transaction. Transactions cut short before it
// are undone first. On any failure — a file that cannot be written, a
// check, a reload, a health check, ctx cancelled — every file is put back
// as it was and the servers reloaded with it; the error is a *Failure.
func Apply(ctx context.Context, plan Plan, opt Options) (*Journal, error) {
	s, unlock, err := open(opt)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := recoverPending(s, opt); err != nil {
		return nil, err
	}
	if plan.Prepare != nil {
		if err := plan.Prepare(ctx, &plan); err != nil {
			return nil, err
		}
	}
	j, err := prepare(s, plan, opt)
	if err != nil {
		return nil, err
	}
	fail := func(cause error, reload bool) (*Journal, error) {
		return j, &Failure{Journal: j, Cause: cause, Rollback: undo(s, j, cause.Error(), reloadSteps(plan.Steps, reload), opt)}
	}
	for _, c := range plan.Changes {
		if err := ctx.Err(); err != nil {
			return fail(fmt.Errorf("interrupted: %w", err), false)
		}
		if err := write(c); err != nil {
			return fail(err, false)
		}
		logf(opt, "wrote %s", c.Path)
	}
	if err := advance(s, j, Written, opt); err != nil {
		return fail(err, false)
	}
	for _, st := range plan.Steps {
		if st.Check == nil {
			continue
		}
		if err := st.Check(ctx); err != nil {
			return fail(fmt.Errorf("%s refused the new configuration: %w", st.Name, err), false)
		}
		logf(opt, "%s accepts the new configuration", st.Name)
	}
	if err := advance(s, j, Reloaded, opt); err != nil {
		return fail(err, false)
	}
	for _, st := range plan.Steps {
		if err := ctx.Err(); err != nil {
			return fail(fmt.Errorf("interrupted: %w", err), true)
		}
		if st.Reload == nil {
			continue
		}
		if err := st.Reload(ctx); err != nil {
			return fail(fmt.Errorf("reloading %s: %w", st.Name, err), true)
		}
		logf(opt, "reloaded %s", st.Name)
	}
	if plan.Settle > 0 {
		select {
		case <-ctx.Done():
			return fail(fmt.Errorf("interrupted: %w", ctx.Err()), true)
		case <-time.After(plan.Settle):
		}
	}
	for _, st := range plan.Steps {
		if st.Healthy == nil {
			continue
		}
		if err := st.Healthy(ctx); err != nil {
			return fail(fmt.Errorf("%s is not healthy after the reload: %w", st.Name, err), true)
		}
		logf(opt, "%s is healthy", st.Name)
	}
	if err := advance(s, j, Done, opt); err != nil {
		return j, err
	}
	return j, nil
}

// Rollback undoes the newest transaction that is not rolled back yet:
// one cut short, or the last one applied. It returns the journal undone
// (nil when there is nothing to undo).
func Rollback(ctx context.Context, opt Options) (*Journal, error) {
	s, unlock, err := open(opt)
	if err != nil {
		return nil, err
	}
	defer unlock()
	js, err := s.list()
	if err != nil {
		return nil, err
	}
	for _, j := range js {
		if j.State == RolledBack {
			continue
		}
		var steps []Step
		if opt.StepsFor != nil && j.State != Prepared {
			steps = opt.StepsFor(j.Steps)
		}
		return j, undo(s, j, "phptune rollback", steps, opt)
	}
	return nil, nil
}

// Recover undoes every transaction that was cut short (state Prepared,
// Written or Reloaded) and returns them.
func Recover(ctx context.Context, opt Options) ([]*Journal, error) {
	s, unlock, err := open(opt)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return recoverPending(s, opt)
}

// History lists the transactions, newest first.
func History(opt Options) ([]*Journal, error) {
	return store{opt.Home}.list()
}

// Next is the transaction Rollback would undo now: the newest not rolled
// back (nil when there is none). It takes no lock: what it returns is
// for asking, and Rollback reads the journals again.
func Next(opt Options) (*Journal, error) {
	js, err := History(opt)
	if err != nil {
		return nil, err
	}
	for _, j := range js {
		if j.State != RolledBack {
			return j, nil
		}
	}
	return nil, nil
}

func open(opt Options) (store, func(), error) {
	if opt.Home == "" {
		return store{}, nil, errors.New("liveapply: no apply home")
	}
	s, err := makeStore(opt.Home)
	if err != nil {
		return store{}, nil, err
	}
	unlock, err := s.lock()
	if err != nil {
		return store{}, nil, err
	}
	return s, unlock, nil
}

func recoverPending(s store, opt Options) ([]*Journal, error) {
	js, err := s.list()
	if err != nil {
		return nil, err
	}
	var out []*Journal
	for _, j := range js {
		if !j.Pending() {
			continue
		}
		logf(opt, "transaction %s (pid %d) was cut short at %q: undoing it", j.ID, j.PID, j.State)
		var steps []Step
		if opt.StepsFor != nil && j.State != Prepared {
			steps = opt.StepsFor(j.Steps)
		}
		if err := undo(s, j, "cut short at "+j.State+"; undone by the next phptune", steps, opt); err != nil {
			return out, fmt.Errorf("undoing transaction %s, cut short: %w", j.ID, err)
		}
		out = append(out, j)
	}
	return out, nil
}

// prepare checks every change and records the previous state of its
// file, then writes the journal (state Prepared).
func prepare(s store, plan Plan, opt Options) (*Journal, error) {
	j := &Journal{ID: newID(time.Now()), Created: time.Now().UTC(), State: Prepared, Root: opt.Root, PID: os.Getpid()}
	for _, st := range plan.Steps {
		j.Steps = append(j.Steps, st.Name)
	}
	seen := map[string]bool{}
	dir := s.journalDir(j.ID)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	for i, c := range plan.Changes {
		if !filepath.IsAbs(c.Path) || filepath.Clean(c.Path) != c.Path {
			return nil, fmt.Errorf("liveapply: %q is not a clean absolute path", c.Path)
		}
		if seen[c.Path] {
			return nil, fmt.Errorf("liveapply: %s is changed twice", c.Path)
		}
		seen[c.Path] = true
		sf, err := saveFile(c.Path, dir, i)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		j.Files = append(j.Files, sf)
	}
	if err := s.write(j); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if opt.AfterState != nil {
		opt.AfterState(Prepared)
	}
	return j, nil
}

// write puts one change in place; a file that exists keeps its mode and
// owner.
// Its directory is opened and checked again (openParent) and the file
// written through that descriptor.
func write(c Change) error {
	h, err := openParent(c.Path)
	if err != nil {
		return err
	}
	defer h.Close()
	if c.Remove {
		return h.remove()
	}
	mode, uid, gid := c.Mode, -1, -1
	if mode == 0 {
		mode = 0o644
	}
	if st, err := h.lstat(); err == nil {
		mode, uid, gid = os.FileMode(st.Mode&0o777), int(st.Uid), int(st.Gid)
	}
	return h.write(c.Content, mode, uid, gid)
}

// saveFile checks the directory of path (openParent) and copies the file
// there, if any, into the transaction's directory as saved-i.
func saveFile(path, dir string, i int) (SavedFile, error) {
	sf := SavedFile{Path: path}
	h, err := openParent(path)
	if err != nil {
		return sf, err
	}
	defer h.Close()
	st, err := h.lstat()
	switch {
	case errors.Is(err, os.ErrNotExist):
		return sf, nil
	case err != nil:
		return sf, err
	case st.Mode&syscall.S_IFMT != syscall.S_IFREG:
		return sf, fmt.Errorf("%s is not a regular file (%v): phptune replaces only regular files", path, modeType(st.Mode))
	}
	old, err := h.read(maxSaved)
	if err != nil {
		return sf, err
	}
	sf.Existed, sf.Mode, sf.UID, sf.GID = true, os.FileMode(st.Mode&0o777), int(st.Uid), int(st.Gid)
	sf.Saved = "saved-" + strconv.Itoa(i)
	if err := writeFileAtomic(filepath.Join(dir, sf.Saved), old, 0o600, -1, -1); err != nil {
		return sf, err
	}
	return sf, nil
}

// untrustedError is a file undo did not put back because its directory
// (or one on its path) failed the check.
type untrustedError struct{ error }

func (e *untrustedError) Unwrap() error { return e.error }

// restore puts f back as the journal saved it, through its directory
// opened and checked again.
func restore(f SavedFile, dir string) error {
	h, err := openParent(f.Path)
	if err != nil {
		return &untrustedError{fmt.Errorf("not putting %s back: %w", f.Path, err)}
	}
	defer h.Close()
	if !f.Existed {
		return h.remove()
	}
	old, err := readOwn(filepath.Join(dir, f.Saved), maxSaved)
	if err != nil {
		return fmt.Errorf("the saved copy of %s: %w", f.Path, err)
	}
	if h.same(old) {
		return nil
	}
	return h.write(old, f.Mode, f.UID, f.GID)
}

func advance(s store, j *Journal, state string, opt Options) error {
	j.State = state
	if err := s.write(j); err != nil {
		return fmt.Errorf("recording transaction %s as %s: %w", j.ID, state, err)
	}
	if opt.AfterState != nil {
		opt.AfterState(state)
	}
	return nil
}

// undo puts every file of j back as it was, records j as rolled back with
// reason, then checks, reloads and probes steps (the servers the
// transaction may have reloaded). It runs to the end whatever happens,
// and returns the first error.
func undo(s store, j *Journal, reason string, steps []Step, opt Options) error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	dir := s.journalDir(j.ID)
	refused := false
	for _, f := range j.Files {
		err := restore(f, dir)
		var u *untrustedError
		if errors.As(err, &u) {
			refused = true
		}
		keep(err)
	}
	if refused {
		// Not recorded as rolled back: once the directory is fixed the
		// next rollback (or recovery) puts the rest back; files already
		// back are left as they are.
		keep(fmt.Errorf("transaction %s stays as it was (%s), not rolled back: fix the directory named above, then run phptune rollback again", j.ID, j.State))
	} else {
		logf(opt, "restored %d files of transaction %s", len(j.Files), j.ID)
		j.State, j.Reason = RolledBack, reason
		keep(s.write(j))
	}
	// Undoing must finish even when the apply was interrupted: the
	// servers get their own time, not the cancelled context.
	ctx, cancel := context.WithTimeout(UndoingContext(context.Background()), 2*time.Minute)
	defer cancel()
	for _, st := range steps {
		if st.Check != nil {
			if err := st.Check(ctx); err != nil {
				keep(fmt.Errorf("%s refuses the restored configuration: %w", st.Name, err))
				if !st.ReloadWithoutFiles {
					continue
				}
			}
		}
		if st.Reload != nil {
			if err := st.Reload(ctx); err != nil {
				keep(fmt.Errorf("reloading %s with the restored configuration: %w", st.Name, err))
				continue
			}
			logf(opt, "reloaded %s with the restored configuration", st.Name)
		}
	}
	for _, st := range steps {
		if st.Healthy != nil {
			keep(st.Healthy(ctx))
		}
	}
	if opt.AfterState != nil {
		opt.AfterState(RolledBack)
	}
	return first
}

// undoingKey marks the context a Step's funcs get while a transaction is
// undone.
type undoingKey struct{}

// UndoingContext is ctx marked as an undo's.
func UndoingContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, undoingKey{}, true)
}

// Undoing says whether ctx is an undo's: a step that judges the change
// itself (how its reload went) has nothing to judge then.
func Undoing(ctx context.Context) bool {
	v, _ := ctx.Value(undoingKey{}).(bool)
	return v
}

// reloadSteps is steps when the servers may have taken the new files
// (reload), nil when no reload happened: restoring the files is enough.
func reloadSteps(steps []Step, reload bool) []Step {
	if reload {
		return steps
	}
	return nil
}

func logf(opt Options, format string, args ...any) {
	if opt.Log != nil {
		opt.Log(format, args...)
	}
}
