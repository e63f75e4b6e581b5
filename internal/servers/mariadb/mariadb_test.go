package mariadb

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
)

func TestRender(t *testing.T) {
	cfg, _ := knob.Defaults().Apply([]string{"mariadb.max_connections=40", "mariadb.innodb_flush_log_at_trx_commit=2"})
	got := Render(cfg, Paths{DataDir: "/lab/mysql", Socket: "/lab/run/m.sock", PidFile: "/lab/run/m.pid", Log: "/lab/log/m.log", TmpDir: "/lab/tmp"})
	for _, w := range []string{"skip-networking\n", `socket = "/lab/run/m.sock"` + "\n", "max_connections = 40\n", "innodb_flush_log_at_trx_commit = 2\n", "innodb_buffer_pool_size = 128M\n"} {
		if !strings.Contains(got, w) {
			t.Errorf("my.cnf lacks %q:\n%s", w, got)
		}
	}
	if frag := RenderFragment(cfg); !strings.HasPrefix(frag, "[mysqld]\n") || !strings.Contains(frag, "max_connections = 40") {
		t.Errorf("fragment: %q", frag)
	}
	if a, b := Password(), Password(); a == b || len(a) < 24 {
		t.Errorf("passwords not random enough: %q %q", a, b)
	}
}

func testPaths(dir string) Paths {
	return Paths{DataDir: dir + "/mysql", Socket: dir + "/run/mariadb.sock", PidFile: dir + "/run/mariadb.pid", Log: dir + "/log/mariadb.log", TmpDir: dir + "/tmp"}
}

// TestRenderPaths renders lab directories holding the characters MariaDB's
// option-file reader treats specially: each is quoted and reads back as
// exactly its value (with my_load_defaults' rules, and with the real
// my_print_defaults when it is installed), or the file is a refusal.
func TestRenderPaths(t *testing.T) {
	cases := []struct {
		name, dir string
		refused   string // part of Check's error, "" when carried
	}{
		{"plain", "/lab", ""},
		{"space", "/my lab", ""},
		{"leading and trailing spaces", "/ lab ", ""},
		{"semicolon", "/lab;x", ""},
		{"hash comment", "/lab #x", ""},
		{"braces", "/lab{a}", ""},
		{"double quote", `/la"b"`, ""},
		{"single quote", "/lab's", ""},
		{"backslash escapes", `/lab\n\s\"\`, ""},
		{"dollar", "/lab$HOME", ""},
		{"equals", "/a=b", ""},
		{"non-ASCII", "/läb", ""},
		{"colon (tmpdir list)", "/lab:x", `':' at byte 4, which my.cnf cannot carry: MariaDB splits tmpdir at ':'`},
		{"newline", "/lab\nskip-grant-tables", `a newline ('\n')`},
		{"NUL", "/lab\x00", "a NUL byte"},
		{"too long", "/" + strings.Repeat("x", 600), "takes paths of at most 511"},
		{"relative", "lab", "not absolute"},
	}
	printDefaults, _ := exec.LookPath("my_print_defaults")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := testPaths(c.dir)
			out := Render(knob.Defaults(), p)
			opts, err := parseCnf(out)
			if err != nil {
				t.Fatalf("rendered file does not parse: %v\n%s", err, out)
			}
			if c.refused != "" {
				err := p.Check()
				if err == nil || !strings.Contains(err.Error(), c.refused) {
					t.Errorf("Check() = %v, want it to contain %q", err, c.refused)
				}
				if !isRefusal(opts) {
					t.Errorf("refused paths must render as one refusal option, got %v", opts)
				}
				return
			}
			if err := p.Check(); err != nil {
				t.Fatalf("Check() = %v", err)
			}
			want := map[string]string{"datadir": p.DataDir, "socket": p.Socket, "pid-file": p.PidFile, "log-error": p.Log, "tmpdir": p.TmpDir}
			checkOptions(t, opts, want)
			if printDefaults != "" {
				checkWithPrintDefaults(t, printDefaults, out, want)
			}
		})
	}
}

func checkOptions(t *testing.T, opts []option, want map[string]string) {
	t.Helper()
	plain, _ := parseCnf(Render(knob.Defaults(), testPaths("/lab")))
	if len(opts) != len(plain) {
		t.Fatalf("%d options, a plain lab's my.cnf has %d (something was injected): %v", len(opts), len(plain), opts)
	}
	for i, o := range opts {
		if o.name != plain[i].name {
			t.Fatalf("option %d is %q, a plain lab's is %q", i, o.name, plain[i].name)
		}
		if v, ok := want[strings.TrimPrefix(o.name, "mysqld/")]; ok && o.value != v {
			t.Errorf("%s = %q, want %q", o.name, o.value, v)
		}
	}
}

// checkWithPrintDefaults reads the file with MariaDB's own reader.
func checkWithPrintDefaults(t *testing.T, bin, conf string, want map[string]string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "my.cnf")
	if err := os.WriteFile(f, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--defaults-file="+f, "mysqld").Output()
	if err != nil {
		t.Fatalf("my_print_defaults: %v", err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		name, value, _ := strings.Cut(strings.TrimPrefix(line, "--"), "=")
		got[name] = value
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("my_print_defaults reads %s as %q, want %q", k, got[k], v)
		}
	}
}

func TestClientConf(t *testing.T) {
	got := ClientConf("/my lab/run/m.sock", "root", "0123abcd")
	opts, err := parseCnf(got)
	if err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	want := []option{{"client/socket", "/my lab/run/m.sock"}, {"client/user", "root"}, {"client/password", "0123abcd"}}
	if !slices.Equal(opts, want) {
		t.Errorf("client.cnf reads as %v, want %v", opts, want)
	}
	refused := ClientConf("/lab/run/m.sock", "root", "secret\nskip-grant-tables")
	if opts, _ := parseCnf(refused); len(opts) != 1 || opts[0].name != "client/phptune-refused" || strings.Contains(refused, "secret") {
		t.Errorf("a password my.cnf cannot carry must render as a refusal that does not show it:\n%s", refused)
	}
}

// FuzzRender: for any lab directory, my.cnf either is a refusal or reads
// back to the same options as a plain lab's, with every path exactly as
// given.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"/lab", "/a b", " /x", "/x ", "/x;y", "/#", `/"`, `/"x"`, "/'", `/\`, `/\n`, "/a\nb", "/a:b", "/é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dir string) {
		p := testPaths(dir)
		out := Render(knob.Defaults(), p)
		opts, err := parseCnf(out)
		if err != nil {
			t.Fatalf("rendered file does not parse: %v\n%s", err, out)
		}
		if isRefusal(opts) {
			if p.Check() == nil {
				t.Fatalf("refused paths that Check accepts: %q", dir)
			}
			return
		}
		if err := p.Check(); err != nil {
			t.Fatalf("rendered paths that Check refuses (%v)", err)
		}
		checkOptions(t, opts, map[string]string{"datadir": p.DataDir, "tmpdir": p.TmpDir})
	})
}

type option struct{ name, value string }

// isRefusal reports whether a [mysqld] file is Render's refusal.
func isRefusal(opts []option) bool {
	return len(opts) == 2 && opts[0].name == "mysqld/skip-networking" && opts[1].name == "mysqld/binlog_format" &&
		strings.HasPrefix(opts[1].value, "phptune refused to render this file: ")
}

// parseCnf reads an option file as my_load_defaults does: lines of at most
// 4094 bytes (longer ones are split); leading space skipped; '#' or ';'
// first starts a comment; [group]; '!' directives (an error here); else a
// '#' outside quotes ends the line, the option is name[=value] with spaces
// around both trimmed, a value enclosed in matching quotes loses them, and
// \n \t \r \b \s \" \' \\ stand for their characters (another backslash
// pair stays as it is). Names are reported as group/name.
func parseCnf(conf string) ([]option, error) {
	var out []option
	group := ""
	for n, line := range strings.Split(strings.TrimSuffix(conf, "\n"), "\n") {
		if len(line) > 4094 {
			return nil, fmt.Errorf("line %d: %d bytes; MariaDB would split it", n+1, len(line))
		}
		line = strings.TrimLeft(line, " \t\r\v\f")
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
			continue
		case line[0] == '!':
			return nil, fmt.Errorf("line %d: directive %q", n+1, line)
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return nil, fmt.Errorf("line %d: bad group %q", n+1, line)
			}
			group = strings.TrimSpace(line[1:end])
			continue
		}
		line = removeEndComment(line)
		name, value, hasValue := strings.Cut(line, "=")
		name = strings.TrimRight(name, " \t\r\v\f")
		if !hasValue {
			out = append(out, option{group + "/" + name, ""})
			continue
		}
		value = strings.Trim(value, " \t\r\v\f")
		if len(value) > 1 && (value[0] == '"' || value[0] == '\'') && value[0] == value[len(value)-1] {
			value = value[1 : len(value)-1]
		}
		var b strings.Builder
		for i := 0; i < len(value); i++ {
			if value[i] == '\\' && i != len(value)-1 {
				i++
				if r, ok := map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 's': ' ', '"': '"', '\'': '\'', '\\': '\\'}[value[i]]; ok {
					b.WriteByte(r)
				} else {
					b.WriteByte('\\')
					b.WriteByte(value[i])
				}
				continue
			}
			b.WriteByte(value[i])
		}
		out = append(out, option{group + "/" + name, b.String()})
	}
	return out, nil
}

// removeEndComment cuts the line at the first '#' outside quotes; inside
// quotes a backslash protects the next character.
func removeEndComment(s string) string {
	var quote byte
	escape := false
	for i := 0; i < len(s); i++ {
		if (s[i] == '\'' || s[i] == '"') && !escape {
			if quote == 0 {
				quote = s[i]
			} else if quote == s[i] {
				quote = 0
			}
		}
		if quote == 0 && s[i] == '#' {
			return s[:i]
		}
		escape = quote != 0 && s[i] == '\\' && !escape
	}
	return s
}

// TestMariaDBRejectsRefusal: mariadbd stops on the refusal a bad path
// renders at once, showing the reason, before it creates any file.
func TestMariaDBRejectsRefusal(t *testing.T) {
	bin, err := exec.LookPath("mariadbd")
	if err != nil {
		if bin, err = exec.LookPath("/usr/sbin/mariadbd"); err != nil {
			t.Skip("mariadbd is not installed")
		}
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "my.cnf")
	if err := os.WriteFile(f, []byte(Render(knob.Defaults(), testPaths("/lab:x"))), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o777); err != nil {
		t.Fatal(err)
	}
	// Should the refusal ever not stop it, mariadbd stays in the test's
	// directory and off the network.
	args := []string{"--defaults-file=" + f, "--datadir=" + data, "--socket=" + filepath.Join(dir, "s"), "--skip-networking"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=nobody")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `Error while setting value 'phptune refused to render this file: MariaDB tmpdir: path "/lab:x/tmp" has ':'`) {
		t.Fatalf("mariadbd on a refusal: %v\n%s", err, out)
	}
	if files, _ := os.ReadDir(data); len(files) > 0 {
		t.Errorf("mariadbd created %d files before it stopped", len(files))
	}
}

// TestClientToolsRejectRefusal: the client tools stop on the refusal a bad
// client.cnf renders, showing the reason.
func TestClientToolsRejectRefusal(t *testing.T) {
	dump, err := exec.LookPath("mariadb-dump")
	if err != nil {
		t.Skip("mariadb-dump is not installed")
	}
	f := filepath.Join(t.TempDir(), "client.cnf")
	if err := os.WriteFile(f, []byte(ClientConf("/lab:x\n/s", "root", "pw")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(dump, "--defaults-extra-file="+f, "db").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "unknown variable 'phptune-refused=phptune refused to render this file: MariaDB client socket") {
		t.Fatalf("mariadb-dump on a refusal: %v\n%s", err, out)
	}
}

// TestRenderTCP: a site lab's server listens on the loopback address its
// site's configuration names; any other value keeps it off the network.
func TestRenderTCP(t *testing.T) {
	p := Paths{DataDir: "/l/mysql", Socket: "/l/dbrun/mysqld.sock", PidFile: "/l/run/m.pid", Log: "/l/log/m.log", TmpDir: "/l/tmp"}
	tests := []struct {
		tcp  string
		want []string
		not  []string
	}{
		{"", []string{"skip-networking"}, []string{"bind-address", "port ="}},
		{"127.0.0.1:3306", []string{"bind-address = 127.0.0.1", "port = 3306"}, []string{"skip-networking"}},
		{"0.0.0.0:3306", []string{"skip-networking"}, []string{"bind-address"}},
		{"127.0.0.1:33x", []string{"skip-networking"}, []string{"bind-address"}},
	}
	for _, tc := range tests {
		p.TCP = tc.tcp
		out := Render(knob.Defaults(), p)
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("TCP %q: lacks %q:\n%s", tc.tcp, w, out)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(out, n) {
				t.Errorf("TCP %q: has %q:\n%s", tc.tcp, n, out)
			}
		}
	}
}
