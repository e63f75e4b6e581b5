package livehost

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseCnf(t *testing.T) {
	tests := []struct {
		name, text string
		want       []cnfLine
		err        string
	}{
		{"Debian's my.cnf", "# comment\n[client-server]\nsocket = /run/mysqld/mysqld.sock\n\n!includedir /etc/mysql/conf.d/\n!includedir /etc/mysql/mariadb.conf.d/\n",
			[]cnfLine{{kind: 'g', group: "client-server", line: 2}, {kind: 'o', group: "client-server", name: "socket", value: "/run/mysqld/mysqld.sock", line: 3},
				{kind: 'd', value: "/etc/mysql/conf.d/", line: 5}, {kind: 'd', value: "/etc/mysql/mariadb.conf.d/", line: 6}}, ""},
		{"dashes, flags, comments, quotes and escapes", "[mysqld]\n  max-connections=20 # twenty\nskip-networking\n; off\nsocket = \"/a b/#s\"\ntmpdir='/t\\\\x'\nlog = /l\\sx\n",
			[]cnfLine{{kind: 'g', group: "mysqld", line: 1}, {kind: 'o', group: "mysqld", name: "max_connections", value: "20", line: 2},
				{kind: 'o', group: "mysqld", name: "skip_networking", line: 3}, {kind: 'o', group: "mysqld", name: "socket", value: "/a b/#s", line: 5},
				{kind: 'o', group: "mysqld", name: "tmpdir", value: `/t\x`, line: 6}, {kind: 'o', group: "mysqld", name: "log", value: "/l x", line: 7}}, ""},
		{"CRLF", "[mysqld]\r\nport = 3306\r\n", []cnfLine{{kind: 'g', group: "mysqld", line: 1}, {kind: 'o', group: "mysqld", name: "port", value: "3306", line: 2}}, ""},
		{"option before a group", "max_connections = 5\n", nil, "line 1: an option before any [group]"},
		{"unknown directive", "!source /x\n", nil, "an unknown !directive"},
		{"include without a path", "!include\n", nil, "without a path"},
		{"unclosed group", "[mysqld\n", nil, "no closing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCnf(tt.text)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// FuzzParseCnf: any text parses or is refused without panicking; every
// option has a group and a name without '-' or surrounding ASCII space
// (MariaDB trims bytes, not Unicode: a name starting with U+0085 keeps it
// in my_print_defaults too), and
// my_print_defaults, when installed, agrees on the options of the files
// it accepts.
func FuzzParseCnf(f *testing.F) {
	for _, s := range []string{"[mysqld]\nmax_connections = 5\n", "[a]\nx='#'#c\n", "[a]\nx=\"a\\\"b\"\n", "[a]\n!include /x\n", "x=1", "[a\n", "[a]\n=\n", "[a]\nk = \\\n", "[0]\n\u00850"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lines, err := parseCnf(text)
		if err != nil {
			return
		}
		for _, l := range lines {
			if l.kind == 'o' && (l.group == "" || l.name == "" || strings.Contains(l.name, "-") || strings.Trim(l.name, cnfSpace) != l.name) {
				t.Fatalf("bad option %+v", l)
			}
		}
	})
}

// TestParseCnfAgreesWithMariaDB reads option files with MariaDB's own
// my_print_defaults and with parseCnf.
func TestParseCnfAgreesWithMariaDB(t *testing.T) {
	bin, err := exec.LookPath("my_print_defaults")
	if err != nil {
		t.Skip("my_print_defaults is not installed")
	}
	for _, text := range []string{
		"[mysqld]\nmax-connections=20 # twenty\nskip-networking\nsocket = \"/a b/#s\"\ntmpdir='/t\\\\x'\nlog = /l\\sx\n",
		"[client]\n[mysqld]\n  innodb_buffer_pool_size = 256M   \n[mysqld]\nx = 'a # b' # c\n",
	} {
		f := filepath.Join(t.TempDir(), "my.cnf")
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "--defaults-file="+f, "mysqld").Output()
		if err != nil {
			t.Fatal(err)
		}
		lines, err := parseCnf(text)
		if err != nil {
			t.Fatal(err)
		}
		var ours []string
		for _, l := range lines {
			if l.kind == 'o' && l.group == "mysqld" {
				o := "--" + l.name
				if l.value != "" {
					o += "=" + l.value
				}
				ours = append(ours, o)
			}
		}
		var theirs []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			name, value, ok := strings.Cut(strings.TrimPrefix(l, "--"), "=")
			name = "--" + strings.ReplaceAll(name, "-", "_")
			if ok {
				name += "=" + value
			}
			theirs = append(theirs, name)
		}
		if strings.Join(ours, "\n") != strings.Join(theirs, "\n") {
			t.Errorf("%q:\nours   %q\ntheirs %q", text, ours, theirs)
		}
	}
}

func TestParseMariaDBArgs(t *testing.T) {
	got := ParseMariaDBArgs([]string{"--defaults-file=/etc/my.cnf", "--basedir=/usr", "--socket", "/run/s.sock", "--skip-grant-tables", "--user=mysql", "--socket=/run/t.sock", "--", "x"})
	want := map[string]string{"defaults_file": "/etc/my.cnf", "basedir": "/usr", "socket": "/run/t.sock", "skip_grant_tables": "1", "user": "mysql"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func FuzzParseMariaDBArgs(f *testing.F) {
	f.Add("--socket\x00/x\x00--defaults-file=/y")
	f.Add("--\x00--=\x00--socket")
	f.Fuzz(func(t *testing.T, cmdline string) {
		for name := range ParseMariaDBArgs(strings.Split(cmdline, "\x00")) {
			if name == "" || strings.Contains(name, "-") {
				t.Fatalf("bad name %q", name)
			}
		}
	})
}

func TestParseHelpVariables(t *testing.T) {
	out := "mariadbd  Ver 10.11\nUsage: ...\n  --max-connections=# The number\n\nVariables (--variable-name=value)\nand boolean options {FALSE|TRUE}                             Value (after reading options)\n------------------------------------------------------------ -------------\nallow-suspicious-udfs                                        FALSE\ninnodb-buffer-pool-size                                      268435456\nmax-connections                                              200\nlc-messages-dir                                              \ncharacter-sets-dir                                           /usr/share/mariadb/charsets/\n\nTo see what values a running MariaDB server is using, type\n"
	got := ParseHelpVariables(out)
	want := map[string]string{"allow_suspicious_udfs": "FALSE", "innodb_buffer_pool_size": "268435456", "max_connections": "200", "lc_messages_dir": "", "character_sets_dir": "/usr/share/mariadb/charsets/"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func FuzzParseHelpVariables(f *testing.F) {
	f.Add("Variables (--variable-name=value)\nx\n---- ----\nmax-connections 5\n\n")
	f.Fuzz(func(t *testing.T, out string) {
		for name := range ParseHelpVariables(out) {
			if name == "" || strings.Contains(name, "-") {
				t.Fatalf("bad name %q", name)
			}
		}
	})
}

func TestComposeAndParsePrevious(t *testing.T) {
	settings := []MariaDBSetting{{Knob: "mariadb.innodb_buffer_pool_size", Var: "innodb_buffer_pool_size", Value: "256M"}, {Knob: "mariadb.max_connections", Var: "max_connections", Value: "200"}}
	b := ComposeMariaDB(settings, map[string]string{"innodb_buffer_pool_size": "134217728", "max_connections": "151"})
	lines, err := parseCnf(string(b))
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if len(lines) != 3 || lines[1].name != "innodb_buffer_pool_size" || lines[1].value != "256M" || lines[2].value != "200" {
		t.Errorf("drop-in reads as %+v", lines)
	}
	prev := ParsePrevious(b)
	if !reflect.DeepEqual(prev, map[string]string{"innodb_buffer_pool_size": "134217728", "max_connections": "151"}) {
		t.Errorf("previous: %v", prev)
	}
}

// FuzzParsePrevious: only variable names come out (they go into SET
// GLOBAL), and a value SET GLOBAL gets is digits.
func FuzzParsePrevious(f *testing.F) {
	f.Add("# phptune-previous: max_connections=151 a;b=1 x=1;DROP\n")
	f.Fuzz(func(t *testing.T, text string) {
		for k, v := range ParsePrevious([]byte(text)) {
			if !isVarName(k) {
				t.Fatalf("name %q", k)
			}
			if n, err := number(v); err == nil && strings.Trim(n, "-0123456789") != "" {
				t.Fatalf("value %q became %q", v, n)
			}
		}
	})
}

// TestReadCnfRefuses: an include outside a copy's root, a file others
// can write, and a link leaving the root are refused.
func TestReadCnfRefuses(t *testing.T) {
	root := t.TempDir()
	etc := filepath.Join(root, "etc", "mysql")
	os.MkdirAll(filepath.Join(etc, "d"), 0o755)
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(etc, name)
		os.WriteFile(p, []byte(text), mode)
		os.Chmod(p, mode)
		return p
	}
	write("d/50.cnf", "[mysqld]\nmax_connections = 5\n", 0o644)
	ok := write("ok.cnf", "[mysqld]\n!includedir "+filepath.Join(etc, "d")+"\nmax_connections = 9\n", 0o644)
	c, err := ReadCnf(root, ok)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get("max-connections", "mysqld"); v != "9" || len(c.IncludeDirs) != 1 || len(c.Files) != 2 {
		t.Errorf("read %+v", c)
	}
	out := write("out.cnf", "[mysqld]\n!includedir /etc/mysql/conf.d/\n", 0o644)
	if _, err := ReadCnf(root, out); err == nil || !strings.Contains(err.Error(), "outside the host's root") {
		t.Errorf("include outside the root: %v", err)
	}
	open := write("open.cnf", "[mysqld]\n", 0o666)
	if _, err := ReadCnf(root, open); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("a file others can write: %v", err)
	}
	// Debian's my.cnf links to /etc/alternatives: in a copy, the copy's.
	link := filepath.Join(etc, "my.cnf")
	os.Symlink("/etc/alternatives/my.cnf", link)
	os.MkdirAll(filepath.Join(root, "etc", "alternatives"), 0o755)
	os.Symlink("/etc/mysql/ok.cnf", filepath.Join(root, "etc", "alternatives", "my.cnf"))
	if c, err := ReadCnf(root, link); err != nil || len(c.Files) != 2 {
		t.Errorf("links followed inside the copy: %v %+v", err, c)
	}
	os.Symlink("../../../../../../../../etc/passwd", filepath.Join(etc, "up.cnf"))
	if _, err := ReadCnf(root, filepath.Join(etc, "up.cnf")); err == nil || !strings.Contains(err.Error(), "outside the host's root") {
		t.Errorf("a link out of the copy: %v", err)
	}
	if c, err := ReadCnf(root, filepath.Join(etc, "missing.cnf")); err != nil || len(c.Files) != 0 {
		t.Errorf("a missing top file: %v %+v", err, c)
	}
	// An include into a directory of another account's, where that
	// account made "conf" a link to a directory of root's holding a
	// file of that name: a directory on the way is a link, refused.
	if os.Geteuid() == 0 {
		private := filepath.Join(root, "private")
		os.Mkdir(private, 0o700)
		os.WriteFile(filepath.Join(private, "x.cnf"), []byte("[client]\npassword = hunter2\n"), 0o600)
		site := filepath.Join(root, "srv", "site")
		os.MkdirAll(site, 0o755)
		os.Chown(site, 65534, 65534)
		os.Symlink(private, filepath.Join(site, "conf"))
		os.Lchown(filepath.Join(site, "conf"), 65534, 65534)
		inc := write("inc.cnf", "[mysqld]\n!include "+filepath.Join(site, "conf", "x.cnf")+"\n", 0o644)
		c, err := ReadCnf(root, inc)
		if err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("an include through another account's link: %v %+v", err, c)
		}
	}
}
