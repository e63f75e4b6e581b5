package errlog

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/phptune/phptune/internal/model/results"
)

func TestPHPRecord(t *testing.T) {
	manyFiles := make([]string, 0, PHPFilesPerClass+2)
	for i := range PHPFilesPerClass + 2 {
		// f00.php has the most messages, f11.php the fewest.
		for range PHPFilesPerClass + 2 - i {
			manyFiles = append(manyFiles, fmt.Sprintf("PHP Warning:  w%d in /srv/lab/f%02d.php on line 1", i, i))
		}
	}
	var topTen []results.PHPErrorFile
	for i := range PHPFilesPerClass {
		topTen = append(topTen, results.PHPErrorFile{File: fmt.Sprintf("f%02d.php", i), Count: int64(PHPFilesPerClass + 2 - i), Example: fmt.Sprintf("w%d", i)})
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  *results.PHPErrors
	}{
		{"nothing", []string{"not PHP's", "FastCGI sent in stderr: \"Primary script unknown\""}, nil},
		{"classes in order, files by count", []string{
			`PHP Deprecated:  d1 in /srv/lab/wp-includes/class-wp.php on line 3`,
			`PHP Deprecated:  d2 in /srv/lab/wp-includes/class-wp.php on line 4`,
			`PHP Deprecated:  d3 in /srv/lab/index.php on line 1`,
			`PHP Warning:  w in /srv/lab/index.php on line 2`,
			`PHP Notice:  n in /elsewhere/lib.php on line 9`,
			`PHP Fatal error:  Uncaught Error: Call to undefined function ereg() in /srv/lab/old.php:3`,
			`PHP Warning:  PHP Startup: Unable to load dynamic library 'x.so'`,
		}, &results.PHPErrors{Classes: []results.PHPErrorClass{
			{Class: PHPFatal, Count: 1, Files: []results.PHPErrorFile{{File: "old.php", Count: 1, Example: "Uncaught Error: Call to undefined function ereg()"}}},
			{Class: PHPWarning, Count: 2, Files: []results.PHPErrorFile{{File: "", Count: 1, Example: "PHP Startup: Unable to load dynamic library 'x.so'"}, {File: "index.php", Count: 1, Example: "w"}}},
			{Class: PHPDeprecation, Count: 3, Files: []results.PHPErrorFile{{File: "wp-includes/class-wp.php", Count: 2, Example: "d1"}, {File: "index.php", Count: 1, Example: "d3"}}},
			{Class: PHPNotice, Count: 1, Files: []results.PHPErrorFile{{File: "/elsewhere/lib.php", Count: 1, Example: "n"}}},
		}}},
		{"a root's neighbour keeps its path", []string{`PHP Notice:  n in /srv/lab2/x.php on line 1`},
			&results.PHPErrors{Classes: []results.PHPErrorClass{{Class: PHPNotice, Count: 1, Files: []results.PHPErrorFile{{File: "/srv/lab2/x.php", Count: 1, Example: "n"}}}}}},
		{"top ten files, the rest counted apart", manyFiles,
			&results.PHPErrors{Classes: []results.PHPErrorClass{{Class: PHPWarning, Count: int64(len(manyFiles)), Files: topTen, OtherFiles: 2 + 1}}}},
		{"hostile text escaped", []string{"PHP Warning:  \x1b]2;owned\a in /srv/lab/\x1b[31mred.php on line 1"},
			&results.PHPErrors{Classes: []results.PHPErrorClass{{Class: PHPWarning, Count: 1, Files: []results.PHPErrorFile{{File: `\x1b[31mred.php`, Count: 1, Example: `\x1b]2;owned\a`}}}}}},
	} {
		tally := PHPTally{Root: "/srv/lab/"}
		for _, l := range tc.lines {
			tally.Add(l)
		}
		if got := PHPRecord(&tally); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

func TestMergePHP(t *testing.T) {
	a := &results.PHPErrors{Classes: []results.PHPErrorClass{
		{Class: PHPDeprecation, Count: 5, Files: []results.PHPErrorFile{{File: "a.php", Count: 3, Example: "first"}, {File: "b.php", Count: 2, Example: "b"}}},
	}}
	b := &results.PHPErrors{Classes: []results.PHPErrorClass{
		{Class: PHPWarning, Count: 7, Files: []results.PHPErrorFile{{File: "w.php", Count: 1, Example: "w"}}, OtherFiles: 6},
		{Class: PHPDeprecation, Count: 4, Files: []results.PHPErrorFile{{File: "b.php", Count: 4, Example: "later"}}},
	}}
	want := &results.PHPErrors{Classes: []results.PHPErrorClass{
		{Class: PHPWarning, Count: 7, Files: []results.PHPErrorFile{{File: "w.php", Count: 1, Example: "w"}}, OtherFiles: 6},
		{Class: PHPDeprecation, Count: 9, Files: []results.PHPErrorFile{{File: "b.php", Count: 6, Example: "b"}, {File: "a.php", Count: 3, Example: "first"}}},
	}}
	if got := MergePHP(a, nil, b); !reflect.DeepEqual(got, want) {
		t.Errorf("MergePHP:\n got %+v\nwant %+v", got, want)
	}
	onlyOther := &results.PHPErrors{Classes: []results.PHPErrorClass{{Class: PHPNotice, Count: 2, Files: []results.PHPErrorFile{}, OtherFiles: 2}}}
	if got := MergePHP(onlyOther); !reflect.DeepEqual(got, onlyOther) {
		t.Errorf("MergePHP(only other files) = %+v", got)
	}
	if got := MergePHP(nil, nil); got != nil {
		t.Errorf("MergePHP(nil, nil) = %+v, want nil", got)
	}
}

func TestPHPLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *results.PHPErrors
		want string
	}{
		{"none", nil, ""},
		{"empty", &results.PHPErrors{}, ""},
		{"one class", &results.PHPErrors{Classes: []results.PHPErrorClass{
			{Class: PHPFatal, Count: 1, Files: []results.PHPErrorFile{{File: "old.php", Count: 1}}}}},
			"PHP logged 1 fatal error (top: old.php 1) during the run"},
		{"two classes", &results.PHPErrors{Classes: []results.PHPErrorClass{
			{Class: PHPWarning, Count: 4, Files: []results.PHPErrorFile{{File: "", Count: 4}}},
			{Class: PHPDeprecation, Count: 312, Files: []results.PHPErrorFile{{File: "wp-includes/class-wp.php", Count: 300}, {File: "x.php", Count: 12}}}}},
			"PHP logged 4 warnings (top: (no file named) 4) and 312 deprecations (top: wp-includes/class-wp.php 300) during the run"},
		{"three classes, only other files", &results.PHPErrors{Classes: []results.PHPErrorClass{
			{Class: PHPWarning, Count: 1, Files: []results.PHPErrorFile{{File: "w.php", Count: 1}}},
			{Class: PHPDeprecation, Count: 2, Files: []results.PHPErrorFile{{File: "d.php", Count: 2}}},
			{Class: PHPNotice, Count: 3, Files: []results.PHPErrorFile{}, OtherFiles: 3}}},
			"PHP logged 1 warning (top: w.php 1), 2 deprecations (top: d.php 2) and 3 notices during the run"},
		{"a stored record's file escaped", &results.PHPErrors{Classes: []results.PHPErrorClass{
			{Class: PHPNotice, Count: 1, Files: []results.PHPErrorFile{{File: "\x1b[2Jx.php", Count: 1}}}}},
			`PHP logged 1 notice (top: \x1b[2Jx.php 1) during the run`},
	} {
		if got := PHPLine(tc.in); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestScannerPHP checks which logs' lines the scanner counts PHP's
// messages from: the web server's, not php-fpm's repeat of them, unless
// no web server log was read.
func TestScannerPHP(t *testing.T) {
	nginx := `2026/11/27 13:00:00 [error] 7#7: *5 FastCGI sent in stderr: "PHP message: PHP Warning:  Undefined variable $x in /srv/lab/a.php on line 3PHP message: PHP Deprecated:  strftime() is deprecated in /srv/lab/b.php on line 40" while reading response header from upstream, client: 127.0.0.1, server: _, request: "GET / HTTP/1.1", upstream: "fastcgi://unix:/srv/fpm.sock:", host: "127.0.0.1"`
	fpm := `[27-Nov-2026 13:00:00] NOTICE: PHP message: PHP Warning:  Undefined variable $x in /srv/lab/a.php on line 3`
	apache := `[Fri Nov 27 13:00:00.000000 2026] [proxy_fcgi:error] [pid 9:tid 10] [client 127.0.0.1:5000] AH01071: Got error 'PHP message: PHP Notice:  n in /srv/lab/c.php on line 1'`
	modphp := `[Fri Nov 27 13:00:00.000000 2026] [php:error] [pid 9] [client 127.0.0.1:5000] PHP Fatal error:  Uncaught Error: x in /srv/lab/d.php:2`
	modphpWarn := `[Fri Nov 27 13:00:00.000000 2026] [php:warn] [pid 6940:tid 6940] [client 127.0.0.1:40060] PHP Warning:  w in /srv/lab/lib/warn.php on line 2`
	other := `2026/11/27 13:00:00 [error] 7#7: *5 open() "/srv/PHP Warning:  x in /srv/lab/e.php on line 1" failed (2: No such file or directory)`
	for _, tc := range []struct {
		name  string
		lines map[Source][]string
		want  string
	}{
		{"nginx and fpm: nginx's", map[Source][]string{Nginx: {nginx, other}, FPM: {fpm, fpm}},
			"1 warnings (a.php 1); 1 deprecations (b.php 1)"},
		{"fpm alone", map[Source][]string{FPM: {fpm, fpm}}, "2 warnings (a.php 2)"},
		{"apache, proxy_fcgi and mod_php", map[Source][]string{Apache: {apache, modphp, modphpWarn}, FPM: {fpm}},
			"1 fatal (d.php 1); 1 warnings (lib/warn.php 1); 1 notices (c.php 1)"},
	} {
		s := NewScanner()
		s.SetDocRoot("/srv/lab")
		for _, src := range Sources {
			for _, l := range tc.lines[src] {
				s.Line(src, l)
			}
		}
		if got := s.PHP().Summary(0); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// printable reports whether s has no character a terminal acts on.
func printable(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u202e' })
}

// checkPHPRecord checks what a record of hostile lines may hold: bounded
// printable text, at most PHPFilesPerClass files a class, counts that add
// up.
func checkPHPRecord(t *testing.T, r *results.PHPErrors) {
	t.Helper()
	if r == nil {
		return
	}
	for _, c := range r.Classes {
		sum := c.OtherFiles
		if len(c.Files) > PHPFilesPerClass || c.Count <= 0 {
			t.Fatalf("class %+v", c)
		}
		for _, f := range c.Files {
			if len(f.File) > phpRecordFileLimit+len("…") || len(f.Example) > phpRecordExampleLimit+len("…") || !printable(f.File) || !printable(f.Example) {
				t.Fatalf("record file %q example %q", f.File, f.Example)
			}
			sum += f.Count
		}
		if sum != c.Count {
			t.Fatalf("class %s counts %d, its files and others %d", c.Class, c.Count, sum)
		}
	}
	if l := PHPLine(r); !printable(l) {
		t.Fatalf("PHPLine %q", l)
	}
}
