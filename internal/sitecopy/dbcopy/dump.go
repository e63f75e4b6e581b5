package dbcopy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/phptune/phptune/internal/sitecopy/site"
)

// Source is one database of a running MariaDB server, reached as the
// app's own account.
type Source struct {
	Conn Conn
	DB   string
	// SizeBytes is the database's size on disk (package site reads it
	// from the data directory without a query); 0 when unknown. Progress
	// is measured against it.
	SizeBytes int64
	RunAs     Account
}

// SourceFor is the source a discovered site's app names: its database,
// account and endpoint (the one package site tied to a running server).
func SourceFor(app *site.App, t *site.DBTarget, runAs Account) (Source, error) {
	if app == nil || t == nil {
		return Source{}, errors.New("the site has no database to copy")
	}
	if t.Error != "" {
		return Source{}, fmt.Errorf("the site's database cannot be copied: %s", t.Error)
	}
	if app.DB.Name == "" || app.DB.User == "" {
		return Source{}, fmt.Errorf("%s names no literal database name and user (computed: %s): phptune does not run the app's code to learn them; make a dump yourself and give it with --db-dump FILE",
			app.File, strings.Join(app.NotLiteral, ", "))
	}
	conn := Conn{Network: t.Endpoint.Network, Address: t.Endpoint.Address, User: app.DB.User, Password: app.DB.Password.Reveal()}
	if t.Endpoint.Network == "remote" {
		conn = remoteConn(conn, t)
	}
	return Source{
		Conn:      conn,
		DB:        app.DB.Name,
		SizeBytes: t.SizeBytes,
		RunAs:     runAs,
	}, nil
}

// DumpOptions are mariadb-dump's options for a consistent, read-only copy
// of one database (each exists in MariaDB 10.11): one transaction's
// snapshot instead of table locks, rows streamed rather than buffered,
// the database's routines, triggers and events, binary columns as hex (a
// dump is text), no tablespace statements (they need PROCESS and read
// information_schema.FILES), and no date, so that equal data dumps equal.
var DumpOptions = []string{"--single-transaction", "--quick", "--routines", "--triggers", "--events",
	"--hex-blob", "--no-tablespaces", "--skip-dump-date"}

// Dump writes a logical copy of src's database to w: mariadb-dump run as
// src.RunAs with the app's credentials in its option pipe. progress, when
// set, is called with the bytes written so far and src.SizeBytes (about
// four times a second, and once at the end).
func Dump(ctx context.Context, src Source, w io.Writer, progress func(done, total int64)) error {
	if err := checkDBName(src.DB); err != nil {
		return err
	}
	bin, err := exec.LookPath("mariadb-dump")
	if err != nil {
		return errors.New("mariadb-dump is not installed; run: apt-get install -y mariadb-client")
	}
	conf, err := src.Conn.optionFile()
	if err != nil {
		return err
	}
	cmd, err := src.RunAs.clientCommand(bin, conf, append(append([]string{}, DumpOptions...), "--", src.DB)...)
	if err != nil {
		return err
	}
	var errs tail
	pw := &progressWriter{w: w, total: src.SizeBytes, report: progress}
	cmd.Stdout, cmd.Stderr = pw, &errs
	err = run(ctx, src.RunAs.Start, cmd)
	pw.flush()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("dumping database %s: %w", src.DB, ctx.Err())
		}
		if pw.err != nil {
			return fmt.Errorf("dumping database %s: writing the dump: %w", src.DB, pw.err)
		}
		return fmt.Errorf("dumping database %s as %s: mariadb-dump: %v: %s; check that the app's account can read it (SELECT, SHOW VIEW, TRIGGER, EVENT, LOCK TABLES on %s.*), or give a dump of your own with --db-dump FILE",
			src.DB, src.Conn.User, err, errs.String(src.Conn.Password), src.DB)
	}
	return nil
}

// checkDBName refuses a name mariadb-dump would take for something else.
func checkDBName(db string) error {
	if db == "" {
		return errors.New("no database name: the app's configuration names none")
	}
	if strings.ContainsRune(db, 0) || strings.ContainsAny(db, "/\\.") || len(db) > 64 {
		return fmt.Errorf("database name %q is not one MariaDB accepts as a plain name (no '/', '\\', '.', at most 64 bytes)", db)
	}
	return nil
}

// progressWriter counts what passes through it and reports it.
type progressWriter struct {
	w      io.Writer
	total  int64
	report func(done, total int64)
	mu     sync.Mutex
	done   int64
	last   time.Time
	err    error
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += int64(n)
	if err != nil && p.err == nil {
		p.err = err
	}
	if p.report != nil && time.Since(p.last) >= 250*time.Millisecond {
		p.last = time.Now()
		p.report(p.done, p.total)
	}
	return n, err
}

func (p *progressWriter) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.report != nil {
		p.report(p.done, p.total)
	}
}
