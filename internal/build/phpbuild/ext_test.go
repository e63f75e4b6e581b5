package phpbuild

import (
	"os"
	"strings"
	"testing"
)

func TestParseModIni(t *testing.T) {
	mysqli, _ := os.ReadFile("testdata/mysqli.ini")
	cases := []struct {
		in   string
		want Module
		ok   bool
	}{
		{string(mysqli), Module{Name: "mysqli", Priority: 20}, true},
		{"; configuration for php opcache module\n; priority=10\nzend_extension=opcache.so\nopcache.jit=off\n", Module{Name: "opcache", Zend: true, Priority: 10}, true},
		{"; priority=10\nextension=mysqlnd.so\n", Module{Name: "mysqlnd", Priority: 10}, true},
		{"extension = \"/usr/lib/php/20220829/gd.so\"\n", Module{Name: "gd", Priority: 20}, true},
		{"; just a comment\nfoo=bar\n", Module{}, false},
		{"extension=../../evil;x.so\n", Module{}, false},
	}
	for _, c := range cases {
		got, ok := ParseModIni(c.in)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("ParseModIni(%q) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	ms := []Module{{Name: "mysqli", Priority: 20}, {Name: "opcache", Priority: 10}, {Name: "mysqlnd", Priority: 10}}
	SortModules(ms)
	if ms[0].Name != "mysqlnd" || ms[1].Name != "opcache" || ms[2].Name != "mysqli" {
		t.Fatalf("order %v", ms)
	}
}

func TestParseCheckOutput(t *testing.T) {
	ms := []Module{{Name: "mysqlnd"}, {Name: "opcache", Zend: true}, {Name: "dom"}, {Name: "mysqli"}, {Name: "old"}, {Name: "quiet"},
		{Name: "opcache2", Zend: true}, {Name: "gone"}, {Name: "xml"}}
	out := `PHP Warning:  PHP Startup: Unable to load dynamic library 'dom.so' (tried: /usr/lib/php/20220829/dom.so (/usr/lib/php/20220829/dom.so: undefined symbol: dom_node_class_entry_x), /usr/lib/php/20220829/dom.so.so (/usr/lib/php/20220829/dom.so.so: cannot open shared object file: No such file or directory)) in Unknown on line 0
PHP Warning:  old: Unable to initialize module
Module compiled with module API=20210902
PHP    compiled with module API=20220829
These options need to match
 in Unknown on line 0
Warning: Failed loading Zend extension 'opcache2.so' (tried: /usr/lib/php/20220829/opcache2.so (/usr/lib/php/20220829/opcache2.so: undefined symbol: zend_handle_delayed_oom), /usr/lib/php/20220829/opcache2.so.so (/usr/lib/php/20220829/opcache2.so.so: cannot open shared object file: No such file or directory)) in Unknown on line 0
Warning: PHP Startup: Unable to load dynamic library 'gone' (tried: /usr/lib/php/20220829/gone (/usr/lib/php/20220829/gone: cannot open shared object file: No such file or directory), /usr/lib/php/20220829/gone.so (/usr/lib/php/20220829/gone.so: undefined symbol: _safe_femalloc)) in Unknown on line 0
Warning: Cannot load module "xml" because required module "libxml" is not loaded in Unknown on line 0
LOADED mysqlnd
LOADED opcache
LOADED mysqli
`
	rs := ParseCheckOutput(out, ms)
	want := map[string]string{"mysqlnd": "", "opcache": "", "mysqli": "", "dom": "undefined symbol: dom_node_class_entry_x",
		"old": "unable to initialize module: Module module API 20210902, PHP module API 20220829", "quiet": "not loaded (no reason printed)",
		"opcache2": "undefined symbol: zend_handle_delayed_oom", "gone": "undefined symbol: _safe_femalloc",
		"xml": "needs module libxml, which is not loaded (not in this build, or it failed to load)"}
	for _, r := range rs {
		w := want[r.Name]
		if (w == "") != r.Loaded || r.Reason != w {
			t.Errorf("%s: loaded %v reason %q; want reason %q", r.Name, r.Loaded, r.Reason, w)
		}
	}
	s := SummarizeExt(rs)
	if !strings.Contains(s, "3 of the 9") || !strings.Contains(s, "dom (undefined symbol") || strings.Contains(s, "built from this source") {
		t.Errorf("summary %q", s)
	}
	rs[0].Own = true
	if s := SummarizeExt(rs); !strings.Contains(s, "(1 of them built from this source)") {
		t.Errorf("summary with an extension of the build's own: %q", s)
	}
	args := CheckArgs("/usr/lib/php/20220829", ms)
	if args[0] != "-n" || !strings.Contains(strings.Join(args, " "), "zend_extension=opcache.so") {
		t.Errorf("check args %q", args)
	}
}

func FuzzParseCheckOutput(f *testing.F) {
	f.Add("LOADED a\nPHP Warning:  PHP Startup: Unable to load dynamic library 'b.so' (tried: x (x: y), z) in Unknown\n")
	f.Add("PHP Warning:  c: Unable to initialize module\nModule compiled with module API=1\n")
	f.Fuzz(func(t *testing.T, s string) {
		ms := []Module{{Name: "a"}, {Name: "b"}, {Name: "c"}}
		rs := ParseCheckOutput(s, ms)
		if len(rs) != len(ms) {
			t.Fatalf("%d results for %d modules", len(rs), len(ms))
		}
		for _, r := range rs {
			if !r.Loaded && r.Reason == "" {
				t.Fatalf("%s not loaded without a reason", r.Name)
			}
		}
	})
}

func FuzzParseModIni(f *testing.F) {
	f.Add("; priority=10\nzend_extension=opcache.so\n")
	f.Fuzz(func(t *testing.T, s string) {
		m, ok := ParseModIni(s)
		if ok && (m.Name == "" || !validModName(m.Name) || strings.ContainsAny(m.Name, "/.")) {
			t.Fatalf("module %+v from %q", m, s)
		}
	})
}
