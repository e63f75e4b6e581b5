// Package unitbuild is for tests that run labs with server=unit: it builds
// NGINX Unit from the source release kept beside the repository. It is
// apart from labtest because it imports phpbuild, which imports labstack:
// labstack's own tests could not use labtest otherwise.
package unitbuild

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/build/phpbuild"
)

// UnitSource is NGINX Unit's source release kept beside the repository
// for tests and benchmarks, in ../shared/vendor (Debian does not package
// Unit; the tool never downloads it). $PHPTUNE_UNIT_SOURCE overrides it.
func UnitSource() string {
	if s := os.Getenv("PHPTUNE_UNIT_SOURCE"); s != "" {
		return s
	}
	_, here, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(here), "..", "..", "..", "..", "shared", "vendor", "unit-1.35.0.tar.gz")
	if _, err := os.Stat(p); err != nil {
		p = "/work/shared/vendor/unit-1.35.0.tar.gz" // a clone elsewhere on this machine (CI)
	}
	return p
}

// Unit builds NGINX Unit from the vendored source into the test's home
// (call labtest.Home first) so that labs with server=unit find it: about 10-30 s.
// Builds run one at a time on a machine; it waits for another test's.
// Without the source or root, the test is skipped saying why.
func Unit(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("building NGINX Unit needs root (it builds as the unprivileged build account)")
	}
	src := UnitSource()
	if _, err := os.Stat(src); err != nil {
		t.Skipf("no Unit source at %s: %v", src, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for {
		_, err := phpbuild.BuildUnit(ctx, phpbuild.UnitOptions{Source: src})
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "another phptune build is running") || ctx.Err() != nil {
			t.Fatalf("building Unit: %v", err)
		}
		time.Sleep(2 * time.Second)
	}
}
