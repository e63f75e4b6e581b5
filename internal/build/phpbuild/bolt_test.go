package phpbuild

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestVariants(t *testing.T) {
	tests := []struct {
		v, compiled   string
		bolt, trained bool
	}{
		{VariantPlain, VariantPlain, false, false},
		{VariantPGO, VariantPGO, false, true},
		{VariantPGOLTO, VariantPGOLTO, false, true},
		{VariantBOLT, VariantPlain, true, true},
		{VariantPGOBOLT, VariantPGO, true, true},
		{VariantPGOLTOBOLT, VariantPGOLTO, true, true},
	}
	for _, tt := range tests {
		c, bolt, ok := Compiled(tt.v)
		if !ok || c != tt.compiled || bolt != tt.bolt || Trained(tt.v) != tt.trained {
			t.Errorf("%s: compiled %s bolt %v ok %v trained %v", tt.v, c, bolt, ok, Trained(tt.v))
		}
	}
	for _, v := range []string{"", "lto", "bolt-pgo", "PGO", "plain-bolt"} {
		if _, _, ok := Compiled(v); ok || Trained(v) {
			t.Errorf("%q accepted", v)
		}
	}
	// Options: bad variants and combinations refused before anything runs.
	for _, o := range []Options{{Variant: "lto"}, {Variant: VariantPlain, Train: "strings"}, {Variant: VariantPGOLTOBOLT, Minimal: true},
		{Variant: VariantPlain, TrainDuration: time.Minute}, {Variant: VariantPGO, TrainDuration: -time.Second}, {Variant: VariantPGO, TrainDuration: time.Millisecond}} {
		if err := o.defaults(); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	o := Options{Variant: VariantBOLT}
	if err := o.defaults(); err != nil || o.Train != DefaultTrain {
		t.Errorf("bolt: %v, train %q (BOLT trains: the default workload)", err, o.Train)
	}
	// The training's duration is part of the request (and the key) only
	// when it is not the default, so older builds keep their keys.
	for _, tt := range []struct {
		o    Options
		want string
	}{
		{Options{Variant: VariantPGO, Train: "wordpress"}, "wordpress:front"},
		{Options{Variant: VariantPGO, Train: "wordpress", TrainDuration: DefaultTrainDuration}, "wordpress:front"},
		{Options{Variant: VariantPGOLTO, Train: "strings", TrainDuration: 90 * time.Second}, "strings:front for 1m30s"},
		{Options{Variant: VariantPlain}, ""},
	} {
		if err := tt.o.defaults(); err != nil {
			t.Fatalf("%+v: %v", tt.o, err)
		}
		if got := (&builder{o: tt.o}).trainingDesc(); got != tt.want {
			t.Errorf("%+v: training %q, want %q", tt.o, got, tt.want)
		}
	}
}

func TestBOLTProfileNames(t *testing.T) {
	for name, want := range map[string]bool{
		"php-fpm.fdata.12345":       true,
		"php-fpm.fdata.12345.fdata": true,
		"php-fpm.fdata":             false,
		"php-fpm.fdata.1/../x":      false,
		"php-fpm.fdata.-1":          false,
		"other.fdata.1":             false,
		"php-fpm.fdata.1\nx":        false,
	} {
		if got := boltFdataRE.MatchString(name); got != want {
			t.Errorf("%q: %v, want %v", name, got, want)
		}
	}
}

func TestBOLTOptimizeArgs(t *testing.T) {
	a := BOLTOptimizeArgs("/w/php-fpm", "/w/p.fdata", "/w/php-fpm.bolt")
	if a[0] != "/w/php-fpm" || !slices.Contains(a, "-data=/w/p.fdata") || !slices.Contains(a, "/w/php-fpm.bolt") || !slices.Contains(a, "-reorder-functions=hfsort+") {
		t.Errorf("args %q", a)
	}
}

// boltOutput is the shape of llvm-bolt 16's report (abridged).
const boltOutput = `BOLT-INFO: Target architecture: x86_64
BOLT-INFO: BOLT version: <unknown>
BOLT-INFO: first alloc address is 0x0
BOLT-INFO: enabling relocation mode
BOLT-INFO: pre-processing profile using branch profile reader
BOLT-INFO: 1822 out of 9873 functions in the binary (18.5%) have non-empty execution profile
BOLT-INFO: 41 functions with profile could not be optimized
BOLT-INFO: basic block reordering modified layout of 1511 functions (82.9% of profiled, 15.3% of total)
             412345678 : executed instructions
             21345678 : taken branches (-41.2%)
`

func TestBOLTSummary(t *testing.T) {
	got := BOLTSummary(boltOutput)
	for _, want := range []string{"1822 out of 9873 functions", "taken branches (-41.2%)", "41 functions with profile"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "Target architecture") {
		t.Errorf("summary %q keeps noise", got)
	}
}

func FuzzBOLTSummary(f *testing.F) {
	f.Add(boltOutput)
	f.Add("BOLT-INFO: functions profile\n" + strings.Repeat("x functions profile\n", 50))
	f.Fuzz(func(t *testing.T, out string) {
		s := BOLTSummary(out)
		if n := strings.Count(s, "; "); n > 7 {
			t.Errorf("%d parts kept", n+1)
		}
		if len(s) > len(out)+8*2 {
			t.Errorf("summary longer than its input")
		}
	})
}

func TestHasStaticRelocs(t *testing.T) {
	for _, c := range []struct {
		sections string
		want     bool
	}{
		{"  [10] .rela.dyn RELA 0000 A 6 0 8\n  [11] .rela.plt RELA 0000 AI 6 25 8\n", false},
		{"  [10] .rela.dyn RELA 0000 A\n  [17] .rela.text RELA 0000 I 45 16 8\n", true},
		{"  [17] .rela.text.hot RELA 0000 I\n", false},
		{"", false},
	} {
		if got := HasStaticRelocs(c.sections); got != c.want {
			t.Errorf("HasStaticRelocs(%q) = %v, want %v", c.sections, got, c.want)
		}
	}
}
