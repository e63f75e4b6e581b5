package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/base/saferead"
	"github.com/phptune/phptune/internal/servers/mariadb"
)

// Secrets are a lab's credentials, kept in DIR/secrets.json (root only,
// mode 0600) and shown only by `lab status --secrets`.
type Secrets struct {
	MariaDBRootPassword string `json:"mariadb_root_password,omitempty"`
	DBName              string `json:"db_name,omitempty"`
	DBUser              string `json:"db_user,omitempty"`
	DBPassword          string `json:"db_password,omitempty"`
	WPAdminUser         string `json:"wordpress_admin_user,omitempty"`
	WPAdminPassword     string `json:"wordpress_admin_password,omitempty"`
}

func (l *Lab) writeSecrets(s Secrets) error {
	data, _ := json.MarshalIndent(s, "", "  ")
	return writeOwned(filepath.Join(l.Dir, "secrets.json"), data, 0o600, -1)
}

// ReadSecrets returns the lab's credentials.
func (l *Lab) ReadSecrets() (*Secrets, error) {
	data, err := saferead.Read(filepath.Join(l.Dir, "secrets.json"), 1<<20, saferead.Mine)
	if err != nil {
		return nil, err
	}
	var s Secrets
	return &s, json.Unmarshal(data, &s)
}

// Passwords are the passwords of the labs that exist now (each marked
// lab's own secrets.json, read through Open and ReadSecrets: never a link
// a lab planted), for a report to remove wherever they appear. Results
// never store them; this catches one echoed in a log or an error.
func Passwords() []string {
	entries, _ := os.ReadDir(Root())
	var out []string
	for _, e := range entries {
		l, err := Open(e.Name())
		if err != nil {
			continue
		}
		s, err := l.ReadSecrets()
		if err != nil {
			continue
		}
		for _, p := range []string{s.MariaDBRootPassword, s.DBPassword, s.WPAdminPassword} {
			if p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// startMariaDB starts mariadbd and waits until it answers as user.
func (l *Lab) startMariaDB(ctx context.Context, acct *account, b *mariadb.Binaries, user, password string) error {
	cmd, err := l.start(acct, "mariadb", b.Server, b.ServerArgs(layout{l.Dir}.p("my.cnf")), nil)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	pid := cmd.Process.Pid
	var last error
	for {
		d, err := mariadb.OpenLab(l.MariaDBSocket, l.DBPeerUID(), user, password, "")
		if err == nil {
			err = d.PingContext(wctx)
			d.Close()
			if err == nil {
				return nil
			}
		}
		last = err
		if !alive(pid) {
			return fmt.Errorf("mariadbd exited while starting: %v", last)
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("mariadbd did not answer: %v (%w)", last, wctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// provision sets the root password and creates the app's database and user,
// through the mariadb client run as the stack account with the statements
// on its standard input.
func (l *Lab) provision(ctx context.Context, acct *account, b *mariadb.Binaries, s Secrets) error {
	sql, err := mariadb.ProvisionSQL(s.MariaDBRootPassword, mariadb.Account{DB: s.DBName, User: s.DBUser, Password: s.DBPassword})
	if err != nil {
		return err
	}
	args := []string{"--no-defaults", "--socket=" + l.MariaDBSocket, "--user=root", "--batch"}
	if err := l.runQuiet(ctx, acct, "mariadb", b.Client, args, nil, strings.NewReader(sql), time.Minute); err != nil {
		return fmt.Errorf("provisioning MariaDB: %w", err)
	}
	// The client options for dump and restore: readable by the stack's
	// group, which owns the database anyway; written by root.
	return writeOwned(layout{l.Dir}.clientConf(), []byte(mariadb.ClientConf(l.MariaDBSocket, "root", s.MariaDBRootPassword)), acct.readFileMode(), acct.group())
}

// snapshot dumps the seeded database so Reset can restore it (a growing
// comments table silently slows every later run). mariadb-dump
// runs as the stack account; its output goes to a root-owned file.
func (l *Lab) snapshot(ctx context.Context, acct *account, b *mariadb.Binaries, db string) error {
	y := layout{l.Dir}
	tmp := y.snapshot() + ".tmp"
	_ = os.Remove(tmp)
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	errLog, err := y.openOut("mariadb")
	if err != nil {
		return err
	}
	defer errLog.Close()
	if l.Sealed() {
		// A site's copy: its routines, triggers and events too, and as
		// long as a large database takes; as root of the lab's server,
		// from its MariaDB account (rootClient).
		err = l.siteRootClient(ctx, b.Dump, []string{"--single-transaction", "--skip-dump-date", "--quick", "--routines", "--triggers", "--events", "--hex-blob", "--no-tablespaces", "--", db}, nil, out, 4*time.Hour)
		if err != nil {
			os.Remove(tmp)
			return fmt.Errorf("mariadb-dump: %v", err)
		}
		if err := out.Sync(); err != nil {
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
		return os.Rename(tmp, y.snapshot())
	}
	args := []string{"--defaults-extra-file=" + y.clientConf(), "--single-transaction", "--skip-dump-date"}
	limit := 5 * time.Minute
	cmd := l.command(acct, b.Dump, append(args, "--", db), nil)
	cmd.Stdout, cmd.Stderr = out, errLog
	if err := l.runRecorded(ctx, cmd, "mariadb-dump", limit); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("mariadb-dump: %v (log: %s)", err, y.outFile("mariadb"))
	}
	if err := out.Sync(); err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, y.snapshot())
}

// siteRootClient is rootClient for a site lab as it stands: its MariaDB
// account and root password from its state and secrets.
func (l *Lab) siteRootClient(ctx context.Context, bin string, args []string, stdin io.Reader, stdout io.Writer, limit time.Duration) error {
	dbAcct, err := l.dbAccount()
	if err != nil {
		return err
	}
	s, err := l.ReadSecrets()
	if err != nil {
		return err
	}
	return l.rootClient(ctx, dbAcct, bin, args, s.MariaDBRootPassword, stdin, stdout, limit)
}

// Reset restores the app's database to its state right after seeding: the
// root-owned snapshot fed to the mariadb client, which runs as the stack
// account (the snapshot holds whatever the lab's database held, so it is
// executed with the lab's rights only).
func (l *Lab) Reset(ctx context.Context) error {
	unlock, err := l.lockFresh()
	if err != nil {
		return err
	}
	defer unlock()
	y := layout{l.Dir}
	in, err := os.OpenFile(y.snapshot(), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		if l.Sealed() {
			return fmt.Errorf("lab %s (site %s) has no database snapshot to reset to: it was brought up without a copy of the site's database; bring it up again with --db-from or --db-dump", l.Name, l.Host)
		}
		return fmt.Errorf("lab %s (app %s) has no database snapshot to reset to; only apps with a seeded database (wordpress) and site labs with a copy of their database can be reset", l.Name, l.App)
	}
	defer in.Close()
	b, err := mariadb.Find()
	if err != nil {
		return err
	}
	s, err := l.ReadSecrets()
	if err != nil {
		return err
	}
	if l.Sealed() {
		// The snapshot is the site's data: no client command in it runs.
		if err := l.siteRootClient(ctx, b.Client, []string{"--batch", "--sandbox", "--binary-mode", "--", s.DBName}, in, nil, 4*time.Hour); err != nil {
			return fmt.Errorf("restoring the snapshot: %w", err)
		}
		return l.restartCaches(ctx)
	}
	acct, err := l.account()
	if err != nil {
		return err
	}
	args := []string{"--defaults-extra-file=" + y.clientConf(), "--batch"}
	limit := 5 * time.Minute
	args = append(args, "--", s.DBName)
	if err := l.runQuiet(ctx, acct, "mariadb", b.Client, args, nil, in, limit); err != nil {
		return fmt.Errorf("restoring the snapshot: %w", err)
	}
	return nil
}
