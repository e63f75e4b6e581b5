package readmecmd

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	cases := []struct {
		line    string
		args    []string
		comment string
	}{
		{"make demo   # installs, builds", []string{"make", "demo"}, "installs, builds"},
		{"bin/phptune tune --expect 'My Site' -c 2", []string{"bin/phptune", "tune", "--expect", "My Site", "-c", "2"}, ""},
		{`a "b \"c\" d" e\ f`, []string{"a", `b "c" d`, "e f"}, ""},
		{"a#b '#c' # d", []string{"a#b", "#c"}, "d"},
		{"# only a comment", nil, "only a comment"},
		{"", nil, ""},
	}
	for _, c := range cases {
		args, comment, err := Split(c.line)
		if err != nil || !reflect.DeepEqual(args, c.args) || comment != c.comment {
			t.Errorf("Split(%q) = %q, %q, %v; want %q, %q", c.line, args, comment, err, c.args, c.comment)
		}
	}
	for _, bad := range []string{"a 'b", `a "b`} {
		if _, _, err := Split(bad); err == nil {
			t.Errorf("Split(%q): no error for an unclosed quote", bad)
		}
	}
}

func TestParse(t *testing.T) {
	readme := "# T\n\n```sh\nmake demo   # one\n\n# note\nmake test\n```\n\n```go\nfmt.Println()\n```\n" +
		"~~~sh\nbin/phptune compare --site s.test \\\n  live default   # two\n~~~\n````\n```sh\nnot a block\n````\n"
	cmds, err := Parse([]byte(readme))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cmds {
		got = append(got, strings.Join([]string{c.Text, "|", strings.Join(c.Args, ","), "|", c.Comment}, ""))
	}
	want := []string{"make demo|make,demo|one", "make test|make,test|", "bin/phptune compare --site s.test live default|bin/phptune,compare,--site,s.test,live,default|two"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse:\n got %q\nwant %q", got, want)
	}
	if cmds[0].Block != 1 || cmds[2].Block != 2 || cmds[0].Line != 4 || cmds[2].Line != 14 {
		t.Errorf("blocks and lines: %+v", cmds)
	}
	if _, err := Parse([]byte("```sh\nmake 'demo\n```\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("an unclosed quote: %v", err)
	}
	if _, err := Parse([]byte("```sh\nmake demo\n")); err == nil {
		t.Error("an unclosed block was accepted")
	}
}

func TestShorten(t *testing.T) {
	cases := []struct{ in, want string }{
		{"make demo", "make demo DEMO_FLAGS=--time-budget 75s --trial-duration 2s --trial-warmup 1s"},
		{"make test", "make test"},
		{"bin/phptune tune --site s --time-budget 15m", "bin/phptune tune --site s --time-budget 75s --trial-duration 2s --trial-warmup 1s"},
		{"bin/phptune demo", "bin/phptune demo --time-budget 75s --trial-duration 2s --trial-warmup 1s"},
		{"bin/phptune tune --time-budget=15m --trial-duration 5s", "bin/phptune tune --time-budget=75s --trial-duration 5s --trial-warmup 1s"},
		{"bin/phptune bench --lab lab", "bin/phptune bench --lab lab --duration 2s --warmup 1s"},
		{"bin/phptune compare -d 9s default", "bin/phptune compare -d 9s default --warmup 1s"},
		{"bin/phptune lab down", "bin/phptune lab down"},
		{"bin/phptune apply X --dry-run", "bin/phptune apply X --dry-run"},
	}
	for _, c := range cases {
		in, _, _ := Split(c.in)
		if got := strings.Join(Shorten(in, TestRule), " "); got != c.want {
			t.Errorf("Shorten(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFill(t *testing.T) {
	got := Fill([]string{"tuned=phptune-tune-RUN/recommended.knobs", "/srv/staging/public", "phptune-tune-RUN"},
		[2]string{"phptune-tune-RUN", "/tmp/x/phptune-tune-20261128-1"}, [2]string{"/srv/staging/public", "/tmp/app"})
	want := []string{"tuned=/tmp/x/phptune-tune-20261128-1/recommended.knobs", "/tmp/app", "/tmp/x/phptune-tune-20261128-1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Fill = %q, want %q", got, want)
	}
}

// FuzzParse: any README parses without a panic, and every command it
// finds has words.
func FuzzParse(f *testing.F) {
	f.Add([]byte("```sh\nmake demo # x\n```\n"))
	f.Add([]byte("```sh\nbin/phptune tune --expect 'a b' \"c\\\"d\" e\\ f \\\n g\n```\n"))
	f.Add([]byte("~~~~sh\n'\n~~~~\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cmds, err := Parse(b)
		if err != nil {
			return
		}
		for _, c := range cmds {
			if len(c.Args) == 0 || c.Line < 1 || c.Block < 1 {
				t.Fatalf("a command without words or place: %+v", c)
			}
		}
	})
}

// FuzzSplit: Split never panics, and the words of a line it accepts
// contain no blank it did not quote.
func FuzzSplit(f *testing.F) {
	f.Add("a 'b c' \"d\\\"e\" f\\ g # h")
	f.Add(`"\`)
	f.Fuzz(func(t *testing.T, line string) {
		args, _, err := Split(line)
		if err != nil {
			return
		}
		for _, a := range args {
			if a == "" && !strings.ContainsAny(line, `'"`) {
				t.Fatalf("an empty word from %q: %q", line, args)
			}
		}
	})
}
