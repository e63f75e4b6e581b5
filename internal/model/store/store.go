// Package store is phptune's results database: an embedded SQLite file
// (modernc.org/sqlite, no cgo) holding tune runs and their trials. Each
// trial is written in its own transaction as soon as it finishes, so a tune
// killed at any moment loses at most the trial in flight, and --resume
// continues from what is stored. The file uses WAL journaling: a writer
// killed mid-transaction leaves the database at its last commit.
//
// The database is private (mode 0600, its -wal and -shm files too), and
// nothing reaches it unredacted: every command line, log, result and option
// is passed through package redact before it is written, so a credential
// given on a command line (-H 'Authorization: ...', --body 'pass=...', a
// URL's password) is never stored.
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/base/finite"

	"github.com/phptune/phptune/internal/model/redact"
	"github.com/phptune/phptune/internal/model/results"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// ErrNotFound is returned for a run that is not in the database.
var ErrNotFound = errors.New("not found")

// Run statuses.
const (
	StatusRunning     = "running"
	StatusInterrupted = "interrupted"
	StatusDone        = "done"
	StatusFailed      = "failed"
)

// DB is an open results database.
type DB struct {
	db   *sql.DB
	path string
	// redact are the user's extra secret names (--redact), on top of
	// redact's own rule.
	redact []string
}

// migrations create and evolve the schema; user_version records how many
// have run. Append only: never edit one that has shipped.
var migrations = []string{
	`CREATE TABLE runs (
		id          TEXT PRIMARY KEY,
		created_at  TEXT NOT NULL,
		updated_at  TEXT NOT NULL,
		status      TEXT NOT NULL,
		command     TEXT NOT NULL DEFAULT '',
		app         TEXT NOT NULL DEFAULT '',
		workload    TEXT NOT NULL DEFAULT '',
		options     TEXT NOT NULL DEFAULT '{}', -- the orchestrator's inputs, JSON, for --resume
		result      TEXT                        -- the final results.Tune, JSON
	);
	CREATE TABLE trials (
		run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		n           INTEGER NOT NULL,
		key         TEXT NOT NULL,             -- identity of the candidate, checked on resume
		phase       TEXT NOT NULL,
		label       TEXT NOT NULL DEFAULT '',
		connections INTEGER NOT NULL,
		status      TEXT NOT NULL,
		config      TEXT NOT NULL,             -- JSON map
		fail_reason TEXT NOT NULL DEFAULT '',
		log         TEXT NOT NULL DEFAULT '',
		bench       TEXT,                      -- raw results.Bench JSON incl. observer samples
		started_at  TEXT NOT NULL,
		finished_at TEXT NOT NULL,
		PRIMARY KEY (run_id, n)
	);`,
	// Bench runs: kind tells them apart, bench holds the results.Bench.
	`ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'tune';
	ALTER TABLE runs ADD COLUMN bench TEXT;`,
	// The names given with --redact, JSON, so a resumed run and its
	// reports redact them too.
	`ALTER TABLE runs ADD COLUMN redact TEXT NOT NULL DEFAULT '[]';`,
	// Servers comparisons (phptune servers): the results.Servers, JSON.
	`ALTER TABLE runs ADD COLUMN servers TEXT;`,
}

// Open opens (creating if needed) the database at path and brings its
// schema up to date. The file is made private (0600) before SQLite opens
// it, and so are an existing database's -wal and -shm files, which SQLite
// then creates with the database's mode.
func Open(ctx context.Context, path string) (*DB, error) {
	if err := makePrivate(path); err != nil {
		return nil, fmt.Errorf("results database %s: %w", path, err)
	}
	q := url.Values{}
	// busy_timeout: another phptune reading the file (a report) must not
	// make a trial's write fail. synchronous(NORMAL) with WAL is durable
	// against process kills; only a power loss may drop the last commits.
	for _, p := range []string{"busy_timeout(5000)", "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(1)"} {
		q.Add("_pragma", p)
	}
	name, err := dsn(path, q)
	if err != nil {
		return nil, fmt.Errorf("results database %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", name)
	if err != nil {
		return nil, fmt.Errorf("results database %s: %w", path, err)
	}
	// One connection: SQLite serialises writers anyway, and a single
	// connection keeps the pragmas and avoids SQLITE_BUSY between our own.
	db.SetMaxOpenConns(1)
	s := &DB{db: db, path: path}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("results database %s: %w", path, err)
	}
	return s, nil
}

// dsn is the SQLite URI of the file at path with the query q: the absolute
// path with every byte but letters, digits and -._~/ percent-encoded, so
// that a path with ?, #, % or spaces names exactly that file (SQLite
// decodes the path, and the driver takes the first ? as the start of q).
func dsn(path string, q url.Values) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("file://")
	for i := 0; i < len(abs); i++ {
		c := abs[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~/", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	b.WriteString("?")
	b.WriteString(q.Encode())
	return b.String(), nil
}

// makePrivate creates the database file with mode 0600 if it is missing
// (SQLite would create it 0644) and sets 0600 on an existing one and on its
// -wal, -shm and -journal files. Links are not followed: a symlink in
// their place is refused rather than chmod-ed.
func makePrivate(path string) error {
	for i, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		flags := syscall.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
		if i == 0 {
			flags = syscall.O_RDWR | syscall.O_CREAT | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
		}
		fd, err := syscall.Open(p, flags, 0o600)
		if errors.Is(err, syscall.ENOENT) && i > 0 {
			continue
		}
		if errors.Is(err, syscall.ELOOP) {
			return fmt.Errorf("%s is a symbolic link; the results database must be a regular file", p)
		}
		if err != nil {
			return fmt.Errorf("opening %s: %w", p, err)
		}
		var st syscall.Stat_t
		err = syscall.Fstat(fd, &st)
		if err == nil && st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			err = fmt.Errorf("%s is not a regular file", p)
		}
		if err == nil && st.Mode&0o7777 != 0o600 {
			if cerr := syscall.Fchmod(fd, 0o600); cerr != nil {
				err = fmt.Errorf("making %s private (0600): %w", p, cerr)
			}
		}
		syscall.Close(fd)
		if err != nil {
			return err
		}
	}
	return nil
}

// Redact adds names whose values are redacted before anything is stored
// (the user's --redact NAME), besides those redact.IsSecretName knows.
// Runs created through s record them.
func (s *DB) Redact(names ...string) {
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" && !slices.ContainsFunc(s.redact, func(m string) bool { return strings.EqualFold(m, n) }) {
			s.redact = append(s.redact, n)
		}
	}
}

// RedactNames are the names added with Redact.
func (s *DB) RedactNames() []string { return slices.Clone(s.redact) }

// text redacts a string before it is stored.
func (s *DB) text(v string) string { return redact.Text(v, s.redact) }

// doc is v's JSON, redacted.
func (s *DB) doc(v any) (string, error) {
	if v != nil && reflect.TypeOf(v).Kind() != reflect.Pointer {
		// Clean needs something it can set: a copy of a value.
		c := reflect.New(reflect.TypeOf(v))
		c.Elem().Set(reflect.ValueOf(v))
		v = c.Interface()
	}
	if bad := finite.Clean(v); len(bad) > 0 && redact.Warn != nil {
		redact.Warn(fmt.Sprintf("non-finite numbers stored as 0 (please report): %v", bad))
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	if b, err = redact.JSON(b, s.redact); err != nil {
		return "", err
	}
	return string(b), nil
}

func (s *DB) migrate(ctx context.Context) error {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this phptune understands (%d); use a newer phptune", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", i+1)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the database.
func (s *DB) Close() error { return s.db.Close() }

// Run kinds.
const (
	KindTune     = "tune"
	KindBench    = "bench"
	KindCapacity = "capacity"
	// KindServers is a servers comparison: its runs are stored as trials
	// as they finish, its summary (results.Servers) at the end.
	KindServers = "servers"
)

// Run is one tune or bench run.
type Run struct {
	ID        string
	Kind      string // KindTune, KindBench or KindServers
	CreatedAt time.Time
	UpdatedAt time.Time
	Status    string
	Command   string
	App       string
	Workload  string
	// Options is the orchestrator's input, stored so --resume needs only
	// the run's ID.
	Options json.RawMessage
	// Result is the final tune, once done.
	Result *results.Tune
	// Capacity is a capacity search's result (stored in the result
	// column, which holds each kind's final document).
	Capacity *results.Capacity
	// Bench is a bench run's result.
	Bench *results.Bench
	// Servers is a servers comparison's summary, once stored.
	Servers *results.Servers
	// Redact are the names given with --redact for the run (see
	// DB.Redact); its stored values were redacted with them.
	Redact []string
}

// Trial is one stored trial: results.Trial plus the candidate's identity
// and timing.
type Trial struct {
	results.Trial
	Key        string
	Label      string
	StartedAt  time.Time
	FinishedAt time.Time
}

const timeFormat = time.RFC3339Nano

// CreateRun stores a new run with status running (a tune unless r.Kind
// says otherwise). Its command, workload and options are redacted first.
func (s *DB) CreateRun(ctx context.Context, r Run) error {
	if r.Kind == "" {
		r.Kind = KindTune
	}
	now := time.Now().UTC()
	if r.CreatedAt.IsZero() {
		r.CreatedAt = now
	}
	opts := "{}"
	if len(r.Options) > 0 {
		b, err := redact.JSON(r.Options, s.redact)
		if err != nil {
			return fmt.Errorf("storing run %s: options: %w", r.ID, err)
		}
		opts = string(b)
	}
	names, err := s.names(r.Redact)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx,
		`INSERT INTO runs (id, kind, created_at, updated_at, status, command, app, workload, options, redact) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Kind, r.CreatedAt.Format(timeFormat), now.Format(timeFormat), StatusRunning, s.text(r.Command), r.App, s.text(r.Workload), opts, names)
	if err != nil {
		return fmt.Errorf("storing run %s: %w", r.ID, err)
	}
	return nil
}

// names is the JSON of the run's --redact names and the handle's.
func (s *DB) names(extra []string) (string, error) {
	all := slices.Clone(s.redact)
	for _, n := range extra {
		if !slices.ContainsFunc(all, func(m string) bool { return strings.EqualFold(m, n) }) {
			all = append(all, n)
		}
	}
	if all == nil {
		all = []string{}
	}
	b, err := json.Marshal(all)
	return string(b), err
}

// SetOption records one more field of a run's stored options, a decision
// the run made once that a resumed run must make the same way (name:
// lower-case letters and underscores; value: a number, string or bool).
func (s *DB) SetOption(ctx context.Context, id, name string, value any) error {
	if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz_") != "" {
		return fmt.Errorf("run %s: option name %q: only lower-case letters and underscores", id, name)
	}
	switch value.(type) {
	case int, int64, float64, string, bool:
	default:
		return fmt.Errorf("run %s: option %s: a %T is not stored", id, name, value)
	}
	return s.update(ctx, id, `UPDATE runs SET options = json_set(options, ?, ?), updated_at = ? WHERE id = ?`,
		"$."+name, value, time.Now().UTC().Format(timeFormat), id)
}

// SetStatus records a run's status (e.g. interrupted, running again).
func (s *DB) SetStatus(ctx context.Context, id, status string) error {
	return s.update(ctx, id, `UPDATE runs SET status = ?, updated_at = ? WHERE id = ?`, status, time.Now().UTC().Format(timeFormat), id)
}

// Finish stores the final result and the status.
func (s *DB) Finish(ctx context.Context, id, status string, t *results.Tune) error {
	return finish(ctx, s, `UPDATE runs SET status = ?, result = ?, updated_at = ? WHERE id = ?`, id, status, t)
}

// FinishServers stores a servers comparison's summary (what was measured
// so far when it was interrupted) and the status.
func (s *DB) FinishServers(ctx context.Context, id, status string, r *results.Servers) error {
	return finish(ctx, s, `UPDATE runs SET status = ?, servers = ?, updated_at = ? WHERE id = ?`, id, status, r)
}

// finish runs query, an UPDATE of a run's status, one document column and
// updated_at, with v's document (NULL for nil).
func finish[T any](ctx context.Context, s *DB, query, id, status string, v *T) error {
	var doc any
	if v != nil {
		b, err := s.doc(v)
		if err != nil {
			return err
		}
		doc = b
	}
	return s.update(ctx, id, query, status, doc, time.Now().UTC().Format(timeFormat), id)
}

func (s *DB) update(ctx context.Context, id, q string, args ...any) error {
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("updating run %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	return nil
}

// Run returns one run.
func (s *DB) Run(ctx context.Context, id string) (*Run, error) {
	rows, err := s.runs(ctx, `WHERE id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("run %q: %w; list runs with: phptune report --list", id, ErrNotFound)
	}
	return &rows[0], nil
}

// Runs lists every run, newest first.
func (s *DB) Runs(ctx context.Context) ([]Run, error) {
	return s.runs(ctx, `ORDER BY created_at DESC`)
}

func (s *DB) runs(ctx context.Context, where string, args ...any) ([]Run, error) {
	return query(ctx, s.db, scanRun, `SELECT id, kind, created_at, updated_at, status, command, app, workload, options, result, bench, redact, servers FROM runs `+where, args...)
}

func scanRun(rows *sql.Rows) (Run, error) {
	var r Run
	var created, updated, opts, names string
	var result, bench, servers sql.NullString
	if err := rows.Scan(&r.ID, &r.Kind, &created, &updated, &r.Status, &r.Command, &r.App, &r.Workload, &opts, &result, &bench, &names, &servers); err != nil {
		return r, err
	}
	if err := json.Unmarshal([]byte(names), &r.Redact); err != nil {
		return r, fmt.Errorf("run %s: stored --redact names: %w", r.ID, err)
	}
	r.CreatedAt, _ = time.Parse(timeFormat, created)
	r.UpdatedAt, _ = time.Parse(timeFormat, updated)
	r.Options = json.RawMessage(opts)
	var err error
	if r.Kind == KindCapacity {
		if r.Capacity, err = nullDoc[results.Capacity](result); err != nil {
			return r, fmt.Errorf("run %s: stored capacity result: %w", r.ID, err)
		}
	} else if r.Result, err = nullDoc[results.Tune](result); err != nil {
		return r, fmt.Errorf("run %s: stored result: %w", r.ID, err)
	}
	if r.Bench, err = nullDoc[results.Bench](bench); err != nil {
		return r, fmt.Errorf("run %s: stored bench: %w", r.ID, err)
	}
	if r.Servers, err = nullDoc[results.Servers](servers); err != nil {
		return r, fmt.Errorf("run %s: stored servers comparison: %w", r.ID, err)
	}
	return r, nil
}

// query runs q and returns its rows, each read by scan, in order.
func query[T any](ctx context.Context, db *sql.DB, scan func(*sql.Rows) (T, error), q string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// nullDoc decodes a stored JSON document, nil for NULL.
func nullDoc[T any](doc sql.NullString) (*T, error) {
	if !doc.Valid {
		return nil, nil
	}
	v := new(T)
	if err := json.Unmarshal([]byte(doc.String), v); err != nil {
		return nil, err
	}
	return v, nil
}

// SaveTrial stores a finished trial (replacing one with the same number,
// which only a resumed run that re-measured it would write).
func (s *DB) SaveTrial(ctx context.Context, runID string, t Trial) error {
	cfg, err := s.doc(t.Config)
	if err != nil {
		return err
	}
	var bench any
	if t.Bench != nil {
		b, err := s.doc(t.Bench)
		if err != nil {
			return err
		}
		bench = b
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO trials
		(run_id, n, key, phase, label, connections, status, config, fail_reason, log, bench, started_at, finished_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		runID, t.N, t.Key, t.Phase, s.text(t.Label), t.Connections, t.Status, cfg, s.text(t.FailReason), s.text(t.Log), bench,
		t.StartedAt.UTC().Format(timeFormat), t.FinishedAt.UTC().Format(timeFormat)); err != nil {
		return fmt.Errorf("storing trial %d of run %s: %w", t.N, runID, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET updated_at = ? WHERE id = ?`, time.Now().UTC().Format(timeFormat), runID); err != nil {
		return err
	}
	return tx.Commit()
}

// Trials returns a run's trials in order.
func (s *DB) Trials(ctx context.Context, runID string) ([]Trial, error) {
	return query(ctx, s.db, scanTrial, `SELECT n, key, phase, label, connections, status, config, fail_reason, log, bench, started_at, finished_at
		FROM trials WHERE run_id = ? ORDER BY n`, runID)
}

func scanTrial(rows *sql.Rows) (Trial, error) {
	var t Trial
	var cfg, started, finished string
	var bench sql.NullString
	if err := rows.Scan(&t.N, &t.Key, &t.Phase, &t.Label, &t.Connections, &t.Status, &cfg, &t.FailReason, &t.Log, &bench, &started, &finished); err != nil {
		return t, err
	}
	if err := json.Unmarshal([]byte(cfg), &t.Config); err != nil {
		return t, fmt.Errorf("trial %d: config: %w", t.N, err)
	}
	var err error
	if t.Bench, err = nullDoc[results.Bench](bench); err != nil {
		return t, fmt.Errorf("trial %d: bench: %w", t.N, err)
	}
	t.StartedAt, _ = time.Parse(timeFormat, started)
	t.FinishedAt, _ = time.Parse(timeFormat, finished)
	return t, nil
}

// SaveBench stores a finished bench run under b.ID, redacted.
func (s *DB) SaveBench(ctx context.Context, b *results.Bench, app, workload string) error {
	return s.saveDone(ctx, finishedRun{id: b.ID, kind: KindBench, column: "bench", started: b.StartedAt,
		command: b.Command, app: app, workload: workload, doc: b})
}

// SaveCapacity stores a finished capacity search under c.ID, redacted: its
// document in the result column, kind capacity.
func (s *DB) SaveCapacity(ctx context.Context, c *results.Capacity, app, workload string) error {
	return s.saveDone(ctx, finishedRun{id: c.ID, kind: KindCapacity, column: "result", started: c.StartedAt,
		command: c.Command, app: app, workload: workload, doc: c})
}

// finishedRun is a run stored whole once it is done: its document, doc
// redacted as JSON, goes in column ("bench" or "result").
type finishedRun struct {
	id, kind, column string
	started          time.Time
	command          string
	app, workload    string
	doc              any
}

// saveDone inserts a finished run, created when it started (now if
// unknown), with the redaction names in force.
func (s *DB) saveDone(ctx context.Context, r finishedRun) error {
	doc, err := s.doc(r.doc)
	if err != nil {
		return err
	}
	names, err := s.names(nil)
	if err != nil {
		return err
	}
	now := time.Now().UTC().Format(timeFormat)
	created := now
	if !r.started.IsZero() {
		created = r.started.UTC().Format(timeFormat)
	}
	// column is one of two constants above, never input.
	_, err = s.db.ExecContext(ctx, `INSERT INTO runs (id, kind, created_at, updated_at, status, command, app, workload, `+r.column+`, redact) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.id, r.kind, created, now, StatusDone, s.text(r.command), r.app, s.text(r.workload), doc, names)
	if err != nil {
		return fmt.Errorf("storing %s %s: %w", r.kind, r.id, err)
	}
	return nil
}

// Exists says whether there is a results database at path: commands that
// only read results refuse to create an empty one.
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
