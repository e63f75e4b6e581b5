package phpstatus

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// fixture reads one of the script's answers: status-php82.json is PHP
// 8.2's opcache with Debian's defaults (128 MiB, 8 MiB of interned
// strings, 10000 files, no JIT); status-wordpress.json a WordPress lab
// after a short load.
func fixture(t testing.TB, name string) []byte {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseWordPress(t *testing.T) {
	r, err := Parse(fixture(t, "status-wordpress.json"))
	if err != nil || len(r.Problems) > 0 {
		t.Fatalf("err %v problems %q", err, r.Problems)
	}
	op, rp := r.Opcache, r.Realpath
	if !op.Enabled || op.UsedB != 24318944 || op.FreeB != 109898784 || op.InternedBufferB != 8<<20 || op.InternedUsedB != 4056048 ||
		op.CachedScripts != 341 || op.MaxCachedKeys != 16229 || op.MemoryConsumptionB != 128<<20 || op.MaxAcceleratedFiles != 10000 ||
		op.JIT == nil || op.JIT.Enabled || op.Hits != 18716 {
		t.Fatalf("opcache %+v", op)
	}
	if rp.UsedB != 81671 || rp.Entries != 634 || rp.SizeB != 4096<<10 || rp.Reads != 1 {
		t.Fatalf("realpath %+v", rp)
	}
}

func TestParsePHP82(t *testing.T) {
	r, err := Parse(fixture(t, "status-php82.json"))
	if err != nil {
		t.Fatal(err)
	}
	d := r.Directives
	if r.PHPVersion != "8.2.36" || !r.Loaded || d == nil || !d.Enable || !d.ValidateTimestamps || d.RevalidateFreq != 2 || d.MemoryConsumptionB != 128<<20 ||
		d.InternedBufferMiB != 8 || d.MaxAcceleratedFiles != 10000 || !d.HasJIT || d.JITBufferB != 0 || r.Opcache == nil || r.Opcache.MaxCachedKeys != 16229 ||
		r.Realpath == nil || r.Realpath.SizeB != 4<<20 || len(r.Problems) != 0 {
		t.Fatalf("%+v %+v", r, d)
	}
}

// TestParseHostile: what a hostile app could print instead is refused
// part by part, never taken as figures, and every refusal is named. The
// cases are those of the two parsers this one replaced (sizing's and
// advise's), and the ones where they disagreed (a missing flag).
func TestParseHostile(t *testing.T) {
	wp := string(fixture(t, "status-wordpress.json"))
	php82 := string(fixture(t, "status-php82.json"))
	for _, tc := range []struct {
		name, body string
		err        bool
		// parts expected to survive
		opcache, directives, realpath bool
		problem                       string
	}{
		{"not json", "<html>hello</html>", true, false, false, false, ""},
		{"warning", "<b>Warning</b>", true, false, false, false, ""},
		{"array", "[1,2]", true, false, false, false, ""},
		{"null", "null", true, false, false, false, ""},
		{"too large", `{"x":"` + strings.Repeat("a", MaxBytes) + `"}`, true, false, false, false, ""},
		{"empty object", "{}", false, false, false, false, "php_version: missing"},
		{"negative used", strings.Replace(wp, `"used_memory":24318944`, `"used_memory":-1`, 1), false, false, true, true, "used_memory"},
		{"huge keys", strings.Replace(wp, `"num_cached_keys":341`, `"num_cached_keys":1e300`, 1), false, false, true, true, "num_cached_keys"},
		{"fraction", strings.Replace(wp, `"oom_restarts":0`, `"oom_restarts":0.5`, 1), false, false, true, true, "oom_restarts"},
		{"string figure", strings.Replace(wp, `"hash_restarts":0`, `"hash_restarts":"0"`, 1), false, false, true, true, "hash_restarts: not a number"},
		{"bool as string", strings.Replace(wp, `"cache_full":false`, `"cache_full":"no"`, 1), false, false, true, true, "cache_full: not true or false"},
		{"flag missing", strings.Replace(wp, `"cache_full":false,`, ``, 1), false, false, true, true, "opcache.cache_full: missing"},
		{"jit flag missing", strings.Replace(wp, `"jit":{"enabled":false,`, `"jit":{`, 1), false, false, true, true, "jit.enabled: missing"},
		{"jit free above size", strings.Replace(wp, `"buffer_free":0`, `"buffer_free":5`, 1), false, false, true, true, "larger than buffer_size"},
		{"opcache off", `{"php_version":"8.2.1","loaded":true,"opcache":{"enabled":false,"cache_full":false},"realpath_cache":{"used_bytes":1,"entries":1,"size_ini":"4M"}}`,
			false, true, false, true, "directives: not reported"},
		{"not loaded", `{"php_version":"7.4.33","loaded":false,"realpath_cache":{"used_bytes":1,"entries":1,"size_ini":"4M"}}`, false, false, false, true, "opcache: not reported"},
		{"realpath size not a size", strings.Replace(wp, `"4096K"`, `"lots"`, 1), false, true, true, false, "size_ini"},
		{"realpath size overflow", strings.Replace(wp, `"4096K"`, `"99999999999999999G"`, 1), false, true, true, false, "size_ini"},
		{"realpath size a number", strings.Replace(wp, `"4096K"`, `4096`, 1), false, true, true, false, "size_ini: not a string"},
		{"statistics empty array", strings.Replace(wp, `"statistics":{`, `"statistics":[],"x":{`, 1), false, false, true, true, "statistics: missing"},
		{"version not a string", strings.Replace(php82, `"php_version":"8.2.36"`, `"php_version":8.2`, 1), false, true, true, true, "php_version"},
		{"version with a control character", strings.Replace(php82, `"php_version":"8.2.36"`, `"php_version":"8.2\u001b[31m"`, 1), false, true, true, true, "not printable"},
		{"long version", strings.Replace(php82, `"php_version":"8.2.36"`, `"php_version":"`+strings.Repeat("9", 300)+`"`, 1), false, true, true, true, "longer than"},
		{"loaded missing", strings.Replace(php82, `"loaded":true,`, ``, 1), false, true, true, true, "loaded: missing"},
		{"enable as a string", strings.Replace(php82, `"opcache.enable":true`, `"opcache.enable":"1"`, 1), false, true, false, true, "opcache.enable: not true or false"},
		{"negative freq", strings.Replace(php82, `"opcache.revalidate_freq":2`, `"opcache.revalidate_freq":-2`, 1), false, true, false, true, "revalidate_freq"},
		{"fractional files", strings.Replace(php82, `"opcache.max_accelerated_files":10000`, `"opcache.max_accelerated_files":1e4.5`, 1), true, false, false, false, ""},
		{"huge memory", strings.Replace(php82, `"opcache.memory_consumption":134217728`, `"opcache.memory_consumption":1e300`, 1), false, true, false, true, "memory_consumption"},
		{"no directives", strings.Replace(php82, `"directives"`, `"x"`, 1), false, true, false, true, "directives: not reported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse([]byte(tc.body))
			if (err != nil) != tc.err {
				t.Fatalf("err %v", err)
			}
			if err != nil {
				if !errors.Is(err, ErrStatus) {
					t.Fatalf("error %v does not wrap ErrStatus", err)
				}
				return
			}
			if (r.Opcache != nil) != tc.opcache || (r.Directives != nil) != tc.directives || (r.Realpath != nil) != tc.realpath {
				t.Fatalf("opcache %+v directives %+v realpath %+v problems %q", r.Opcache, r.Directives, r.Realpath, r.Problems)
			}
			if all := strings.Join(r.Problems, "; "); !strings.Contains(all, tc.problem) || all == "" {
				t.Fatalf("problems %q, want one naming %q", r.Problems, tc.problem)
			}
		})
	}
}

func TestParseINISize(t *testing.T) {
	for in, want := range map[string]int64{"4096K": 4 << 20, "4M": 4 << 20, "1g": 1 << 30, "16384": 16384, " 2m ": 2 << 20} {
		if got, err := ParseINISize(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "M", "4T", "1.5M", "2000000G"} {
		if _, err := ParseINISize(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// FuzzParse: any bytes parse without panicking; every figure that comes
// out is within the bounds the parser promises and every string is short
// and printable. Seeded with both former parsers' seeds.
func FuzzParse(f *testing.F) {
	f.Add(fixture(f, "status-wordpress.json"))
	f.Add(fixture(f, "status-php82.json"))
	f.Add([]byte(`{"opcache":{"enabled":true,"memory_usage":[],"statistics":null},"realpath_cache":{"size_ini":"1G"}}`))
	f.Add([]byte(`{"opcache":{"enabled":true,"jit":{"buffer_size":1e15}}}`))
	f.Add([]byte(`{"loaded":true,"directives":{"opcache.enable":true,"opcache.jit":"\u0000"}}`))
	f.Add([]byte(`{"loaded":false,"php_version":"7.4.33"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Parse(body)
		if err != nil {
			if r != nil {
				t.Fatal("a report returned with an error")
			}
			return
		}
		in := func(xs ...int64) {
			for _, x := range xs {
				if x < 0 || x > maxFigure {
					t.Fatalf("figure %d out of bounds", x)
				}
			}
		}
		if op := r.Opcache; op != nil {
			in(op.MemoryConsumptionB, op.UsedB, op.FreeB, op.WastedB, op.InternedBufferB, op.InternedUsedB, op.InternedStrings,
				op.CachedScripts, op.CachedKeys, op.MaxCachedKeys, op.MaxAcceleratedFiles, op.OOMRestarts, op.HashRestarts, op.Hits, op.Misses)
			if op.JIT != nil {
				in(op.JIT.BufferB, op.JIT.BufferFreeB)
				if op.JIT.BufferFreeB > op.JIT.BufferB {
					t.Fatal("JIT free above its size")
				}
			}
		}
		if d := r.Directives; d != nil {
			in(d.RevalidateFreq, d.MemoryConsumptionB, d.InternedBufferMiB, d.MaxAcceleratedFiles, d.JITBufferB)
			if len(d.JIT) > maxString || strings.ContainsAny(d.JIT, "\x00\x1b\n") {
				t.Fatalf("string %q let through", d.JIT)
			}
		}
		if rp := r.Realpath; rp != nil {
			in(rp.UsedB, rp.Entries, rp.SizeB)
		}
		for _, s := range []string{r.PHPVersion, r.RestrictAPI} {
			if len(s) > maxString || strings.ContainsAny(s, "\x00\x1b\n") {
				t.Fatalf("string %q let through", s)
			}
		}
	})
}
