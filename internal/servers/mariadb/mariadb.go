// Package mariadb renders a private MariaDB server's my.cnf from a
// knob.Config, initialises its data directory, and talks to it over its unix
// socket (no TCP: the lab's database is reachable only from inside the lab).
package mariadb

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os/exec"
	"strings"

	"github.com/phptune/phptune/internal/model/knob"
)

// Binaries are the installed MariaDB programs.
type Binaries struct {
	Server    string // mariadbd
	InstallDB string // mariadb-install-db
	Client    string // mariadb
	Dump      string // mariadb-dump
}

// Find locates MariaDB's programs or says how to install them.
func Find() (*Binaries, error) {
	b := &Binaries{}
	for _, x := range []struct {
		dst   *string
		names []string
	}{
		{&b.Server, []string{"/usr/sbin/mariadbd", "mariadbd", "/usr/sbin/mysqld"}},
		{&b.InstallDB, []string{"mariadb-install-db", "mysql_install_db"}},
		{&b.Client, []string{"mariadb", "mysql"}},
		{&b.Dump, []string{"mariadb-dump", "mysqldump"}},
	} {
		for _, n := range x.names {
			if p, err := exec.LookPath(n); err == nil {
				*x.dst = p
				break
			}
		}
		if *x.dst == "" {
			return nil, fmt.Errorf("MariaDB program %s is not installed; run: phptune setup (or apt-get install mariadb-server mariadb-client)", x.names[0])
		}
	}
	return b, nil
}

// Paths says where a lab's MariaDB keeps its files.
type Paths struct {
	DataDir string
	Socket  string
	PidFile string
	Log     string
	TmpDir  string
	// TCP, when set ("127.0.0.1:3306"), is a loopback address the server
	// also listens on: a site lab's, inside its sealed network namespace,
	// where the site's own configuration (DB_HOST 127.0.0.1) reaches it.
	// Unset, the server has no networking.
	TCP string
	// BindAlso are further addresses the server listens on at TCP's
	// port (bind-address takes a comma list since MariaDB 10.11): a
	// site lab's answers at another machine's address the site's
	// configuration names, inside its seal. Each is an IP literal, else
	// it is left out (bindList).
	BindAlso []string
	// FilePriv, when set, is the one directory the server's file
	// statements (LOAD DATA INFILE, SELECT … INTO OUTFILE, LOAD_FILE) may
	// touch (secure_file_priv), and LOAD DATA LOCAL is off: a site lab's,
	// whose loaded dump and whose code are not trusted.
	FilePriv string
}

// Render returns my.cnf: Debian's 50-server.cnf settings (utf8mb4) with the
// lab's paths, no networking, and the MariaDB knobs. Every path is written as
// a quoted string. Paths that my.cnf cannot carry (see Paths.Check) render as
// a refusal: a comment with the reason and a binlog_format that mariadbd
// rejects, showing the reason, before it touches any data directory.
func Render(cfg knob.Config, p Paths) string {
	q, err := p.quoted()
	if err != nil {
		return refusal("mysqld", err)
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# Rendered by phptune: Debian's 50-server.cnf with the lab's paths and phptune's knobs.")
	w("[mysqld]")
	w("datadir = %s", q.DataDir)
	w("socket = %s", q.Socket)
	w("pid-file = %s", q.PidFile)
	w("log-error = %s", q.Log)
	w("tmpdir = %s", q.TmpDir)
	w("basedir = /usr")
	if q.FilePriv != "" {
		w("secure_file_priv = %s", q.FilePriv)
		w("local_infile = 0")
	}
	if host, port, ok := strings.Cut(p.TCP, ":"); ok && (host == "127.0.0.1" || host == "::1") && digits(port) {
		w("bind-address = %s", bindList(host, p.BindAlso))
		w("port = %s", port)
	} else {
		w("skip-networking")
	}
	w("skip-name-resolve")
	w("character-set-server = utf8mb4")
	w("collation-server = utf8mb4_general_ci")
	w("expire_logs_days = 10")
	w("innodb_buffer_pool_size = %s", cfg["mariadb.innodb_buffer_pool_size"])
	w("max_connections = %s", cfg["mariadb.max_connections"])
	w("innodb_flush_log_at_trx_commit = %s", cfg["mariadb.innodb_flush_log_at_trx_commit"])
	return b.String()
}

// digits reports whether s is a non-empty string of ASCII digits.
func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// RenderFragment returns the [mysqld] lines for the MariaDB knobs alone: the
// my.cnf fragment a user drops into mariadb.conf.d/.
func RenderFragment(cfg knob.Config) string {
	return fmt.Sprintf("[mysqld]\ninnodb_buffer_pool_size = %s\nmax_connections = %s\ninnodb_flush_log_at_trx_commit = %s\n",
		cfg["mariadb.innodb_buffer_pool_size"], cfg["mariadb.max_connections"], cfg["mariadb.innodb_flush_log_at_trx_commit"])
}

// InstallArgs initialise an empty data directory. Root gets ordinary password
// authentication (set right after start) rather than unix_socket, because the
// server runs as the lab's unprivileged user, not as root.
func (b *Binaries) InstallArgs(dataDir string) []string {
	return []string{"--no-defaults", "--datadir=" + dataDir, "--basedir=/usr",
		"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve"}
}

// ServerArgs start mariadbd with conf; --defaults-file must come first.
func (b *Binaries) ServerArgs(conf string) []string {
	return []string{"--defaults-file=" + conf}
}

// Password returns a random password for a lab account.
func Password() string {
	buf := make([]byte, 18)
	if _, err := rand.Read(buf); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return hex.EncodeToString(buf)
}

// Account is a database with a user that owns it.
type Account struct {
	DB, User, Password string
}

// ClientConf is a [client] option file, so passwords never appear on a
// command line (where ps would show them). Every value is quoted; one that
// my.cnf cannot carry renders as a refusal the client tools stop on.
func ClientConf(socket, user, password string) string {
	s, u, pw, err := clientValues(socket, user, password)
	if err != nil {
		return refusal("client", err)
	}
	return fmt.Sprintf("[client]\nsocket = %s\nuser = %s\npassword = %s\n", s, u, pw)
}
