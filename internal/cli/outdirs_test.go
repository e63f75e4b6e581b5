package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/results"
)

// nobodyUID is the account the attacks below plant files as.
const nobodyUID = 65534

func needRootCLI(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: plants files of another account")
	}
}

// rootVictim is a root-only file the attacks aim at; the test fails if
// its content changes.
func rootVictim(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(p, []byte("root's own"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b, _ := os.ReadFile(p); string(b) != "root's own" {
			t.Errorf("root's file was overwritten through a planted link: %q", b)
		}
	})
	return p
}

// worldDir is a world-writable sticky directory of root's (as /tmp) made
// the working directory.
func worldDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	if err := os.Chmod(d, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	t.Chdir(d)
	return d
}

// plantDir makes dir as the attacker: owned by nobody, world-writable,
// each of files a link to victim.
func plantDir(t *testing.T, dir, victim string, files ...string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	for _, f := range files {
		p := filepath.Join(dir, f)
		if err := os.Symlink(victim, p); err != nil {
			t.Fatal(err)
		}
		os.Lchown(p, nobodyUID, nobodyUID)
	}
	if err := os.Chown(dir, nobodyUID, nobodyUID); err != nil {
		t.Fatal(err)
	}
}

// plantClock plants the next seconds' default directories prefix+TIME,
// as the attack on a clock-named directory does.
func plantClock(t *testing.T, dir, prefix, victim string, files ...string) {
	t.Helper()
	now := time.Now().UTC()
	for i := -1; i < 90; i++ {
		plantDir(t, filepath.Join(dir, prefix+now.Add(time.Duration(i)*time.Second).Format("20060102-150405")), victim, files...)
	}
}

// TestOutputDirsPlanted runs every command that writes a directory in a
// world-writable working directory where another account planted its
// default directory (or the -o one) with links to a root-only file: each
// refuses before anything runs, naming the owner, and the file is
// unchanged.
func TestOutputDirsPlanted(t *testing.T) {
	needRootCLI(t)
	knobs := filepath.Join(t.TempDir(), "recommended.knobs")
	if err := os.WriteFile(knobs, []byte("pm=static\npm.max_children=9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		prefix string // a clock-named default directory, or
		dir    string // the -o directory
		files  []string
		args   []string
	}{
		{name: "profile", prefix: "phptune-profile-", files: []string{"profile.json", "profile.html"}, args: []string{"profile", "--app", "hello"}},
		{name: "tune", prefix: "phptune-tune-", files: []string{"recommended.knobs", "result.json"}, args: []string{"tune", "--app", "hello"}},
		{name: "servers", prefix: "phptune-servers-", files: []string{"result.json", "report.html"}, args: []string{"servers", "--servers", "nginx-fpm", "--time-budget", "10m"}},
		{name: "profile -o", dir: "out", files: []string{"profile.json"}, args: []string{"profile", "--app", "hello", "-o", "out"}},
		{name: "tune -o", dir: "out", files: []string{"result.json"}, args: []string{"tune", "--app", "hello", "-o", "out"}},
		{name: "servers -o", dir: "out", files: []string{"result.json"}, args: []string{"servers", "--servers", "nginx-fpm", "--time-budget", "10m", "-o", "out"}},
		{name: "export ansible", dir: "fleet", files: []string{"playbook.yml"}, args: []string{"export", "ansible", "fleet", "--knobs", knobs, "--php-version", "8.2"}},
		{name: "advise -o", dir: "out", files: []string{"advice.json"}, args: []string{"advise", "--no-mariadb", "-o", "out"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("PHPTUNE_HOME", home)
			victim := rootVictim(t)
			wd := worldDir(t)
			if c.prefix != "" {
				plantClock(t, wd, c.prefix, victim, c.files...)
			} else {
				plantDir(t, filepath.Join(wd, c.dir), victim, c.files...)
			}
			out, errs, code := runCLI(t, c.args...)
			if code != 2 || !strings.Contains(errs, "owned by uid 65534") || !strings.Contains(errs, "Try: -o DIR") && !strings.Contains(errs, "Give a new directory") {
				t.Errorf("exit %d, want 2 and a refusal naming the owner and the fix\n%s%s", code, out, errs)
			}
			if entries, _ := os.ReadDir(filepath.Join(home, "labs")); len(entries) != 0 {
				t.Errorf("a lab was started before the refusal: %v", entries)
			}
		})
	}
}

// TestOutputDirNotEmpty refuses an existing directory of root's own that
// holds files: nothing of another run is overwritten.
func TestOutputDirNotEmpty(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	dir := t.TempDir()
	t.Chdir(dir)
	os.Mkdir("out", 0o755)
	os.WriteFile("out/result.json", []byte("{}"), 0o644)
	_, errs, code := runCLI(t, "tune", "--app", "hello", "-o", "out")
	if code != 2 || !strings.Contains(errs, "-o out exists and is not empty") {
		t.Errorf("exit %d\n%s", code, errs)
	}
}

// TestReportFilePlanted writes a bench's report whose default name
// another account planted as a link to a root-only file.
func TestReportFilePlanted(t *testing.T) {
	needRootCLI(t)
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	victim := rootVictim(t)
	wd := worldDir(t)
	link := filepath.Join(wd, "phptune-report-bench-x.html")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	os.Lchown(link, nobodyUID, nobodyUID)
	b := &results.Bench{SchemaVersion: results.SchemaVersion, Kind: results.KindBench, ID: "bench-x", Target: "http://127.0.0.1:8080/",
		Command: "phptune bench -c 4 http://127.0.0.1:8080/", StartedAt: time.Now(), ThroughputRPS: 10, Requests: 100}
	if _, err := saveBenchRun(context.Background(), b, "hello", "/", "", nil); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a planted report link: %v", err)
	}
	out, errs, code := runCLI(t, "report", "bench-x", "-o", link)
	if code != 2 || !strings.Contains(errs, "symbolic link") {
		t.Errorf("report -o a planted link: exit %d\n%s%s", code, out, errs)
	}
}

// TestHostileTuneDir gives apply --dry-run and export ansible a tune
// directory another account could have written: each is refused before
// anything is read from the host, naming the owner or mode and the fix.
func TestHostileTuneDir(t *testing.T) {
	needRootCLI(t)
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	good := filepath.Join(t.TempDir(), "good.knobs")
	os.WriteFile(good, []byte("pm=static\npm.max_children=20\n"), 0o644)
	cases := []struct {
		name  string
		plant func(t *testing.T, dir string)
		want  string
	}{
		{"directory of another account", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "recommended.knobs"), []byte("pm=static\npm.max_children=1\n"), 0o644)
			os.Chown(dir, nobodyUID, nobodyUID)
		}, "owned by uid 65534"},
		{"group-writable directory", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "recommended.knobs"), []byte("pm=static\npm.max_children=1\n"), 0o644)
			os.Chmod(dir, 0o775)
		}, "writable by group or others"},
		{"recommended.knobs of another account", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "recommended.knobs")
			os.WriteFile(p, []byte("pm=static\npm.max_children=1\n"), 0o644)
			os.Chown(p, nobodyUID, nobodyUID)
		}, "owned by uid 65534"},
		{"recommended.knobs a link", func(t *testing.T, dir string) {
			os.Symlink(good, filepath.Join(dir, "recommended.knobs"))
		}, "symbolic link"},
		{"result.json of another account", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "recommended.knobs"), []byte("pm=static\npm.max_children=20\n"), 0o644)
			p := filepath.Join(dir, "result.json")
			os.WriteFile(p, []byte(`{"environment":{"versions":{"php-fpm":"8.2.1"}}}`), 0o644)
			os.Chown(p, nobodyUID, nobodyUID)
		}, "owned by uid 65534"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "phptune-tune-x")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			c.plant(t, dir)
			for _, args := range [][]string{
				{"apply", dir, "--dry-run"},
				{"export", "ansible", filepath.Join(t.TempDir(), "fleet"), dir},
			} {
				out, errs, code := runCLI(t, args...)
				if code != 2 || !strings.Contains(errs, c.want) || !strings.Contains(errs, "chown root") {
					t.Errorf("%s: exit %d, want 2, %q and the fix\n%s%s", args[0], code, c.want, out, errs)
				}
			}
		})
	}
}

// TestReopenOutDir is a resumed tune's directory: its own files are kept
// and written on; another account's directory is refused.
func TestReopenOutDir(t *testing.T) {
	needRootCLI(t)
	dir := t.TempDir()
	own := filepath.Join(dir, "own")
	os.Mkdir(own, 0o755)
	os.WriteFile(filepath.Join(own, "profile.json"), []byte("{}"), 0o644)
	d, err := reopenOutDir(own)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFile("result.json", []byte("{}")); err != nil {
		t.Error(err)
	}
	d.CloseRemovingIfEmpty()
	if _, err := os.Stat(filepath.Join(own, "profile.json")); err != nil {
		t.Errorf("the resumed run's files: %v", err)
	}
	victim := rootVictim(t)
	theirs := filepath.Join(dir, "theirs")
	plantDir(t, theirs, victim, "result.json")
	if d, err := reopenOutDir(theirs); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
		if d != nil {
			d.WriteFile("result.json", []byte("x"))
		}
		t.Errorf("another account's directory reopened: %v", err)
	}
}
