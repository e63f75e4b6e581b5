package livehost

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
)

// debianNginx is Debian 12's nginx -T output, parsed, with its files'
// text as read (the files are the dump's own: nothing is read from /etc).
func debianNginx(t *testing.T, edit func(nginxConf string) string) *NginxConf {
	t.Helper()
	out, err := os.ReadFile("testdata/debian/nginx/nginx-T.txt")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		files, text, err := SplitNginxDump(out)
		if err != nil {
			t.Fatal(err)
		}
		text[files[0]] = []byte(edit(string(text[files[0]])))
		var b strings.Builder
		for _, f := range files {
			b.WriteString("# configuration file " + f + ":\n" + string(text[f]) + "\n")
		}
		out = []byte(b.String())
	}
	c, err := ParseNginxDump(out)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func knobs(t *testing.T, assignments ...string) knob.Config {
	t.Helper()
	c, err := knob.Defaults().Apply(assignments)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestComposeNginx(t *testing.T) {
	for _, tc := range []struct {
		name      string
		edit      func(string) string
		knobs     []string
		dropIn    string // the drop-in's directives, "" for none
		patchKnob string
		patch     []string // lines the patch adds
		note      string
	}{
		{name: "Debian 12: keepalive_timeout and access_log off in the drop-in",
			knobs: []string{"nginx.keepalive_timeout=15", "nginx.access_log=off"}, dropIn: "keepalive_timeout 15;\naccess_log off;\n"},
		{name: "keepalive_timeout already at http level: patched there",
			edit: func(s string) string {
				return strings.Replace(s, "\ttypes_hash_max_size 2048;", "\ttypes_hash_max_size 2048;\n\tkeepalive_timeout 65;", 1)
			},
			knobs: []string{"nginx.keepalive_timeout=15", "nginx.access_log=off"}, dropIn: "access_log off;\n",
			patchKnob: "nginx.keepalive_timeout=15", patch: []string{"+\tkeepalive_timeout 15;", "-\tkeepalive_timeout 65;"}},
		{name: "main, events and listen: patched",
			knobs:     []string{"nginx.worker_processes=2", "nginx.worker_connections=4096", "nginx.multi_accept=on", "nginx.listen_backlog=4096", "nginx.reuseport=on", "nginx.worker_rlimit_nofile=16384"},
			patchKnob: "nginx.worker_processes=2",
			patch: []string{"+worker_processes 2;", "+worker_rlimit_nofile 16384;", "+\tworker_connections 4096;", "+\tmulti_accept on;",
				"+\tlisten 80 default_server backlog=4096 reuseport;", "+\tlisten [::]:80 default_server backlog=4096 reuseport;"}},
		{name: "nothing for nginx", knobs: []string{"pm.max_children=10"}},
		{name: "a server's own keepalive_timeout: noted",
			edit: func(s string) string {
				return strings.Replace(s, "\tgzip on;", "\tgzip on;\n\tserver { keepalive_timeout 5; }", 1)
			},
			knobs: []string{"nginx.keepalive_timeout=15"}, dropIn: "keepalive_timeout 15;\n", note: "sets keepalive_timeout 5 for its server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := debianNginx(t, tc.edit)
			ch, err := ComposeNginx(c, knobs(t, tc.knobs...), "/", func(p string) (string, []byte, error) { return p, c.Text[p], nil })
			if err != nil {
				t.Fatal(err)
			}
			if tc.dropIn == "" && ch.DropIn != nil || tc.dropIn != "" && !strings.HasSuffix(string(ch.DropIn), "\n"+tc.dropIn) {
				t.Errorf("drop-in %q, want %q", ch.DropIn, tc.dropIn)
			}
			if tc.dropIn != "" && ch.DropInPath != "/etc/nginx/conf.d/zz-phptune.conf" {
				t.Errorf("drop-in at %s", ch.DropInPath)
			}
			if tc.note != "" && !strings.Contains(strings.Join(ch.Notes, "\n"), tc.note) {
				t.Errorf("notes %q lack %q", ch.Notes, tc.note)
			}
			if tc.patch == nil && ch.Patch != "" {
				t.Errorf("unexpected patch\n%s", ch.Patch)
			}
			for _, l := range tc.patch {
				if !strings.Contains(ch.Patch, "\n"+l+"\n") {
					t.Errorf("patch lacks %q:\n%s", l, ch.Patch)
				}
			}
			if tc.patchKnob != "" && !strings.Contains(strings.Join(ch.PatchKnobs, " "), tc.patchKnob) {
				t.Errorf("patched knobs %v", ch.PatchKnobs)
			}
			if ch.Patch != "" && !strings.HasPrefix(ch.Patch, "--- etc/nginx/") {
				t.Errorf("patch paths are not relative to the root:\n%s", ch.Patch)
			}
			// The patch, run with patch -p0 at the root, gives Patched.
			if ch.Patch != "" {
				if _, err := exec.LookPath("patch"); err != nil {
					t.Skip("no patch(1)")
				}
				root := t.TempDir()
				for f := range ch.Patched {
					p := filepath.Join(root, f)
					os.MkdirAll(filepath.Dir(p), 0o755)
					os.WriteFile(p, c.Text[f], 0o644)
				}
				cmd := exec.Command("patch", "-p0", "--batch")
				cmd.Dir, cmd.Stdin = root, strings.NewReader(ch.Patch)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("patch -p0: %v: %s", err, out)
				}
				for f, want := range ch.Patched {
					if got, _ := os.ReadFile(filepath.Join(root, f)); string(got) != string(want) {
						t.Errorf("patched %s:\n%s\nwant\n%s", f, got, want)
					}
				}
			}
		})
	}
}

func TestComposeNginxRefusesAChangedFile(t *testing.T) {
	c := debianNginx(t, nil)
	_, err := ComposeNginx(c, knobs(t, "nginx.worker_processes=2"), "/", func(p string) (string, []byte, error) { return p, []byte("worker_processes 4;\n"), nil })
	if err == nil || !strings.Contains(err.Error(), "changed since nginx -T read it") {
		t.Fatalf("err %v", err)
	}
}

// TestComposeNginxThroughLink: Debian's sites-enabled/default is a link;
// patch(1) refuses to write through one, so the patch names its target.
func TestComposeNginxThroughLink(t *testing.T) {
	c := debianNginx(t, nil)
	read := func(p string) (string, []byte, error) {
		return strings.Replace(p, "/sites-enabled/", "/sites-available/", 1), c.Text[p], nil
	}
	ch, err := ComposeNginx(c, knobs(t, "nginx.listen_backlog=1024"), "/", read)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ch.Patch, "--- etc/nginx/sites-available/default\n+++ etc/nginx/sites-available/default\n") {
		t.Errorf("patch:\n%s", ch.Patch)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "real.conf"), []byte("x;\n"), 0o644)
	os.Symlink("real.conf", filepath.Join(dir, "link.conf"))
	real, b, err := ReadRealConf(filepath.Join(dir, "link.conf"))
	if err != nil || real != filepath.Join(dir, "real.conf") || string(b) != "x;\n" {
		t.Errorf("ReadRealConf: %s %q %v", real, b, err)
	}
}
