package phpbuild

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestSplitWords(t *testing.T) {
	cases := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{"  --a  --b=1 ", []string{"--a", "--b=1"}, false},
		{`--libdir=\${prefix}/lib/php`, []string{"--libdir=${prefix}/lib/php"}, false},
		{`'--x=a b' "--y=c d"`, []string{"--x=a b", "--y=c d"}, false},
		{`"a\"b\$c"`, []string{`a"b$c`}, false},
		{`a\ b`, []string{"a b"}, false},
		{"a\\\nb", []string{"ab"}, false},
		{`''`, []string{""}, false},
		{`--x=$(pwd)`, nil, true},
		{"--x=`pwd`", nil, true},
		{`"$HOME"`, nil, true},
		{`a; rm -rf /`, nil, true},
		{`'open`, nil, true},
		{`"open`, nil, true},
		{`trailing\`, nil, true},
		{`a*`, nil, true},
	}
	for _, c := range cases {
		got, err := SplitWords(c.in)
		if (err != nil) != c.wantErr {
			t.Errorf("SplitWords(%q) error = %v, want error %v", c.in, err, c.wantErr)
			continue
		}
		if !c.wantErr && !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitWords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{`--a=\${p}/x 'q r' "s\"t"`, `a\ b`, `"x`, "\\\n", `$(x)`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitWords(s)
		if err != nil {
			return
		}
		// Re-quoting every word in single quotes gives the same words.
		var b strings.Builder
		for _, w := range words {
			b.WriteString("'" + strings.ReplaceAll(w, "'", `'\''`) + "' ")
		}
		again, err := SplitWords(b.String())
		if err != nil || !reflect.DeepEqual(again, words) && !(len(again) == 0 && len(words) == 0) {
			t.Fatalf("round trip of %q: %q -> %q (%v)", s, words, again, err)
		}
	})
}

func readRules(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("testdata/rules-php8.2-8.2.32.txt")
	if err != nil {
		t.Fatal(err)
	}
	vars, err := ParseRulesOutput(string(data))
	if err != nil {
		t.Fatal(err)
	}
	return vars
}

func TestParseRulesOutput(t *testing.T) {
	vars := readRules(t)
	if vars["PHP_ZEND_VERSION"] != "20220829" || vars["PHP_NAME_VERSION"] != "8.2" {
		t.Fatalf("api %q name %q", vars["PHP_ZEND_VERSION"], vars["PHP_NAME_VERSION"])
	}
	if !strings.Contains(vars["DEB_CFLAGS_MAINT_APPEND"], "-fno-strict-aliasing") {
		t.Errorf("CFLAGS append %q", vars["DEB_CFLAGS_MAINT_APPEND"])
	}
	for _, bad := range []string{"", "make: nothing\n", "PHPTUNE fpm_config=\n", "PHPTUNE =x\n"} {
		if _, err := ParseRulesOutput(bad); err == nil {
			t.Errorf("ParseRulesOutput(%q) accepted", bad)
		}
	}
}

func FuzzParseRulesOutput(f *testing.F) {
	data, _ := os.ReadFile("testdata/rules-php8.2-8.2.32.txt")
	f.Add(string(data))
	f.Add("PHPTUNE a=b\nPHPTUNE fpm_config=--x\n")
	f.Fuzz(func(t *testing.T, s string) {
		vars, err := ParseRulesOutput(s)
		if err != nil {
			return
		}
		words, err := SplitWords(vars["fpm_config"])
		if err != nil {
			return
		}
		for _, m := range []bool{false, true} {
			if args, err := ConfigureArgs(words, nil, m); err == nil && args[len(args)-1] != "--enable-opcache" {
				t.Fatalf("configure line %q does not end in --enable-opcache", args)
			}
		}
	})
}

func TestConfigureArgs(t *testing.T) {
	words, err := SplitWords(readRules(t)["fpm_config"])
	if err != nil {
		t.Fatal(err)
	}
	opc, err := SplitWords(readRules(t)["opcache_config"])
	if err != nil {
		t.Fatal(err)
	}
	has := func(args []string, a string) bool {
		for _, x := range args {
			if x == a || strings.HasPrefix(x, a+"=") {
				return true
			}
		}
		return false
	}
	cases := []struct {
		minimal   bool
		want, not []string
	}{
		{false,
			[]string{"--enable-fpm", "--enable-cli", "--enable-cgi", "--disable-all", "--with-layout=GNU", "--libdir=${prefix}/lib/php",
				"--with-config-file-scan-dir=/etc/php/8.2/fpm/conf.d", "--with-openssl", "--with-external-pcre", "--with-fpm-systemd", "--enable-dtrace", "--disable-debug", "--enable-opcache", "--enable-huge-code-pages"},
			[]string{"--config-cache", "--cache-file", "--disable-cgi", "--with-libevent-dir", "--enable-maintainer-zts", "--enable-opcache-file"}},
		{true,
			[]string{"--enable-fpm", "--enable-cli", "--enable-cgi", "--disable-all", "--with-layout=GNU", "--libdir=${prefix}/lib/php",
				"--with-config-file-path=/etc/php/8.2/fpm", "--disable-debug", "--prefix=/usr", "--enable-opcache"},
			[]string{"--with-openssl", "--with-external-pcre", "--with-fpm-systemd", "--enable-dtrace", "--with-libxml", "--cache-file", "--disable-cgi"}},
	}
	for _, c := range cases {
		args, err := ConfigureArgs(words, opc, c.minimal)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !has(args, w) {
				t.Errorf("minimal=%v: %q missing from %q", c.minimal, w, args)
			}
		}
		for _, n := range c.not {
			if has(args, n) {
				t.Errorf("minimal=%v: %q present in %q", c.minimal, n, args)
			}
		}
	}
	for _, bad := range [][]string{
		{"--enable-fpm", "--enable-cli", "--disable-all", "--with-layout=GNU", "--enable-maintainer-zts"},
		{"--enable-fpm", "--enable-cli", "--disable-all", "--with-layout=GNU", "--enable-debug"},
		{"--enable-cli", "--disable-all", "--with-layout=GNU"},
	} {
		if _, err := ConfigureArgs(bad, nil, false); err == nil {
			t.Errorf("ConfigureArgs(%q) accepted", bad)
		}
	}
}

func TestDeps(t *testing.T) {
	cases := []struct {
		args      []string
		want, not []string
	}{
		{[]string{"--disable-all", "--enable-fpm"}, []string{"gcc", "make", "autoconf", "dpkg-dev"}, []string{"libssl-dev"}},
		{[]string{"--with-openssl", "--with-zlib=/usr", "--enable-dtrace", "--with-fpm-systemd"},
			[]string{"libssl-dev", "zlib1g-dev", "systemtap-sdt-dev", "libsystemd-dev", "gcc"}, nil},
	}
	for _, c := range cases {
		got := Deps(c.args)
		set := map[string]bool{}
		for _, d := range got {
			set[d] = true
		}
		for _, w := range c.want {
			if !set[w] {
				t.Errorf("Deps(%q) = %q lacks %s", c.args, got, w)
			}
		}
		for _, n := range c.not {
			if set[n] {
				t.Errorf("Deps(%q) = %q has %s", c.args, got, n)
			}
		}
	}
}

func TestKeyAndVersions(t *testing.T) {
	a := KeyParts{SourceVersion: "8.2.32", Variant: "plain", Configure: []string{"--a", "--b"}, CFLAGS: "-O2"}
	b := a
	b.Configure = []string{"--a --b"}
	c := a
	c.Variant = "pgo"
	if Key(a) == Key(b) || Key(a) == Key(c) || Key(a) != Key(a) {
		t.Fatal("keys do not separate their parts")
	}
	if id := IDOf(Key(a)); !ValidID(id) {
		t.Fatalf("id %q", id)
	}
	if keyFlags("-g -O2 -ffile-prefix-map=/var/lib/phptune/builds/.work/tmp-1/src/php=. -Wall") != "-g -O2 -Wall" {
		t.Fatal("keyFlags keeps the work directory")
	}
	for _, c := range []struct {
		src, inst string
		older     bool
	}{
		{"8.2.32", "8.2.36-1~deb12u1", true},
		{"8.2.36", "8.2.36-1~deb12u1", false},
		{"8.2.40", "8.2.36-1~deb12u1", false},
		{"8.2.9", "8.2.10-1", true},
		{"8.2.32", "", false},
	} {
		if got := OlderThan(c.src, c.inst); got != c.older {
			t.Errorf("OlderThan(%q, %q) = %v", c.src, c.inst, got)
		}
	}
	r := &Record{ID: "0123456789ab", SourceVersion: "8.2.32", Installed: "8.2.36-1~deb12u1", Older: true, Variant: "plain"}
	for _, s := range []string{r.SecurityNote(), r.Summary()} {
		if !strings.Contains(s, "OLDER") || !strings.Contains(s, "8.2.36") || !strings.Contains(s, "security fixes") {
			t.Errorf("%q does not say the build is older", s)
		}
	}
	if strings.Contains(r.SecurityNote(), "hardening") {
		t.Errorf("Debian's flags called unhardened: %q", r.SecurityNote())
	}
	for _, c := range []struct {
		extra, off string
	}{
		{"-O3 -march=native -fno-semantic-interposition", ""},
		{"-fno-semantic-interposition -fno-stack-protector -U_FORTIFY_SOURCE", "-fno-stack-protector -U_FORTIFY_SOURCE"},
		{"-D_FORTIFY_SOURCE=0 -fcf-protection=none", "-D_FORTIFY_SOURCE=0 -fcf-protection=none"},
		{"-fstack-protector-strong -D_FORTIFY_SOURCE=3", ""},
	} {
		r := &Record{SourceVersion: "8.2.36", Installed: "8.2.36-1~deb12u1", ExtraCFLAGS: c.extra}
		note := r.SecurityNote()
		if got := strings.Join(HardeningOff(c.extra), " "); got != c.off {
			t.Errorf("HardeningOff(%q) = %q, want %q", c.extra, got, c.off)
		}
		if (c.off != "") != strings.Contains(note, "without Debian's hardening (--cflags "+c.off+")") || strings.Contains(note, "OLDER") {
			t.Errorf("%q: note %q", c.extra, note)
		}
	}
}

func TestCheckExtraCFLAGS(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // joined words, or "error"
	}{
		{"", ""},
		{" -O3  -fno-semantic-interposition ", "-O3 -fno-semantic-interposition"},
		{"-march=native -mtune=znver3 -g0 -DNDEBUG -UFOO -Wno-error", "-march=native -mtune=znver3 -g0 -DNDEBUG -UFOO -Wno-error"},
		{"-Ofast", "-Ofast"},
		{"-fprofile-partial-training", "-fprofile-partial-training"},
		{"-o /etc/passwd", "error"},
		{"-Wl,-rpath,/tmp", "error"},
		{"-Wa,--foo", "error"},
		{"O3", "error"},
		{"-O3;rm", "error"},
		{"-DX=$(id)", "error"},
		{"-c", "error"},
		{"-shared", "error"},
		{"-B/tmp", "error"},
		{"-specs=/tmp/x", "error"},
		{"-isystem/tmp", "error"},
		// What --variant owns, or what needs a runtime linked in.
		{"-O3 -fprofile-use", "error"},
		{"-fprofile-generate=/tmp", "error"},
		{"-flto=auto", "error"},
		{"-fno-lto", "error"},
		{"-fauto-profile", "error"},
		{"-fsanitize=address", "error"},
		{"-ftest-coverage", "error"},
	} {
		got, err := CheckExtraCFLAGS(tc.in)
		if tc.want == "error" {
			if err == nil || !strings.Contains(err.Error(), "--cflags") {
				t.Errorf("%q: err %v, want a --cflags error", tc.in, err)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func FuzzCheckExtraCFLAGS(f *testing.F) {
	for _, s := range []string{"-O3", "-fno-plt -march=native", "-Wl,-z", "-o x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := CheckExtraCFLAGS(s)
		if err != nil {
			return
		}
		for _, w := range words {
			if !strings.HasPrefix(w, "-") || strings.ContainsAny(w, " \t\n;$`'\"\\/*?<>|&()") {
				t.Fatalf("%q passed", w)
			}
		}
	})
}
