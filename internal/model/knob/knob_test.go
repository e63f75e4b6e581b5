package knob

import (
	"errors"
	"strings"
	"testing"
)

func TestDefaultsAreValid(t *testing.T) {
	if err := Defaults().Validate(); err != nil {
		t.Fatalf("distro defaults do not validate: %v", err)
	}
	for _, k := range All() {
		if k.Help == "" || k.Component == "" {
			t.Errorf("knob %s lacks help or component", k.Name)
		}
		if n, err := k.Normalize(k.Default); err != nil || n != k.Default {
			t.Errorf("knob %s default %q is not canonical: %q, %v", k.Name, k.Default, n, err)
		}
	}
}

func TestApplyAndValidate(t *testing.T) {
	cases := []struct {
		name    string
		set     []string
		wantErr string // substring; "" means valid
	}{
		{"static pool", []string{"pm=static", "pm.max_children=48"}, ""},
		{"case-insensitive enum", []string{"pm=Static"}, ""},
		{"size", []string{"opcache.jit_buffer_size=64m", "opcache.jit=tracing"}, ""},
		{"bool spellings", []string{"opcache.validate_timestamps=0"}, ""},
		{"nginx auto", []string{"nginx.worker_processes=auto"}, ""},
		{"unknown knob", []string{"pm.max_kids=3"}, "unknown knob"},
		{"unknown knob suggests", []string{"max_children=3"}, "did you mean pm.max_children"},
		{"bad enum", []string{"pm=fast"}, `knob pm: value "fast" is not one of the choices; valid: static|dynamic|ondemand`},
		{"zero children", []string{"pm.max_children=0"}, "pm.max_children: value \"0\" is out of range; valid: 1..4096"},
		{"not a number", []string{"pm.max_children=lots"}, "not a whole number"},
		{"no equals", []string{"pm"}, "expected KNOB=VALUE"},
		{"spare over children", []string{"pm.max_children=2"}, "pm.max_spare_servers=3 is greater than pm.max_children=2"},
		{"start outside spares", []string{"pm.start_servers=4"}, "pm.start_servers=4 is outside [pm.min_spare_servers=1, pm.max_spare_servers=3]"},
		{"min over max spare", []string{"pm.min_spare_servers=4", "pm.max_children=10", "pm.start_servers=4"}, "pm.min_spare_servers=4 is greater than pm.max_spare_servers=3"},
		{"spare rules ignored for static", []string{"pm=static", "pm.max_children=2"}, ""},
		{"bad size", []string{"opcache.jit_buffer_size=lots"}, "not a size"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Defaults().Apply(c.set)
			if err == nil {
				err = cfg.Validate()
			}
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.wantErr != "" && err == nil:
				t.Fatalf("want error containing %q, got none", c.wantErr)
			case c.wantErr != "" && !strings.Contains(err.Error(), c.wantErr):
				t.Fatalf("error %q does not contain %q", err, c.wantErr)
			}
		})
	}
}

func TestFitDynamic(t *testing.T) {
	cases := []struct {
		maxc, minS, maxS, start string
		wantMin, wantMax, want  string
	}{
		{"2", "1", "3", "2", "1", "2", "2"},
		{"1", "1", "3", "2", "1", "1", "1"},
		{"50", "1", "3", "2", "1", "3", "2"},
		{"4", "5", "8", "6", "4", "4", "4"},
	}
	for _, c := range cases {
		cfg := Defaults()
		cfg["pm.max_children"], cfg["pm.min_spare_servers"], cfg["pm.max_spare_servers"], cfg["pm.start_servers"] = c.maxc, c.minS, c.maxS, c.start
		got := cfg.FitDynamic()
		if err := got.Validate(); err != nil {
			t.Errorf("%+v: fitted config invalid: %v", c, err)
		}
		if got["pm.min_spare_servers"] != c.wantMin || got["pm.max_spare_servers"] != c.wantMax || got["pm.start_servers"] != c.want {
			t.Errorf("%+v: got min %s max %s start %s", c, got["pm.min_spare_servers"], got["pm.max_spare_servers"], got["pm.start_servers"])
		}
	}
}

func TestDiffOverridesAndFileRoundTrip(t *testing.T) {
	cfg, err := Defaults().Apply([]string{"pm=static", "pm.max_children=16", "listen=tcp"})
	if err != nil {
		t.Fatal(err)
	}
	d := Diff(Defaults(), cfg)
	if len(d) != 3 || d[0].Knob != "pm" || d[0].From != "dynamic" || d[0].To != "static" {
		t.Fatalf("diff = %+v", d)
	}
	text := FormatFile(cfg, "recommended by a test\nsecond line")
	if !strings.HasPrefix(text, "# recommended by a test\n# second line\n") {
		t.Fatalf("file header: %q", text)
	}
	a, err := ParseFile(text)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Defaults().Apply(a)
	if err != nil {
		t.Fatal(err)
	}
	if len(Diff(cfg, back)) != 0 {
		t.Fatalf("round trip lost settings: %v", Diff(cfg, back))
	}
	if _, err := ParseFile("pm=static\nnonsense\n"); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("bad line not reported: %v", err)
	}
}

func TestSizes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		out  string
	}{{"0", 0, "0"}, {"512", 512, "512"}, {"64k", 64 << 10, "64K"}, {"128M", 128 << 20, "128M"}, {"1024M", 1 << 30, "1G"}, {"2G", 2 << 30, "2G"}} {
		n, err := ParseSize(c.in)
		if err != nil || n != c.want || FormatSize(n) != c.out {
			t.Errorf("%s: got %d %v %s", c.in, n, err, FormatSize(n))
		}
	}
	for _, bad := range []string{"", "M", "-1M", "1T", "99999999999999999999G"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

func FuzzParseFile(f *testing.F) {
	f.Add("pm=static\n# c\n\npm.max_children=4\n")
	f.Add("=\n")
	f.Add("opcache.jit_buffer_size=64M")
	f.Fuzz(func(t *testing.T, s string) {
		// ApplyFile agrees with ParseFile then Apply, and names a line
		// whenever it fails.
		viaFile, ferr := Defaults().ApplyFile(s)
		var le *LineError
		if ferr != nil && !errors.As(ferr, &le) {
			t.Fatalf("ApplyFile(%q): %v is not a LineError", s, ferr)
		}
		a, err := ParseFile(s)
		if err != nil {
			if ferr == nil {
				t.Fatalf("ApplyFile accepted %q, ParseFile did not: %v", s, err)
			}
			return
		}
		cfg, err := Defaults().Apply(a)
		if (err == nil) != (ferr == nil) || err == nil && len(Diff(cfg, viaFile)) != 0 {
			t.Fatalf("ApplyFile(%q) = %v, %v; ParseFile+Apply = %v, %v", s, viaFile, ferr, cfg, err)
		}
		if err != nil {
			return
		}
		_ = cfg.Validate()
		_ = FormatFile(cfg, s)
	})
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "4M", "1G", "12k", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("negative size %d from %q", n, s)
		}
		back, err := ParseSize(FormatSize(n))
		if err != nil || back != n {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, n, FormatSize(n), back, err)
		}
	})
}

func TestRelevant(t *testing.T) {
	c := Defaults()
	cases := []struct {
		set  []string
		knob string
		want bool
	}{
		{nil, "pm.max_spare_servers", true},
		{[]string{"pm=static"}, "pm.max_spare_servers", false},
		{[]string{"pm=ondemand"}, "pm.process_idle_timeout", true},
		{nil, "pm.process_idle_timeout", false},
		{nil, "opcache.jit", false},
		{[]string{"opcache.jit_buffer_size=64M"}, "opcache.jit", true},
		{[]string{"opcache.validate_timestamps=off"}, "opcache.revalidate_freq", false},
		{nil, "pm.max_children", true},
	}
	for _, tc := range cases {
		cfg, err := c.Apply(tc.set)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Relevant(tc.knob); got != tc.want {
			t.Errorf("%v: Relevant(%s) = %v, want %v", tc.set, tc.knob, got, tc.want)
		}
	}
}

// TestApplyFileNamesTheLine: a bad value or an unknown knob in a knob file
// is reported with its line number (the error of Apply alone did not say
// where in the file it was).
func TestApplyFileNamesTheLine(t *testing.T) {
	cases := []struct {
		text, want string
	}{
		{"# tuned\npm=static\n\npm.max_children=lots\n", `line 4: knob pm.max_children: value "lots"`},
		{"pm=static\nnosuch=1\n", "line 2: "},
		{"pm=static\njust words\n", `line 2: "just words" is not KNOB=VALUE`},
		{" = 3\n", "line 1: "},
	}
	for _, c := range cases {
		_, err := Defaults().ApplyFile(c.text)
		var le *LineError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ApplyFile(%q) = %v, want a LineError with %q", c.text, err, c.want)
		}
	}
	_, err := Defaults().ApplyFile("nosuch=1\n")
	if !errors.Is(err, ErrUnknownKnob) {
		t.Errorf("unknown knob: %v does not wrap ErrUnknownKnob", err)
	}
	cfg, err := Defaults().ApplyFile("# c\npm = static\npm.max_children=48\n")
	if err != nil || cfg["pm"] != "static" || cfg["pm.max_children"] != "48" {
		t.Errorf("good file: %v %v", cfg, err)
	}
	lines, err := ParseFileLines("\n# c\npm=static\n\npm.max_children=4")
	if err != nil || len(lines) != 2 || lines[0] != (Line{3, "pm=static"}) || lines[1] != (Line{5, "pm.max_children=4"}) {
		t.Errorf("ParseFileLines: %+v %v", lines, err)
	}
}

func TestBuildKnobValidator(t *testing.T) {
	defer func(v func(string) (string, error)) { BuildValidator = v }(BuildValidator)
	k, err := Lookup(BuildKnob)
	if err != nil {
		t.Fatal(err)
	}
	known := func(v string) (string, error) {
		if v == "0123456789ab" {
			return v, nil
		}
		return "", errors.New("no such build; list them with phptune build list")
	}
	cases := []struct {
		name      string
		validator func(string) (string, error)
		in, want  string
		errPart   string
	}{
		{"distro without a cache", nil, "distro", "distro", ""},
		{"distro any case", nil, " Distro ", "distro", ""},
		{"an id without a cache", nil, "0123456789ab", "", "no build cache"},
		{"a known id", known, "0123456789ab", "0123456789ab", ""},
		{"an unknown id", known, "ffffffffffff", "", "phptune build list"},
		{"distro with a cache", known, "distro", "distro", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			BuildValidator = c.validator
			got, err := k.Normalize(c.in)
			if c.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), c.errPart) || !strings.Contains(err.Error(), BuildKnob) {
					t.Fatalf("Normalize(%q) = %q, %v; want an error naming %s and %q", c.in, got, err, BuildKnob, c.errPart)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Normalize(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
		})
	}
	// A config stored before the knob existed still validates (the distro's PHP).
	c := Defaults()
	delete(c, BuildKnob)
	if err := c.Validate(); err != nil {
		t.Fatalf("config without %s: %v", BuildKnob, err)
	}
	if Defaults()[BuildKnob] != "distro" {
		t.Fatalf("default %s = %q", BuildKnob, Defaults()[BuildKnob])
	}
}
