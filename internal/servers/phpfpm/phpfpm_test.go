package phpfpm

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
)

func TestRenderPool(t *testing.T) {
	cases := []struct {
		name    string
		set     []string
		want    []string
		notWant []string
	}{
		{"distro default", nil,
			[]string{"pm = dynamic\n", "pm.max_children = 5\n", "pm.start_servers = 2\n", "pm.min_spare_servers = 1\n", "pm.max_spare_servers = 3\n", "listen.mode = 0600\n", "listen.backlog = 511\n"},
			[]string{"user =", "pm.process_idle_timeout"}},
		{"static", []string{"pm=static", "pm.max_children=48", "pm.max_requests=2000"},
			[]string{"pm = static\n", "pm.max_children = 48\n", "pm.max_requests = 2000\n"},
			[]string{"pm.start_servers", "spare"}},
		{"ondemand over tcp", []string{"pm=ondemand", "listen=tcp", "pm.process_idle_timeout=30"},
			[]string{"pm = ondemand\n", "pm.process_idle_timeout = 30s\n", "listen.allowed_clients = 127.0.0.1\n", "listen = 127.0.0.1:9000\n"},
			[]string{"listen.mode"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := knob.Defaults().Apply(c.set)
			if err != nil {
				t.Fatal(err)
			}
			listen := "/lab/run/php-fpm.sock"
			if cfg["listen"] == "tcp" {
				listen = "127.0.0.1:9000"
			}
			got := RenderPool(cfg, Paths{Listen: listen, StatusPath: "/fpm-status"})
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("pool lacks %q:\n%s", w, got)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(got, w) {
					t.Errorf("pool has %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestRenderIni(t *testing.T) {
	cfg, _ := knob.Defaults().Apply([]string{"opcache.validate_timestamps=off", "opcache.jit_buffer_size=64M", "opcache.jit=function"})
	got := RenderIni(cfg)
	for _, w := range []string{"opcache.validate_timestamps = 0\n", "opcache.enable = 1\n", "opcache.jit_buffer_size = 64M\n", "opcache.jit = function\n", "realpath_cache_size = 4M\n"} {
		if !strings.Contains(got, w) {
			t.Errorf("ini lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "pm.") || strings.Contains(got, "nginx") {
		t.Errorf("ini carries other components' knobs:\n%s", got)
	}
}

func TestCheckSocketPath(t *testing.T) {
	if err := CheckSocketPath("/var/lib/phptune/labs/x/run/php-fpm.sock"); err != nil {
		t.Error(err)
	}
	if err := CheckSocketPath("/" + strings.Repeat("d", 120) + "/php-fpm.sock"); err == nil || !strings.Contains(err.Error(), "PHPTUNE_HOME") {
		t.Errorf("long path not refused helpfully: %v", err)
	}
}

func testPaths(dir string) Paths {
	return Paths{PidFile: dir + "/run/php-fpm.pid", Log: dir + "/log/php-fpm.log", Listen: dir + "/run/php-fpm.sock",
		StatusPath: "/fpm-status", PingPath: "/fpm-ping", SlowLog: dir + "/log/slow.log",
		ExtraPool: []string{"env[PHPTUNE_DB_CONFIG] = " + dir + "/app/db.php"}}
}

// TestRenderPaths renders lab directories holding the characters PHP's INI
// scanner and php-fpm treat specially: each is quoted and reads back as
// exactly its value (with the scanner's rules, and with PHP's own
// parse_ini_file when php is installed), or the file is a refusal.
func TestRenderPaths(t *testing.T) {
	cases := []struct {
		name, dir string
		refused   string // part of Check's error, "" when carried
	}{
		{"plain", "/lab", ""},
		{"space", "/my lab", ""},
		{"semicolon comment", "/lab;x = 1", ""},
		{"braces", "/lab{a}", ""},
		{"double quote", `/la"b`, ""},
		{"single quote", "/lab's", ""},
		{"hash", "/lab#1", ""},
		{"backslash", `/lab\x\`, ""},
		{"backslash quote", `/lab\"`, ""},
		{"dollar", "/lab$HOME", ""},
		{"dollar brace", "/lab${HOME}", ""},
		{"ini operators", "/lab=|&^~!()[]", ""},
		{"non-ASCII", "/läb", ""},
		{"pool variable", "/lab/$pool", "$pool in every value"},
		{"colon in the socket", "/lab:1", `':' at byte 4, which php-fpm.conf cannot carry: php-fpm takes a listen address holding ':' for host:port`},
		{"newline", "/lab\nlisten = 0.0.0.0:9000", `a newline ('\n')`},
		{"carriage return", "/lab\rx", "a carriage return"},
		{"NUL", "/lab\x00", "a NUL byte"},
		{"relative", "lab", "not absolute"},
	}
	php, _ := exec.LookPath("php")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := testPaths(c.dir)
			out := RenderConf(knob.Defaults(), p)
			lines, err := parseINI(out)
			if err != nil {
				t.Fatalf("rendered file does not parse: %v\n%s", err, out)
			}
			if c.refused != "" {
				err := p.Check()
				if err == nil || !strings.Contains(err.Error(), c.refused) {
					t.Errorf("Check() = %v, want it to contain %q", err, c.refused)
				}
				if len(lines) != 1 || !strings.HasPrefix(lines[0].key, "global/phptune refused") {
					t.Errorf("a refused pool must render as one refusal entry, got %v", lines)
				}
				return
			}
			if err := p.Check(); err != nil {
				t.Fatalf("Check() = %v", err)
			}
			want := map[string]string{"global/pid": p.PidFile, "global/error_log": p.Log, "www/listen": p.Listen,
				"www/slowlog": p.SlowLog, "www/env[PHPTUNE_DB_CONFIG]": c.dir + "/app/db.php", "www/pm.status_path": "/fpm-status"}
			checkLines(t, lines, want)
			if php != "" {
				checkWithPHP(t, php, out, want)
			}
		})
	}
}

func checkLines(t *testing.T, lines []iniLine, want map[string]string) {
	t.Helper()
	plain, _ := parseINI(RenderConf(knob.Defaults(), testPaths("/lab")))
	if len(lines) != len(plain) {
		t.Fatalf("%d settings, a plain lab has %d (something was injected): %v", len(lines), len(plain), lines)
	}
	for i, l := range lines {
		if l.key != plain[i].key {
			t.Fatalf("setting %d is %q, a plain lab's is %q", i, l.key, plain[i].key)
		}
		if v, ok := want[l.key]; ok && l.value != v {
			t.Errorf("%s = %q, want %q", l.key, l.value, v)
		}
	}
}

// checkWithPHP reads the file with PHP's own INI scanner (php-fpm uses the
// same one, a line at a time).
func checkWithPHP(t *testing.T, php, conf string, want map[string]string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "php-fpm.conf")
	if err := os.WriteFile(f, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(php, "-n", "-r", `echo json_encode(parse_ini_file($argv[1], true, INI_SCANNER_NORMAL));`, f).Output()
	if err != nil {
		t.Fatalf("php parse_ini_file: %v", err)
	}
	var got map[string]map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("php parse_ini_file: %v: %s", err, out)
	}
	for k, v := range want {
		section, key, _ := strings.Cut(k, "/")
		var value any = got[section][key]
		if base, offset, ok := strings.Cut(key, "["); ok {
			m, _ := got[section][base].(map[string]any)
			value = m[strings.TrimSuffix(offset, "]")]
		}
		if value != v {
			t.Errorf("PHP reads %s as %q, want %q", k, value, v)
		}
	}
}

// FuzzRenderConf: for any lab directory, the rendered php-fpm.conf either
// is a refusal or reads back to the same settings as a plain lab's, with
// every path exactly as given.
func FuzzRenderConf(f *testing.F) {
	for _, s := range []string{"/lab", "/a b", "/x;y", "/{", `/"`, "/#", "/$x", "/${x}", "/$pool", "/a\nb", `/\`, `/\"`, "/'", "/é", "/a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dir string) {
		p := testPaths(dir)
		out := RenderConf(knob.Defaults(), p)
		lines, err := parseINI(out)
		if err != nil {
			t.Fatalf("rendered file does not parse: %v\n%s", err, out)
		}
		if len(lines) == 1 && strings.HasPrefix(lines[0].key, "global/phptune refused") {
			if p.Check() == nil {
				t.Fatalf("refused paths that Check accepts: %q", dir)
			}
			return
		}
		if err := p.Check(); err != nil {
			t.Fatalf("rendered paths that Check refuses (%v)", err)
		}
		checkLines(t, lines, map[string]string{"global/pid": p.PidFile, "www/listen": p.Listen, "www/env[PHPTUNE_DB_CONFIG]": dir + "/app/db.php"})
	})
}

type iniLine struct{ key, value string }

// parseINI reads php-fpm.conf as php-fpm does, one line at a time with
// PHP's INI scanner, for the forms phptune writes: [section], comments
// from ';', and name = value where the value is a bare word or a
// double-quoted string whose escapes are \" \\ \$ (a backslash before
// anything else stays). A "${" in a quoted string would be an expansion and
// is an error here; so is anything after the closing quote but a comment.
// Keys are reported as section/name.
func parseINI(conf string) ([]iniLine, error) {
	var out []iniLine
	section := ""
	for n, line := range strings.Split(strings.TrimSuffix(conf, "\n"), "\n") {
		line = strings.TrimLeft(line, " \t")
		switch {
		case line == "" || line[0] == ';':
			continue
		case line[0] == '[':
			if !strings.HasSuffix(line, "]") {
				return nil, fmt.Errorf("line %d: bad section %q", n+1, line)
			}
			section = line[1 : len(line)-1]
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || strings.ContainsAny(key, "\"$;{}()!&|^~") {
			return nil, fmt.Errorf("line %d: not a setting: %q", n+1, line)
		}
		key = strings.TrimSpace(key)
		value = strings.TrimLeft(value, " \t")
		if !strings.HasPrefix(value, `"`) {
			value, _, _ = strings.Cut(value, ";")
			value = strings.TrimSpace(value)
			if strings.ContainsAny(value, "\"'$ {}()!&|^~") {
				return nil, fmt.Errorf("line %d: bare value %q holds a character the scanner treats specially", n+1, value)
			}
			out = append(out, iniLine{section + "/" + key, value})
			continue
		}
		var b strings.Builder
		i := 1
		for ; i < len(value) && value[i] != '"'; i++ {
			switch {
			case value[i] == '\\' && i+1 < len(value):
				if value[i+1] == '"' && i+2 == len(value) {
					// A special case of the scanner's: \" at the end of
					// the line closes the string on a backslash.
					b.WriteByte('\\')
					continue
				}
				i++
				if !strings.ContainsRune(`"\$`, rune(value[i])) {
					b.WriteByte('\\')
				}
				b.WriteByte(value[i])
			case value[i] == '$' && i+1 < len(value) && value[i+1] == '{':
				return nil, fmt.Errorf("line %d: ${ expands in %q", n+1, value)
			default:
				b.WriteByte(value[i])
			}
		}
		if i >= len(value) {
			return nil, fmt.Errorf("line %d: unterminated string %q", n+1, value)
		}
		if rest := strings.TrimLeft(value[i+1:], " \t"); rest != "" && rest[0] != ';' {
			return nil, fmt.Errorf("line %d: %q after the string", n+1, rest)
		}
		out = append(out, iniLine{section + "/" + key, b.String()})
	}
	return out, nil
}

// TestFPMAcceptsQuotedPaths runs the real php-fpm on a lab directory with
// spaces and the characters its INI scanner treats specially: `php-fpm -t`
// accepts the file, and the started master listens on exactly the socket
// path and writes exactly the pid file given.
func TestFPMAcceptsQuotedPaths(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm; skipped with -short")
	}
	bin, err := Find()
	if err != nil {
		t.Skip(err)
	}
	for _, name := range []string{"lab with spaces", `odd ;{}#'"\$ lab`} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			for _, d := range []string{"run", "log"} {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			p := testPaths(dir)
			p.Conf = filepath.Join(dir, "php-fpm.conf")
			if err := os.WriteFile(p.Conf, []byte(RenderConf(knob.Defaults(), p)), 0o644); err != nil {
				t.Fatal(err)
			}
			var root []string
			if os.Geteuid() == 0 {
				root = []string{"--allow-to-run-as-root"}
			}
			out, err := exec.Command(bin.Path, append(bin.TestArgs(p.Conf), root...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("php-fpm -t: %v\n%s", err, out)
			}
			cmd := exec.Command(bin.Path, append(bin.Args(p.Conf), root...)...)
			cmd.Env = Env(filepath.Join(dir, "php"))
			// Its own process group, killed whole: SIGKILL to the master
			// alone would leave its workers running.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }()
			deadline := time.Now().Add(10 * time.Second)
			for !Exists(p.Listen) || !Exists(p.PidFile) {
				if time.Now().After(deadline) {
					log, _ := os.ReadFile(p.Log)
					t.Fatalf("php-fpm made no socket %q or pid file %q within 10s; its log:\n%s", p.Listen, p.PidFile, log)
				}
				time.Sleep(20 * time.Millisecond)
			}
			c, err := net.Dial("unix", p.Listen)
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
		})
	}
}

// TestFPMRejectsRefusal: the refusal a bad pool renders makes php-fpm -t
// fail, naming it.
func TestFPMRejectsRefusal(t *testing.T) {
	bin, err := Find()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "php-fpm.conf")
	if err := os.WriteFile(conf, []byte(RenderConf(knob.Defaults(), testPaths(dir+"/$pool"))), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin.Path, append(bin.TestArgs(conf), "--allow-to-run-as-root")...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "unknown entry 'phptune refused to render this file: php-fpm pid: path ?") {
		t.Fatalf("php-fpm -t on a refusal: %v\n%s", err, out)
	}
}

func TestArgsPinIni(t *testing.T) {
	b := &Binary{Path: "/x/php-fpm", IniFile: "/etc/php/8.2/fpm/php.ini"}
	if got := strings.Join(b.Args("/lab/php-fpm.conf"), " "); got != "--nodaemonize --fpm-config /lab/php-fpm.conf" {
		t.Errorf("Args = %q: the distro's php-fpm must keep its compiled-in php.ini", got)
	}
	b.PinIni = true
	if got := strings.Join(b.Args("/lab/php-fpm.conf"), " "); got != "-c /etc/php/8.2/fpm/php.ini --nodaemonize --fpm-config /lab/php-fpm.conf" {
		t.Errorf("Args with PinIni = %q", got)
	}
	if got := strings.Join(b.TestArgs("/lab/php-fpm.conf"), " "); got != "-c /etc/php/8.2/fpm/php.ini --test --fpm-config /lab/php-fpm.conf" {
		t.Errorf("TestArgs with PinIni = %q", got)
	}
}
