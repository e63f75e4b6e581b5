package recommend

import (
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// TestSysctlFragmentGolden: with the host's kernel limits the
// recommendation includes the sysctl fragment: the settings a seed 003
// recommendation needs on a small host (somaxconn 128), and "nothing to
// change" on a host like this one (testdata/NAME/FILE; -update rewrites).
func TestSysctlFragmentGolden(t *testing.T) {
	small := &results.KernelLimits{Sysctl: map[string]string{"net.core.somaxconn": "128", "net.ipv4.tcp_max_syn_backlog": "256",
		"net.ipv4.tcp_syncookies": "1", "net.ipv4.ip_local_port_range": "32768 60999", "net.ipv4.tcp_tw_reuse": "2", "fs.file-max": "100000", "fs.nr_open": "1048576"}}
	here := &results.KernelLimits{Sysctl: map[string]string{"net.core.somaxconn": "4096", "net.ipv4.tcp_max_syn_backlog": "2048",
		"net.ipv4.tcp_syncookies": "1", "net.ipv4.ip_local_port_range": "32768 60999", "net.ipv4.tcp_tw_reuse": "2", "fs.file-max": "2466170", "fs.nr_open": "1048576"}}
	seed003 := config(t, "pm=static", "pm.max_children=16", "listen.backlog=2048", "nginx.listen_backlog=1024", "nginx.worker_connections=2064", "pm.max_requests=2000")
	for _, c := range []struct {
		name   string
		kernel *results.KernelLimits
		conns  int
		rec    knob.Config
		want   []string
	}{
		{"nginx-kernel-small", small, 1000, seed003, []string{"# phptune: was 128\nnet.core.somaxconn = 2048\n", "# phptune: was 256\nnet.ipv4.tcp_max_syn_backlog = 1024\n"}},
		{"nginx-kernel-enough", here, 1000, seed003, []string{"# Nothing to change"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := Files(knob.Defaults(), c.rec, Target{PHPVersion: "8.2", Kernel: c.kernel, Conns: c.conns})
			for _, w := range c.want {
				if !strings.Contains(files[SysctlFile], w) {
					t.Errorf("%s lacks %q:\n%s", SysctlFile, w, files[SysctlFile])
				}
			}
			checkGolden(t, c.name, files)
		})
	}
	if _, ok := Files(knob.Defaults(), knob.Defaults(), Target{PHPVersion: "8.2"})[SysctlFile]; ok {
		t.Error("a sysctl fragment without the host's limits")
	}
}
