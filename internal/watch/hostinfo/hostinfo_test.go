package hostinfo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestVersion(t *testing.T) {
	tests := []struct{ program, out, want string }{
		{"nginx", "nginx version: nginx/1.22.1\n", "1.22.1"},
		{"php", "PHP 8.2.36 (cli) (built: Nov 18 2026 20:02:04) (NTS)\nCopyright", "8.2.36"},
		{"php", "PHP 8.2.36 (fpm-fcgi) (built: Nov 18 2026)", "8.2.36"},
		{"mariadb", "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)", "10.11.19-MariaDB"},
		{"nginx", "command not found", ""},
		{"unknown", "x 1.2.3", ""},
	}
	for _, tc := range tests {
		if got := Version(tc.program, tc.out); got != tc.want {
			t.Errorf("Version(%s, %q) = %q, want %q", tc.program, tc.out, got, tc.want)
		}
	}
}

func TestProcParsers(t *testing.T) {
	if got := CPUModel([]byte("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nflags: x\n")); got != "AMD EPYC 7B13" {
		t.Errorf("CPUModel = %q", got)
	}
	if got := WordPressVersion([]byte("<?php\n$wp_version = '6.1.9';\n")); got != "6.1.9" {
		t.Errorf("WordPressVersion = %q", got)
	}
}

func FuzzParsers(f *testing.F) {
	f.Add([]byte("model name\t: AMD EPYC\nMemTotal: 100 kB\n$wp_version = '6.1';"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = CPUModel(b)
		_ = WordPressVersion(b)
		for p := range versionRE {
			_ = Version(p, string(b))
		}
	})
}

func TestCollect(t *testing.T) {
	env := Collect(context.Background())
	if env.Cores < 1 || env.MemoryB <= 0 || env.Kernel == "" {
		t.Fatalf("environment incomplete: %+v", env)
	}
	if env.Versions["phptune"] == "" {
		t.Error("no phptune version")
	}
	t.Logf("%+v", env)
}

// TestVersionCache: a cached version is reused while the binary's path,
// size and modification time stay the same, and asked again when they
// change (an upgraded package).
func TestVersionCache(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "php")
	write := func(version string, mtime time.Time) {
		if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'PHP "+version+" (cli)'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(bin, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write("8.2.10", t0)
	cache := filepath.Join(dir, "versions.json")
	ctx := context.Background()
	if v := loadVersionCache(cache).versionSaved(ctx, bin); v != "8.2.10" {
		t.Fatalf("first probe: %q", v)
	}
	write("8.2.99", t0) // same size and time: the cache answers
	if v := loadVersionCache(cache).versionSaved(ctx, bin); v != "8.2.10" {
		t.Errorf("cached probe: %q, want the cached 8.2.10", v)
	}
	write("8.2.99", t0.Add(time.Hour)) // upgraded
	if v := loadVersionCache(cache).versionSaved(ctx, bin); v != "8.2.99" {
		t.Errorf("after an upgrade: %q, want 8.2.99", v)
	}
	if v := loadVersionCache("").versionSaved(ctx, bin); v != "8.2.99" {
		t.Errorf("without a cache file: %q", v)
	}
}

func (vc *versionCache) versionSaved(ctx context.Context, bin string) string {
	v := vc.version(ctx, "php", bin, "-v")
	vc.save()
	return v
}
