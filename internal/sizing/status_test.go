package sizing

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// TestParseStatusWordPress reads the status script's output of a real
// WordPress lab after a short load.
func TestParseStatusWordPress(t *testing.T) {
	body, err := os.ReadFile("testdata/status-wordpress.json")
	if err != nil {
		t.Fatal(err)
	}
	op, rp, problems, err := ParseStatus(body)
	if err != nil || len(problems) > 0 {
		t.Fatalf("err %v problems %q", err, problems)
	}
	if !op.Enabled || op.UsedB != 24318944 || op.FreeB != 109898784 || op.InternedBufferB != 8<<20 || op.InternedUsedB != 4056048 ||
		op.CachedScripts != 341 || op.MaxCachedKeys != 16229 || op.MemoryConsumptionB != 128<<20 || op.MaxAcceleratedFiles != 10000 ||
		op.JIT == nil || op.JIT.Enabled || op.Hits != 18716 {
		t.Fatalf("opcache %+v", op)
	}
	if rp.UsedB != 81671 || rp.Entries != 634 || rp.SizeB != 4096<<10 || rp.Reads != 1 {
		t.Fatalf("realpath %+v", rp)
	}
}

// TestParseStatusHostile: what a hostile app could print instead is
// refused part by part, never taken as figures.
func TestParseStatusHostile(t *testing.T) {
	good, _ := os.ReadFile("testdata/status-wordpress.json")
	for _, tc := range []struct {
		name, body  string
		err         bool
		opcache, rp bool // parts expected to survive
	}{
		{"not json", "<html>hello</html>", true, false, false},
		{"array", "[1,2]", true, false, false},
		{"too large", `{"x":"` + strings.Repeat("a", MaxStatusBytes) + `"}`, true, false, false},
		{"empty object", "{}", false, false, false},
		{"negative used", strings.Replace(string(good), `"used_memory":24318944`, `"used_memory":-1`, 1), false, false, true},
		{"huge keys", strings.Replace(string(good), `"num_cached_keys":341`, `"num_cached_keys":1e300`, 1), false, false, true},
		{"fraction", strings.Replace(string(good), `"oom_restarts":0`, `"oom_restarts":0.5`, 1), false, false, true},
		{"string figure", strings.Replace(string(good), `"hash_restarts":0`, `"hash_restarts":"0"`, 1), false, false, true},
		{"bool as string", strings.Replace(string(good), `"cache_full":false`, `"cache_full":"no"`, 1), false, false, true},
		{"jit free above size", strings.Replace(string(good), `"buffer_free":0`, `"buffer_free":5`, 1), false, false, true},
		{"opcache off", `{"opcache":{"enabled":false},"realpath_cache":{"used_bytes":1,"entries":1,"size_ini":"4M"}}`, false, true, true},
		{"realpath size not a size", strings.Replace(string(good), `"4096K"`, `"lots"`, 1), false, true, false},
		{"realpath size overflow", strings.Replace(string(good), `"4096K"`, `"99999999999999999G"`, 1), false, true, false},
		{"statistics empty array", strings.Replace(string(good), `"statistics":{`, `"statistics":[],"x":{`, 1), false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op, rp, problems, err := ParseStatus([]byte(tc.body))
			if (err != nil) != tc.err {
				t.Fatalf("err %v", err)
			}
			if err != nil && !errors.Is(err, ErrStatus) {
				t.Fatalf("error %v does not wrap ErrStatus", err)
			}
			if (op != nil) != tc.opcache || (rp != nil) != tc.rp {
				t.Fatalf("opcache %+v realpath %+v problems %q", op, rp, problems)
			}
			if !tc.err && (!tc.opcache || !tc.rp) && len(problems) == 0 {
				t.Fatal("a part was refused without a problem saying so")
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

// FuzzParseStatus: any bytes parse without panicking, and every figure
// that comes out is within the bounds the parser promises.
func FuzzParseStatus(f *testing.F) {
	good, _ := os.ReadFile("testdata/status-wordpress.json")
	f.Add(good)
	f.Add([]byte(`{"opcache":{"enabled":true,"memory_usage":[],"statistics":null},"realpath_cache":{"size_ini":"1G"}}`))
	f.Add([]byte(`{"opcache":{"enabled":true,"jit":{"buffer_size":1e15}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		op, rp, _, err := ParseStatus(body)
		if err != nil {
			if op != nil || rp != nil {
				t.Fatal("figures returned with an error")
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
		if op != nil {
			in(op.MemoryConsumptionB, op.UsedB, op.FreeB, op.WastedB, op.InternedBufferB, op.InternedUsedB, op.InternedStrings,
				op.CachedScripts, op.CachedKeys, op.MaxCachedKeys, op.MaxAcceleratedFiles, op.OOMRestarts, op.HashRestarts, op.Hits, op.Misses)
			if op.JIT != nil {
				in(op.JIT.BufferB, op.JIT.BufferFreeB)
				if op.JIT.BufferFreeB > op.JIT.BufferB {
					t.Fatal("JIT free above its size")
				}
			}
		}
		if rp != nil {
			in(rp.UsedB, rp.Entries, rp.SizeB)
		}
	})
}
