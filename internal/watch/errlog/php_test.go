package errlog

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParsePHPErrors(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       []PHPError
	}{
		{"error_log file", `[27-Nov-2026 13:00:00 UTC] PHP Deprecated:  Creation of dynamic property Foo::$bar is deprecated in /srv/lab/wp-includes/class-foo.php on line 12`,
			[]PHPError{{Class: PHPDeprecation, Level: "Deprecated", File: "/srv/lab/wp-includes/class-foo.php", Line: 12, Message: "Creation of dynamic property Foo::$bar is deprecated"}}},
		{"nginx, two messages", `2026/11/27 13:00:00 [error] 7#7: *5 FastCGI sent in stderr: "PHP message: PHP Warning:  Undefined variable $x in /srv/a.php on line 3PHP message: PHP Deprecated:  strftime() is deprecated in /srv/b.php on line 40" while reading response header from upstream, client: 127.0.0.1`,
			[]PHPError{
				{Class: PHPWarning, Level: "Warning", File: "/srv/a.php", Line: 3, Message: "Undefined variable $x"},
				{Class: PHPDeprecation, Level: "Deprecated", File: "/srv/b.php", Line: 40, Message: "strftime() is deprecated"},
			}},
		{"nginx, separated by ;", `FastCGI sent in stderr: "PHP message: PHP Notice:  Only variables should be passed by reference in /srv/c.php on line 9; PHP message: PHP Warning:  foo in /srv/d.php on line 1"`,
			[]PHPError{
				{Class: PHPNotice, Level: "Notice", File: "/srv/c.php", Line: 9, Message: "Only variables should be passed by reference"},
				{Class: PHPWarning, Level: "Warning", File: "/srv/d.php", Line: 1, Message: "foo"},
			}},
		{"uncaught, removed function", `PHP Fatal error:  Uncaught Error: Call to undefined function each() in /srv/old.php:4` + "\nStack trace:\n#0 {main}\n  thrown in /srv/old.php on line 4",
			[]PHPError{{Class: PHPFatal, Level: "Fatal error", File: "/srv/old.php", Line: 4, Message: "Uncaught Error: Call to undefined function each()"}}},
		{"uncaught, one line", `PHP Fatal error:  Uncaught Error: Call to undefined function create_function() in /srv/x.php:7`,
			[]PHPError{{Class: PHPFatal, Level: "Fatal error", File: "/srv/x.php", Line: 7, Message: "Uncaught Error: Call to undefined function create_function()"}}},
		{"parse error", `PHP Parse error:  syntax error, unexpected token "{" in /srv/p.php on line 2`,
			[]PHPError{{Class: PHPFatal, Level: "Parse error", File: "/srv/p.php", Line: 2, Message: `syntax error, unexpected token "{"`}}},
		{"no place", `PHP Warning:  PHP Startup: Unable to load dynamic library 'apcu.so'`,
			[]PHPError{{Class: PHPWarning, Level: "Warning", Message: "PHP Startup: Unable to load dynamic library 'apcu.so'"}}},
		{"not PHP's", `2026/11/27 13:00:00 [error] connect() failed (111: Connection refused) while connecting to upstream`, nil},
		{"PHP without a level", `PHP is great: Warning: not a message`, nil},
	} {
		got := ParsePHPErrors(tc.line)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

func TestPHPTally(t *testing.T) {
	var tally PHPTally
	tally.Root = "/srv/lab/"
	for i := 0; i < 3; i++ {
		tally.Add(`PHP Deprecated:  x is deprecated in /srv/lab/wp-includes/a.php on line 1`)
	}
	tally.Add(`PHP Deprecated:  y is deprecated in /srv/lab/wp-includes/b.php on line 2`)
	tally.Add(`PHP Fatal error:  Uncaught Error: Call to undefined function ereg() in /srv/lab/old.php:3`)
	if got, want := tally.Summary(0), "1 fatal (old.php 1); 4 deprecations (wp-includes/a.php 3, wp-includes/b.php 1)"; got != want {
		t.Errorf("Summary(0) = %q, want %q", got, want)
	}
	if got, want := tally.Summary(2), "0.5 fatal per request (old.php 1); 2.0 deprecations per request (wp-includes/a.php 3, wp-includes/b.php 1)"; got != want {
		t.Errorf("Summary(2) = %q, want %q", got, want)
	}
	if !tally.Breaks() || tally.Total(PHPDeprecation) != 4 {
		t.Errorf("Breaks %v, deprecations %d", tally.Breaks(), tally.Total(PHPDeprecation))
	}
	var clean PHPTally
	clean.Add("nothing here")
	if clean.Breaks() || clean.Summary(10) != "no PHP errors, warnings or deprecations" {
		t.Errorf("clean tally: %q", clean.Summary(10))
	}
}

func TestPHPTallyBounded(t *testing.T) {
	var tally PHPTally
	for i := 0; i < 3*maxPHPFiles; i++ {
		tally.Add("PHP Warning:  w in /srv/f" + strings.Repeat("x", i%50) + string(rune('a'+i%26)) + ".php on line 1")
		tally.AddError(PHPError{Class: PHPWarning, File: "/srv/" + strings.Repeat("y", i) + ".php"})
	}
	if n := len(tally.Counts()); n > maxPHPFiles+1 {
		t.Errorf("%d files kept, want at most %d", n, maxPHPFiles+1)
	}
	if tally.Total(PHPWarning) != 6*maxPHPFiles {
		t.Errorf("total %d, want %d", tally.Total(PHPWarning), 6*maxPHPFiles)
	}
}

func FuzzParsePHPErrors(f *testing.F) {
	for _, s := range []string{
		`PHP Deprecated:  x in /a.php on line 1`,
		`"PHP message: PHP Warning:  a in /b.php on line 2PHP message: PHP Fatal error:  Uncaught Error: e in /c.php:3` + "\nStack trace:",
		`PHP Notice: in  on line `, `PHP Fatal error: in /:`, `PHP PHP Warning:PHP Deprecated:`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		errs := ParsePHPErrors(line)
		if len(errs) > len(line)/len("PHP Notice:")+1 {
			t.Fatalf("%d messages from %d bytes", len(errs), len(line))
		}
		for _, e := range errs {
			if e.Class == "" || e.Level == "" || len(e.File) > maxPHPFile || len(e.Message) > maxPHPMessage+len("…") || e.Line < 0 {
				t.Fatalf("bad %+v", e)
			}
			if utf8.ValidString(line) && !utf8.ValidString(e.File) {
				t.Fatalf("file %q cut a rune", e.File)
			}
		}
		var tally PHPTally
		tally.Add(line)
		_ = tally.Summary(1)
		checkPHPRecord(t, PHPRecord(&tally))
	})
}
