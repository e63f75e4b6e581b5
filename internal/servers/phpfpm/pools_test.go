package phpfpm

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/model/knob"
)

func TestRenderPools(t *testing.T) {
	cfg, err := knob.Defaults().Apply([]string{"fpm.pools=3", "pm=static", "pm.max_children=7", "listen.backlog=128"})
	if err != nil {
		t.Fatal(err)
	}
	p := testPaths("/lab")
	p.Listens = []string{"/lab/run/a.sock", "/lab/run/b.sock", "/lab/run/c.sock"}
	out := RenderConf(cfg, p)
	for _, want := range []string{
		"[www]\nlisten = \"/lab/run/a.sock\"", "[www2]\nlisten = \"/lab/run/b.sock\"", "[www3]\nlisten = \"/lab/run/c.sock\"",
		"pm.max_children = 3\n", "pm.max_children = 2\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("php-fpm.conf lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "listen.backlog = 128"); n != 3 {
		t.Errorf("%d pools carry listen.backlog, want 3", n)
	}
	if n := strings.Count(out, "pm.status_path"); n != 3 {
		t.Errorf("%d pools have a status page, want 3", n)
	}
	p.Listens = p.Listens[:2]
	if out := RenderConf(cfg, p); !strings.Contains(out, "refused") || !strings.Contains(out, "fpm.pools=3 needs 3 addresses, got 2") {
		t.Errorf("too few addresses rendered:\n%s", out)
	}
}

// TestFPMRunsPools starts the real php-fpm with three pools: each listens
// on its own socket with its share of the workers.
func TestFPMRunsPools(t *testing.T) {
	if testing.Short() {
		t.Skip("starts php-fpm; skipped with -short")
	}
	bin, err := Find()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	for _, d := range []string{"run", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := knob.Defaults().Apply([]string{"fpm.pools=3", "pm=static", "pm.max_children=7"})
	if err != nil {
		t.Fatal(err)
	}
	p := testPaths(dir)
	p.Conf = filepath.Join(dir, "php-fpm.conf")
	for i := range 3 {
		p.Listens = append(p.Listens, filepath.Join(dir, "run", fmt.Sprintf("pool%d.sock", i)))
	}
	if err := os.WriteFile(p.Conf, []byte(RenderConf(cfg, p)), 0o644); err != nil {
		t.Fatal(err)
	}
	var root []string
	if os.Geteuid() == 0 {
		root = []string{"--allow-to-run-as-root"}
	}
	if out, err := exec.Command(bin.Path, append(bin.TestArgs(p.Conf), root...)...).CombinedOutput(); err != nil {
		t.Fatalf("php-fpm -t: %v\n%s", err, out)
	}
	cmd := exec.Command(bin.Path, append(bin.Args(p.Conf), root...)...)
	cmd.Env = Env(filepath.Join(dir, "php"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }()
	want := map[string]int{"www": 3, "www2": 2, "www3": 2}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := poolWorkers(cmd.Process.Pid)
		if fmt.Sprint(got) == fmt.Sprint(want) {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(p.Log)
			t.Fatalf("workers per pool %v, want %v; log:\n%s", got, want, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, s := range p.Listens {
		c, err := net.Dial("unix", s)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
}

// poolWorkers counts the children of master by their pool ("php-fpm: pool NAME").
func poolWorkers(master int) map[string]int {
	out := map[string]int{}
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range procs {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(master) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(st), "cmdline"))
		if name, ok := strings.CutPrefix(strings.TrimRight(string(cmdline), "\x00 "), "php-fpm: pool "); ok {
			out[strings.TrimSpace(name)]++
		}
	}
	return out
}
