package livehost

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/base/saferead"
	"github.com/phptune/phptune/internal/live/liveapply"
	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/watch/proc"
)

// MariaDBDropInName is apply's file in the server's last included
// directory: read after Debian's 50-server.cnf, so its values win.
const MariaDBDropInName = "99-phptune.cnf"

// previousMark starts the drop-in's line that records the values the
// server ran with before phptune's change, so a rollback (even one by a
// later phptune, after this one was killed) sets them back.
const previousMark = "# phptune-previous:"

// MariaDBSetting is one MariaDB variable apply changes.
type MariaDBSetting struct {
	Knob  string // mariadb.max_connections
	Var   string // max_connections
	Value string // the knob's value as written in the file (128M)
	// Dynamic says whether SET GLOBAL changes it on the running server
	// (read from information_schema.SYSTEM_VARIABLES); one that is not
	// takes effect at the next restart only.
	Dynamic bool
}

// MariaDBSettings are rec's MariaDB knobs set away from Debian's defaults
// (what a recommendation holds), in registry order.
func MariaDBSettings(rec knob.Config) []MariaDBSetting {
	var out []MariaDBSetting
	for _, o := range rec.Overrides() {
		name, value, _ := strings.Cut(o, "=")
		k, err := knob.Lookup(name)
		if err != nil || k.Component != knob.MariaDB {
			continue
		}
		out = append(out, MariaDBSetting{Knob: name, Var: k.Directive, Value: value})
	}
	return out
}

// MariaDBDropInDir is the directory the drop-in goes to: the last
// !includedir of the server's option files (its files are read last).
func MariaDBDropInDir(s MariaDBServer) (string, error) {
	if s.Conf == nil {
		return "", fmt.Errorf("MariaDB's option files could not be read: %s", s.ConfError)
	}
	if len(s.Conf.IncludeDirs) == 0 {
		return "", fmt.Errorf("MariaDB's option files (%s) have no !includedir line, so phptune has no directory to put %s in without editing them; add `!includedir /etc/mysql/mariadb.conf.d/` at the end of my.cnf (as Debian's has), or set the values by hand",
			strings.Join(s.Conf.Files, ", "), MariaDBDropInName)
	}
	return s.Conf.IncludeDirs[len(s.Conf.IncludeDirs)-1], nil
}

// ComposeMariaDB renders the drop-in: the settings under [mysqld], and a
// comment recording before (the live values they replace).
func ComposeMariaDB(settings []MariaDBSetting, before map[string]string) []byte {
	var b strings.Builder
	b.WriteString("# Written by phptune apply: the recommendation's MariaDB settings, read after the\n# distribution's files. Undo with phptune rollback (or remove this file).\n")
	b.WriteString(previousMark)
	for _, s := range settings {
		// Only a variable name and a number reach the file (ReadLive
		// checks; this is the last line of defence: anything else
		// could start a section of its own).
		if n, err := number(before[s.Var]); err == nil && isVarName(s.Var) {
			fmt.Fprintf(&b, " %s=%s", s.Var, n)
		}
	}
	b.WriteString("\n[mysqld]\n")
	for _, s := range settings {
		fmt.Fprintf(&b, "%s = %s\n", s.Var, s.Value)
	}
	return []byte(b.String())
}

// ParsePrevious reads the drop-in's record of the values before it.
func ParsePrevious(content []byte) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(string(content), "\n") {
		rest, ok := strings.CutPrefix(line, previousMark)
		if !ok {
			continue
		}
		for _, f := range strings.Fields(rest) {
			if k, v, ok := strings.Cut(f, "="); ok && isVarName(k) {
				if n, err := number(v); err == nil {
					out[k] = n
				}
			}
		}
	}
	return out
}

// isVarName accepts a server variable's name: lower-case letters, digits
// and '_' (it is written into SET GLOBAL).
func isVarName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// MariaDBStep is MariaDB as a transaction step: Check runs mariadbd
// --help --verbose on its whole configuration as on disk and wants the
// drop-in's values to be what the server would start with; Reload makes
// the live values match the drop-in on disk (SET GLOBAL for the dynamic
// ones; for a variable the drop-in does not set, as after a rollback, the
// value before phptune's change), or restarts the server through systemd
// when Restart names its unit; Healthy wants a query to answer and the
// values read back.
type MariaDBStep struct {
	Server MariaDBServer
	Binary string // mariadbd, for --help --verbose
	Root   string
	// DropIn is the drop-in's path and Vars the variables it manages.
	DropIn string
	Vars   []string
	// Before are the live values before the transaction (by variable).
	Before map[string]string
	// Dynamic says which Vars SET GLOBAL changes.
	Dynamic map[string]bool
	// Restart is the systemd unit to restart instead of SET GLOBAL
	// (--restart-db); "" never restarts.
	Restart string
	Timeout time.Duration
}

// Step returns m as a transaction step named "mariadb".
func (m *MariaDBStep) Step() liveapply.Step {
	// Reload sets the recorded values with SET GLOBAL: undoing runs it
	// even when mariadbd refuses the restored option files.
	return liveapply.Step{Name: "mariadb", Check: m.Check, Reload: m.Reload, Healthy: m.Healthy, ReloadWithoutFiles: true}
}

func (m *MariaDBStep) timeout() time.Duration {
	if m.Timeout > 0 {
		return m.Timeout
	}
	return 30 * time.Second
}

// ReadLive reads the live values and dynamic-ness of vars.
func (m *MariaDBStep) ReadLive(ctx context.Context, vars []string) (values map[string]string, dynamic map[string]bool, err error) {
	d, err := OpenMariaDB(m.Server)
	if err != nil {
		return nil, nil, err
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(ctx, m.timeout())
	defer cancel()
	values, dynamic = map[string]string{}, map[string]bool{}
	for _, v := range vars {
		if !isVarName(v) {
			return nil, nil, fmt.Errorf("%q is not a variable name", v)
		}
		var value, readOnly string
		err := d.QueryRowContext(ctx, "SELECT GLOBAL_VALUE, READ_ONLY FROM information_schema.SYSTEM_VARIABLES WHERE VARIABLE_NAME = ?", strings.ToUpper(v)).Scan(&value, &readOnly)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %v", v, err)
		}
		// The answer is the server's, which its account (mysql) controls:
		// only a number goes on, into SET GLOBAL or the drop-in's record.
		n, err := number(value)
		if err != nil {
			return nil, nil, fmt.Errorf("the server's value of %s (%.40q) is %v: not recorded, nothing changed", v, value, err)
		}
		values[v], dynamic[v] = n, readOnly == "NO"
	}
	return values, dynamic, nil
}

// FromDropIn sets up the step to undo the apply whose drop-in is on disk
// now (phptune rollback, or a transaction cut short): the variables its
// record names, the values before it, and which are dynamic.
func (m *MariaDBStep) FromDropIn(ctx context.Context) error {
	m.Before = map[string]string{}
	if b, err := saferead.Whole(m.DropIn, maxConf, saferead.AnyOwner); err == nil {
		m.Before = ParsePrevious(b)
	}
	m.Vars = m.Vars[:0]
	for v := range m.Before {
		m.Vars = append(m.Vars, v)
	}
	sort.Strings(m.Vars)
	var err error
	_, m.Dynamic, err = m.ReadLive(ctx, m.Vars)
	return err
}

// defaultsArgs are the option-file arguments the server was started
// with, for mariadbd --help (they must come first).
func (m *MariaDBStep) defaultsArgs() []string {
	var args []string
	switch {
	case m.Server.DefaultsFile != "":
		args = append(args, "--defaults-file="+m.Server.DefaultsFile)
	case m.Root != "/":
		args = append(args, "--defaults-file="+filepath.Join(m.Root, "etc", "mysql", "my.cnf"))
	}
	if m.Server.ExtraFile != "" {
		args = append(args, "--defaults-extra-file="+m.Server.ExtraFile)
	}
	return args
}

// Check validates the whole configuration as on disk with the server's
// own reader and wants each value of the drop-in to be the one the server
// would start with (no later file overrides it).
func (m *MariaDBStep) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, m.timeout())
	defer cancel()
	args := append(m.defaultsArgs(), "--help", "--verbose")
	out, err := exec.CommandContext(ctx, m.Binary, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %s (%v)", m.Binary, strings.Join(args, " "), errorLines(out), err)
	}
	effective := ParseHelpVariables(string(out))
	file, err := m.fileValues()
	if err != nil {
		return err
	}
	for v, want := range file {
		got, ok := effective[v]
		if !ok {
			return fmt.Errorf("mariadbd --help does not list %s", v)
		}
		if !sameNumber(got, want) {
			return fmt.Errorf("%s: the server would start with %s = %s, not the drop-in's %s: an option file read after %s sets it", m.DropIn, v, got, want, m.DropIn)
		}
	}
	return nil
}

// errorLines are the lines of mariadbd's output that say ERROR.
func errorLines(out []byte) string {
	var errs []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "ERROR") {
			errs = append(errs, strings.TrimSpace(l))
		}
	}
	if len(errs) == 0 {
		return lastLines(out, 3)
	}
	return strings.Join(errs, " | ")
}

// ParseHelpVariables reads the table of variables mariadbd --help
// --verbose prints ("name   value" lines after the dashed rule that
// follows "Variables (--variable-name=value)"), by name with dashes as
// underscores.
func ParseHelpVariables(out string) map[string]string {
	vars := map[string]string{}
	lines := strings.Split(out, "\n")
	i := 0
	for ; i < len(lines) && !strings.HasPrefix(lines[i], "Variables (--variable-name=value)"); i++ {
	}
	for i++; i < len(lines) && !strings.HasPrefix(lines[i], "---"); i++ {
	}
	for i++; i < len(lines); i++ {
		f := strings.Fields(lines[i])
		if len(f) == 0 {
			break
		}
		value := ""
		if len(f) > 1 {
			value = strings.Join(f[1:], " ")
		}
		vars[strings.ReplaceAll(f[0], "-", "_")] = value
	}
	return vars
}

// fileValues are the managed variables the drop-in on disk sets (none
// when it is absent), as numbers for SET GLOBAL.
func (m *MariaDBStep) fileValues() (map[string]string, error) {
	out := map[string]string{}
	b, err := saferead.Whole(m.DropIn, maxConf, saferead.AnyOwner)
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	lines, err := parseCnf(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", m.DropIn, err)
	}
	for _, l := range lines {
		if l.kind == 'o' && contains(m.Vars, l.name) && contains(ServerGroups(""), l.group) {
			n, err := number(l.value)
			if err != nil {
				return nil, fmt.Errorf("%s: %s = %q: %v", m.DropIn, l.name, l.value, err)
			}
			out[l.name] = n
		}
	}
	return out, nil
}

// wanted is what each managed variable should be live: the drop-in's
// value, or the value before phptune's change.
func (m *MariaDBStep) wanted() (map[string]string, error) {
	want, err := m.fileValues()
	if err != nil {
		return nil, err
	}
	for _, v := range m.Vars {
		if _, ok := want[v]; ok {
			continue
		}
		if b, ok := m.Before[v]; ok {
			n, err := number(b)
			if err != nil {
				return nil, fmt.Errorf("the value of %s before phptune's change, %q: %v", v, b, err)
			}
			want[v] = n
		}
	}
	return want, nil
}

// Reload sets the live values to the wanted ones (SET GLOBAL, dynamic
// variables only), or restarts the server when Restart is set. A SET the
// server answers with a warning (a value it truncated or refused) is an
// error.
func (m *MariaDBStep) Reload(ctx context.Context) error {
	want, err := m.wanted()
	if err != nil {
		return err
	}
	if m.Restart != "" {
		return m.restart(ctx)
	}
	d, err := OpenMariaDB(m.Server)
	if err != nil {
		return err
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(ctx, m.timeout())
	defer cancel()
	conn, err := d.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, v := range m.Vars {
		n, ok := want[v]
		if !ok || !m.Dynamic[v] {
			continue
		}
		var live string
		if err := conn.QueryRowContext(ctx, "SELECT @@GLOBAL."+v).Scan(&live); err != nil {
			return fmt.Errorf("reading %s: %v", v, err)
		}
		if sameNumber(live, n) {
			continue
		}
		// v is a registry name (isVarName) and n digits (number).
		if _, err := conn.ExecContext(ctx, "SET GLOBAL "+v+" = "+n); err != nil {
			return fmt.Errorf("MariaDB refused SET GLOBAL %s = %s: %v", v, n, err)
		}
		if w := warnings(ctx, conn); w != "" {
			return fmt.Errorf("MariaDB did not take SET GLOBAL %s = %s as given: %s", v, n, w)
		}
	}
	return nil
}

// warnings reads SHOW WARNINGS on conn, one line.
func warnings(ctx context.Context, conn *sql.Conn) string {
	rows, err := conn.QueryContext(ctx, "SHOW WARNINGS")
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var level, msg string
		var code int
		if rows.Scan(&level, &code, &msg) == nil {
			out = append(out, fmt.Sprintf("%s %d: %s", level, code, msg))
		}
	}
	return strings.Join(out, "; ")
}

// restart restarts the server through systemd and finds its new process
// on the same socket.
func (m *MariaDBStep) restart(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, "systemctl", "restart", m.Restart).CombinedOutput()
	if err != nil {
		return fmt.Errorf("systemctl restart %s: %s (%v)", m.Restart, lastLines(out, 3), err)
	}
	return m.waitServer(ctx)
}

// waitServer waits until a server answers on the socket again and takes
// it as the step's server.
func (m *MariaDBStep) waitServer(ctx context.Context) error {
	deadline := time.Now().Add(2 * m.timeout())
	var last error
	for time.Now().Before(deadline) {
		s, err := m.rediscover()
		if err == nil {
			d, err2 := OpenMariaDB(s)
			if err2 == nil {
				err2 = d.PingContext(ctx)
				d.Close()
			}
			if err = err2; err == nil {
				m.Server = s
				return nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("MariaDB did not answer on %s after its restart: %v", m.Server.Socket, last)
}

// Healthy wants a query to answer and each dynamic variable (every one
// after a restart) to read back as wanted.
func (m *MariaDBStep) Healthy(ctx context.Context) error {
	want, err := m.wanted()
	if err != nil {
		return err
	}
	live, _, err := m.ReadLive(ctx, m.Vars)
	if err != nil {
		return fmt.Errorf("MariaDB does not answer: %v", err)
	}
	for _, v := range m.Vars {
		n, ok := want[v]
		if !ok || (!m.Dynamic[v] && m.Restart == "") {
			continue
		}
		if !sameNumber(live[v], n) {
			return fmt.Errorf("MariaDB's %s reads back %s, not %s", v, live[v], n)
		}
	}
	return nil
}

// SystemdUnit is the systemd service running pid (from its cgroup:
// ".../mariadb.service"), "" when none.
func SystemdUnit(procRoot string, pid int) string {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		path := line[strings.LastIndexByte(line, ':')+1:]
		if base := filepath.Base(path); strings.HasSuffix(base, ".service") {
			return strings.TrimSuffix(base, ".service")
		}
	}
	return ""
}

// number writes a knob or server value as the integer SET GLOBAL takes:
// a size with its suffix in bytes, digits as they are.
func number(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", fmt.Errorf("empty value")
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return strconv.FormatInt(n, 10), nil
	}
	n, err := knob.ParseSize(v)
	if err != nil {
		return "", fmt.Errorf("not a number or a size")
	}
	return strconv.FormatInt(n, 10), nil
}

func sameNumber(a, b string) bool {
	x, err1 := number(a)
	y, err2 := number(b)
	return err1 == nil && err2 == nil && x == y
}

// rediscover finds the server listening on the step's socket anew.
func (m *MariaDBStep) rediscover() (MariaDBServer, error) {
	fs, err := proc.Default()
	if err != nil {
		return MariaDBServer{}, err
	}
	servers, err := MariaDBServers(fs, m.Root)
	if err != nil {
		return MariaDBServer{}, err
	}
	for _, s := range servers {
		if s.Socket == m.Server.Socket {
			return s, nil
		}
	}
	return MariaDBServer{}, fmt.Errorf("no MariaDB server with socket %s is running", m.Server.Socket)
}
