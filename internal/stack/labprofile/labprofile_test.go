package labprofile

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/stack/workload"
	"github.com/phptune/phptune/internal/watch/perf"
	"github.com/phptune/phptune/internal/watch/profile"
)

// TestProfileStrings profiles a real strings lab for one short round:
// perf's samples of the PHP workers show the app's string functions,
// excimer's show its script, both samplers' overheads are measured, and
// the PHP sampler is off again at the end.
func TestProfileStrings(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	labtest.Home(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	native := true
	if _, err := perf.Check(ctx); err != nil {
		t.Logf("native profile skipped: %v", err)
		native = false
	}
	l, err := lab.Up(ctx, lab.Options{Name: "prof", App: "strings"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.Parse(ctx, l, "front")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	res, err := Run(ctx, l, w, Options{Conns: 4, Duration: 3 * time.Second, Warmup: time.Second, Rounds: 1,
		PHPClock: lab.ProfilerCPU, Native: native, PHP: true, Perf: perf.DefaultOptions, TempDir: tmp, Say: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if native {
		n := res.Native
		php := n.ByRole[profile.RolePHP]
		if n == nil || php < 50 {
			t.Fatalf("native: %+v", n)
		}
		// Debian's php-fpm exports none of zif_str_replace, zif_strtolower
		// (static to the binary, unnamed): their work shows as libc's
		// string routines, named through libc's symbols, called from
		// the executor.
		work := 0
		for stack, c := range n.Folded {
			leaf := stack[strings.LastIndexByte(stack, ';')+1:]
			if strings.HasPrefix(stack, "php;") && strings.Contains(stack, ";execute_ex;") &&
				(strings.HasPrefix(leaf, "__mem") || strings.HasPrefix(leaf, "__str") || strings.HasPrefix(leaf, "mem") || strings.Contains(leaf, "tolower")) {
				work += c
			}
		}
		if share := float64(work) / float64(php); share < 0.3 {
			t.Errorf("the app's string work (libc's string routines under the executor) holds %.1f%% of the PHP workers' samples, want >= 30%%: %v", 100*share, profile.Top(n.PHPSelf, php, 10))
		}
		if n.PHPComponents[profile.CompOther] > php/10 {
			t.Errorf("other holds %d of %d PHP samples: %v", n.PHPComponents[profile.CompOther], php, n.PHPComponents)
		}
	}
	if res.PHP == nil || res.PHP.Samples == 0 || res.PHP.Inclusive["index.php"] == 0 {
		t.Fatalf("PHP profile: %+v (%s)", res.PHP, res.PHPUnavailable)
	}
	if want := map[bool]int{true: 2, false: 1}[native]; len(res.Overhead) != want {
		t.Errorf("overheads %+v, want %d", res.Overhead, want)
	}
	for _, o := range res.Overhead {
		if o.CPUPerRequestRatio <= 0 || o.Rounds != 1 {
			t.Errorf("overhead %+v", o)
		}
	}
	again, err := lab.Open(l.Name)
	if err != nil {
		t.Fatal(err)
	}
	if again.PHPProfiler != "" {
		t.Errorf("the PHP sampler is still on: %q", again.PHPProfiler)
	}
	ini, err := os.ReadFile(l.Dir + "/php/98-profiler.ini")
	if err != nil || strings.Contains(string(ini), "auto_prepend_file") {
		t.Errorf("98-profiler.ini after the profile: %q (%v)", ini, err)
	}
	// No perf outlives the profile.
	procs, _ := os.ReadDir("/proc")
	for _, e := range procs {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), "record") && strings.Contains(string(b), tmp) {
			t.Errorf("perf record still runs: pid %s: %q", e.Name(), b)
		}
	}
}
