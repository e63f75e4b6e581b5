package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/phptune/phptune/internal/servers/phpfpm"
)

// TestApplyKnobTheHostLacks: a recommendation holding the JIT's knobs is
// refused on a php-fpm older than PHP 8.0, naming each knob, the version
// it needs and the host's, before anything is read from the master or
// written. The host is a configuration on disk (nothing runs: the refusal
// comes first) and its version stands in for an old php-fpm.
func TestApplyKnobTheHostLacks(t *testing.T) {
	if _, err := phpfpm.Find(); err != nil {
		t.Skip(err)
	}
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	defer func(f func(*phpfpm.Binary) string) { hostPHPVersion = f }(hostPHPVersion)
	hostPHPVersion = func(*phpfpm.Binary) string { return "7.4" }
	root := t.TempDir()
	etc := filepath.Join(root, "etc", "php", "7.4", "fpm")
	os.MkdirAll(filepath.Join(etc, "pool.d"), 0o755)
	conf := filepath.Join(etc, "php-fpm.conf")
	os.WriteFile(conf, []byte("[global]\ninclude="+etc+"/pool.d/*.conf\n"), 0o644)
	os.WriteFile(filepath.Join(etc, "pool.d", "www.conf"), []byte("[www]\nlisten = "+root+"/php.sock\npm = dynamic\npm.max_children = 5\n"), 0o644)
	knobs := filepath.Join(t.TempDir(), "jit.knobs")
	os.WriteFile(knobs, []byte("opcache.jit_buffer_size=64M\nopcache.jit=function\npm.max_children=6\n"), 0o644)
	host := []string{"--root", root, "--fpm-config", conf}
	checkUsageErrors(t, []usageCase{
		{append([]string{"apply", "--knobs", knobs, "--yes"}, host...),
			"opcache.jit=function: opcache.jit needs PHP 8.0 or newer; this host runs PHP 7.4; opcache.jit_buffer_size=64M: opcache.jit_buffer_size needs PHP 8.0 or newer",
			"Remove opcache.jit, opcache.jit_buffer_size from the knob file"},
		{append([]string{"apply", "--knobs", knobs, "--dry-run"}, host...), "this host's php-fpm 7.4 does not have", "Remove opcache.jit"},
	})
	if entries, _ := os.ReadDir(filepath.Join(etc, "pool.d")); len(entries) != 1 {
		t.Errorf("a refused apply wrote into pool.d: %v", entries)
	}
}
