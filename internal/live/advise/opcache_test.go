package advise

import (
	"os"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/results"
)

// fixture is the status script's output from PHP 8.2's opcache (Debian's
// defaults: 128 MiB, 8 MiB of interned strings, 10000 files, no JIT),
// kept beside the script's parser.
func fixture(t testing.TB) []byte {
	b, err := os.ReadFile("../../servers/status/phpstatus/testdata/status-php82.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseOpcache(t *testing.T) {
	o, err := ParseOpcache(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	if o.PHPVersion != "8.2.36" || !o.Loaded || !o.Enable || !o.ValidateTimestamps || o.RevalidateFreq != 2 || o.MemoryConsumptionB != 128<<20 ||
		o.InternedBufferMiB != 8 || o.MaxAcceleratedFiles != 10000 || !o.HasJIT || o.JITBufferB != 0 || o.Status == nil || o.Status.MaxCachedKeys != 16229 ||
		o.Realpath == nil || o.Realpath.SizeB != 4<<20 || len(o.Problems) != 0 {
		t.Fatalf("%+v", o)
	}
	good := string(fixture(t))
	for _, c := range []struct {
		name, body string
		err        bool
		problem    string
	}{
		{"not json", "<b>Warning</b>", true, ""},
		{"too large", `{"x":"` + strings.Repeat("a", 70<<10) + `"}`, true, ""},
		{"version not a string", strings.Replace(good, `"php_version":"8.2.36"`, `"php_version":8.2`, 1), false, "php_version"},
		{"version with a control character", strings.Replace(good, `"php_version":"8.2.36"`, `"php_version":"8.2\u001b[31m"`, 1), false, "not printable"},
		{"long version", strings.Replace(good, `"php_version":"8.2.36"`, `"php_version":"`+strings.Repeat("9", 300)+`"`, 1), false, "longer than"},
		{"enable as a string", strings.Replace(good, `"opcache.enable":true`, `"opcache.enable":"1"`, 1), false, "opcache.enable: not true or false"},
		{"negative freq", strings.Replace(good, `"opcache.revalidate_freq":2`, `"opcache.revalidate_freq":-2`, 1), false, "revalidate_freq"},
		{"fractional files", strings.Replace(good, `"opcache.max_accelerated_files":10000`, `"opcache.max_accelerated_files":1e4.5`, 1), true, ""},
		{"huge memory", strings.Replace(good, `"opcache.memory_consumption":134217728`, `"opcache.memory_consumption":1e300`, 1), false, "memory_consumption"},
		{"no directives", strings.Replace(good, `"directives"`, `"x"`, 1), false, "directives: not reported"},
	} {
		o, err := ParseOpcache([]byte(c.body))
		if (err != nil) != c.err {
			t.Errorf("%s: err %v", c.name, err)
			continue
		}
		if err == nil && !strings.Contains(strings.Join(o.Problems, "; "), c.problem) {
			t.Errorf("%s: problems %q, want %q", c.name, o.Problems, c.problem)
		}
	}
}

// FuzzParseOpcache: any bytes parse without panicking; figures stay in
// bounds and strings printable.
func FuzzParseOpcache(f *testing.F) {
	f.Add(fixture(f))
	f.Add([]byte(`{"loaded":true,"directives":{"opcache.enable":true,"opcache.jit":"\u0000"}}`))
	f.Add([]byte(`{"loaded":false,"php_version":"7.4.33"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := ParseOpcache(body)
		if err != nil {
			return
		}
		for _, x := range []int64{o.RevalidateFreq, o.MemoryConsumptionB, o.InternedBufferMiB, o.MaxAcceleratedFiles, o.JITBufferB} {
			if x < 0 || x > 1<<50 {
				t.Fatalf("figure %d out of bounds", x)
			}
		}
		for _, s := range []string{o.PHPVersion, o.JIT, o.RestrictAPI} {
			if len(s) > 256 || strings.ContainsAny(s, "\x00\x1b\n") {
				t.Fatalf("string %q let through", s)
			}
		}
		oa, fs := AdviseOpcache("/etc/php-fpm.conf", []string{"www"}, "www", o, "", nil)
		for _, k := range oa.Knobs {
			if !strings.Contains(k, "=") {
				t.Fatalf("knob %q", k)
			}
		}
		_ = fs
	})
}

func status() *Opcache {
	return &Opcache{PHPVersion: "8.2.36", Loaded: true, DirectivesRead: true, Enable: true, ValidateTimestamps: true, RevalidateFreq: 2, MemoryConsumptionB: 128 << 20,
		InternedBufferMiB: 8, MaxAcceleratedFiles: 10000, HasJIT: true,
		Status: &results.OpcacheStatus{Enabled: true, UsedB: 40 << 20, FreeB: 88 << 20, InternedBufferB: 8 << 20, InternedUsedB: 3 << 20,
			CachedScripts: 900, CachedKeys: 1000, MaxCachedKeys: 16229, Hits: 99000, Misses: 1000},
		Realpath: &results.RealpathStatus{UsedB: 100 << 10, SizeB: 4 << 20, Entries: 700}}
}

func TestAdviseOpcache(t *testing.T) {
	for _, c := range []struct {
		name   string
		edit   func(o *Opcache)
		knobs  string
		finds  []string
		noWarn bool
	}{
		{"healthy", func(o *Opcache) {}, "", []string{"hit rate 99.0%", "stats each cached script at most once every 2 s", "phptune tune measures it", "the JIT is off (opcache.jit unset, opcache.jit_buffer_size 0)"}, true},
		{"off", func(o *Opcache) { o.Enable, o.Status = false, nil }, "opcache.enable=on", []string{"opcache is off"}, false},
		{"not loaded", func(o *Opcache) { o.Loaded, o.Status = false, nil }, "", []string{"opcache is not loaded"}, false},
		{"memory full", func(o *Opcache) { o.Status.UsedB, o.Status.FreeB = 125<<20, 3<<20 }, "opcache.memory_consumption=256",
			[]string{"opcache's memory is full: 3.0 MiB free of 128.0 MiB", "opcache.memory_consumption 128 -> 256"}, false},
		{"oom restarts", func(o *Opcache) { o.Status.OOMRestarts = 3 }, "opcache.memory_consumption=256", []string{"3 restarts for lack of memory"}, false},
		{"interned full", func(o *Opcache) { o.Status.InternedUsedB = 8<<20 - 1000 }, "opcache.memory_consumption=136 opcache.interned_strings_buffer=16",
			[]string{"interned strings buffer is full", "opcache.interned_strings_buffer 8 -> 16", "opcache.memory_consumption 128 -> 136"}, false},
		{"keys full", func(o *Opcache) { o.Status.CachedKeys, o.Status.CachedScripts = 16000, 15000 }, "opcache.max_accelerated_files=32531",
			[]string{"key table is (nearly) full: 15000 scripts cached under 16000 keys in 16229 slots", "opcache.max_accelerated_files 10000 -> 32531"}, false},
		{"more scripts than the setting", func(o *Opcache) { o.Status.CachedKeys, o.Status.CachedScripts = 11000, 11000 }, "opcache.max_accelerated_files=32531", []string{"(nearly) full"}, false},
		{"low hit rate", func(o *Opcache) { o.Status.Hits, o.Status.Misses = 9000, 1000 }, "", []string{"hit rate 90.0%: 1000 misses in 10000 lookups"}, false},
		{"revalidate every request", func(o *Opcache) { o.RevalidateFreq = 0 }, "opcache.revalidate_freq=2", []string{"revalidate_freq 0"}, false},
		{"timestamps off", func(o *Opcache) { o.ValidateTimestamps = false }, "", []string{"validate_timestamps is off"}, true},
		{"jit buffer full", func(o *Opcache) {
			o.JIT, o.JITBufferB = "tracing", 64<<20
			o.Status.JIT = &results.JITStatus{Enabled: true, On: true, BufferB: 64 << 20, BufferFreeB: 1 << 20}
		}, "opcache.jit_buffer_size=128M", []string{"the JIT's buffer is full: 63.0 MiB of 64.0 MiB"}, false},
		{"no jit in this PHP", func(o *Opcache) { o.HasJIT = false }, "", nil, true},
		{"realpath full", func(o *Opcache) { o.Realpath.UsedB = 4<<20 - 10 }, "realpath_cache_size=8M", []string{"realpath cache of the worker that answered is full"}, false},
		{"at the knob's limit", func(o *Opcache) { o.MemoryConsumptionB, o.Status.UsedB, o.Status.FreeB = 4096<<20, 4095<<20, 1<<20 }, "", []string{"opcache.memory_consumption 4096 -> 4096"}, false},
	} {
		o := status()
		c.edit(o)
		oa, fs := AdviseOpcache("/etc/php/8.2/fpm/php-fpm.conf", []string{"www", "shop"}, "www", o, "", nil)
		if got := strings.Join(oa.Knobs, " "); got != c.knobs {
			t.Errorf("%s: knobs %q, want %q", c.name, got, c.knobs)
		}
		var text []string
		warned := false
		for _, f := range fs {
			text = append(text, f.Severity+": "+f.Message)
			warned = warned || f.Severity == "warning"
			if !strings.HasPrefix(f.Message, "opcache (pools www, shop): ") {
				t.Errorf("%s: finding without its pools: %q", c.name, f.Message)
			}
		}
		all := strings.Join(text, "\n")
		for _, w := range c.finds {
			if !strings.Contains(all, w) {
				t.Errorf("%s: findings lack %q:\n%s", c.name, w, all)
			}
		}
		if c.noWarn && warned {
			t.Errorf("%s: warned:\n%s", c.name, all)
		}
	}
	// A refused directive (the parser drops the directives part) must not
	// read as "opcache is off": nothing is sized and the refusal is named.
	refused, err := ParseOpcache([]byte(strings.Replace(string(fixture(t)), `"opcache.revalidate_freq":2`, `"opcache.revalidate_freq":-2`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	oa, fs := AdviseOpcache("/c", []string{"www"}, "www", refused, "", nil)
	var said []string
	for _, f := range fs {
		said = append(said, f.Message)
	}
	if all := strings.Join(said, "\n"); len(oa.Knobs) != 0 || strings.Contains(all, "opcache is off") || !strings.Contains(all, "revalidate_freq") ||
		!strings.Contains(all, "directives were not read") {
		t.Errorf("refused directives: knobs %q findings:\n%s", oa.Knobs, all)
	}
	oa, fs = AdviseOpcache("/c", []string{"www"}, "www", nil, "refused: pool www runs chrooted", nil)
	if oa.Error == "" || len(fs) != 1 || !strings.Contains(fs[0].Message, "not read: refused: pool www runs chrooted") {
		t.Errorf("not read: %+v %+v", oa, fs)
	}
	measured := []results.Decision{{Name: "opcache.validate_timestamps=off", Ratio: 1.02, CILow: 0.97, CIHigh: 1.07, Verdict: "no significant difference", Rounds: 6},
		{Name: "jit=tracing,64M", Ratio: 1.16, CILow: 1.08, CIHigh: 1.25, Verdict: "better", Adopted: true, Rounds: 4}}
	_, fs = AdviseOpcache("/c", []string{"www"}, "www", status(), "", measured)
	var all []string
	for _, f := range fs {
		all = append(all, f.Message)
	}
	for _, w := range []string{"The stored tune measured opcache.validate_timestamps=off: throughput ×1.02 [0.97, 1.07], no significant difference (6 rounds), and kept the incumbent.",
		"The stored tune measured jit=tracing,64M: throughput ×1.16 [1.08, 1.25], better (4 rounds), and adopted it."} {
		if !strings.Contains(strings.Join(all, "\n"), w) {
			t.Errorf("lacks %q:\n%s", w, strings.Join(all, "\n"))
		}
	}
}
