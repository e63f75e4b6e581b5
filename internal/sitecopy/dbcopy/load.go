package dbcopy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/phptune/phptune/internal/sitecopy/site"
)

// Target is a lab's MariaDB and the app account a copy is loaded for.
type Target struct {
	// Socket is the lab's server's socket; RootPassword its root's
	// (the lab's secrets), used only inside the option pipe.
	Socket       string
	RootPassword string
	// DB is the database the dump is loaded into: the name the app's
	// configuration gives.
	DB string
	// User and Password are the app's account as its configuration names
	// it; Hosts the hosts it connects from (HostsFor), one account each.
	User     string
	Password site.Secret
	Hosts    []string
	// Grants are production's (ReadGrants); none gives the app all
	// privileges on DB.
	Grants []Grant
	RunAs  Account
}

// HostsFor are the account hosts an app reaching e connects as, when
// production's grants were not read: "localhost" over a socket, and over
// loopback TCP the address itself as well (a server resolving names sees
// "localhost" for 127.0.0.1).
func HostsFor(e site.Endpoint) []string {
	if e.Network == "tcp" {
		if h, _, err := splitHost(e.Address); err == nil && h != "localhost" {
			return []string{"localhost", h}
		}
	}
	return []string{"localhost"}
}

// gzipMagic starts every gzip stream (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// Decompressed returns r, gunzipped when it starts with gzip's magic
// bytes (whatever the file is called).
func Decompressed(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if bytes.Equal(head, gzipMagic) {
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("the dump starts as gzip but does not read as one: %v", err)
		}
		return z, nil
	}
	return br, nil
}

// SetupSQL are the statements run before the dump: the database, and the
// app's account(s) with its password (replacing any of that name), so
// that the dump's views, triggers and routines find their definer.
func (t Target) SetupSQL() (string, error) {
	if err := checkDBName(t.DB); err != nil {
		return "", err
	}
	if t.User == "" {
		return "", errors.New("no app account: the app's configuration names no database user")
	}
	if strings.EqualFold(t.User, "root") || t.User == "mariadb.sys" || t.User == "mysql" {
		return "", fmt.Errorf("the app connects as %s, which the lab's MariaDB keeps for itself; give the app an account of its own (GRANT ALL ON %s.* TO 'app'@'localhost')", t.User, t.DB)
	}
	hosts := t.Hosts
	if len(hosts) == 0 {
		hosts = []string{"localhost"}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE DATABASE IF NOT EXISTS %s CHARACTER SET utf8mb4;\n", quoteIdent(t.DB))
	for _, h := range hosts {
		fmt.Fprintf(&b, "CREATE OR REPLACE USER %s@%s IDENTIFIED BY %s;\n", sqlString(t.User), sqlString(h), sqlString(t.Password.Reveal()))
	}
	fmt.Fprintf(&b, "USE %s;\n", quoteIdent(t.DB))
	return b.String(), nil
}

// GrantSQL are the statements run after the dump (a table's grant needs
// the table): production's grants for DB, or all privileges on it.
func (t Target) GrantSQL() string {
	hosts := t.Hosts
	if len(hosts) == 0 {
		hosts = []string{"localhost"}
	}
	grants, _ := ForDB(t.Grants, t.DB)
	if len(grants) == 0 {
		grants = []Grant{{Privileges: []string{"ALL PRIVILEGES"}, DB: t.DB, Table: "*"}}
	}
	var b strings.Builder
	for _, h := range hosts {
		for _, g := range grants {
			b.WriteString(g.SQL(t.User, h) + ";\n")
		}
	}
	return b.String()
}

// Load loads the dump r (plain or gzip) into dst's server: the mariadb
// client run as dst.RunAs with the lab's root in its option pipe, with
// --sandbox and --binary-mode (a dump is data: no shell command, no
// file read, no client command runs from it), fed SetupSQL, the dump,
// then GrantSQL on its standard input.
func Load(ctx context.Context, dst Target, r io.Reader) error {
	bin, err := exec.LookPath("mariadb")
	if err != nil {
		return errors.New("the mariadb client is not installed; run: apt-get install -y mariadb-client")
	}
	setup, err := dst.SetupSQL()
	if err != nil {
		return err
	}
	dump, err := Decompressed(r)
	if err != nil {
		return err
	}
	conf, err := Conn{Network: "unix", Address: dst.Socket, User: "root", Password: dst.RootPassword}.optionFile()
	if err != nil {
		return err
	}
	cmd, err := dst.RunAs.clientCommand(bin, conf, "--batch", "--sandbox", "--binary-mode", "--default-character-set=utf8mb4")
	if err != nil {
		return err
	}
	var errs tail
	cmd.Stdin = io.MultiReader(strings.NewReader(setup), dump, strings.NewReader("\n"+dst.GrantSQL()))
	cmd.Stdout, cmd.Stderr = &errs, &errs
	if err := run(ctx, dst.RunAs.Start, cmd); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("loading the dump into %s: %w", dst.DB, ctx.Err())
		}
		return fmt.Errorf("loading the dump into the lab's database %s: mariadb: %v: %s; check the dump (a dump of one database, made by mariadb-dump or mysqldump), or make it again",
			dst.DB, err, errs.String(dst.Password.Reveal(), dst.RootPassword))
	}
	return nil
}

// ReadGrants reads the app account's own grants on src's server (SHOW
// GRANTS FOR CURRENT_USER: read-only, no temporary table), as the mariadb
// client run as src.RunAs. The host they name is the account's.
func ReadGrants(ctx context.Context, src Source) ([]Grant, []string, error) {
	bin, err := exec.LookPath("mariadb")
	if err != nil {
		return nil, nil, errors.New("the mariadb client is not installed; run: apt-get install -y mariadb-client")
	}
	conf, err := src.Conn.optionFile()
	if err != nil {
		return nil, nil, err
	}
	cmd, err := src.RunAs.clientCommand(bin, conf, "--batch", "--raw", "--skip-column-names", "-e", "SHOW GRANTS FOR CURRENT_USER")
	if err != nil {
		return nil, nil, err
	}
	var out bytes.Buffer
	var errs tail
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := run(ctx, src.RunAs.Start, cmd); err != nil {
		return nil, nil, fmt.Errorf("reading the grants of %s: %v: %s", src.Conn.User, err, errs.String(src.Conn.Password))
	}
	var gs []Grant
	var notes []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		g, err := ParseGrant(line)
		if err != nil {
			notes = append(notes, err.Error())
			continue
		}
		gs = append(gs, g)
	}
	return gs, notes, nil
}

// AccountHosts are the distinct hosts the grants name: the app account's
// host(s) as production knows it.
func AccountHosts(gs []Grant) []string {
	var hosts []string
	seen := map[string]bool{}
	for _, g := range gs {
		if !seen[g.Host] {
			seen[g.Host] = true
			hosts = append(hosts, g.Host)
		}
	}
	return hosts
}

func splitHost(addr string) (string, string, error) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return "", "", fmt.Errorf("no port in %q", addr)
	}
	return strings.Trim(addr[:i], "[]"), addr[i+1:], nil
}
